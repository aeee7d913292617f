"""How fast ``ffl lsp`` answers on a workspace the size of the original's largest example folder.

Generates 60 files (~10,000 lines: namespaces that ``use`` each other, event
facets, schemas, workflows with foreach, when and catch), starts ``ffl lsp``
as an editor would (stdio), opens one file, then times from the moment a
change is sent to the moment its diagnostics arrive:

- a one-character edit inside a workflow's body (the common case: only that
  file is checked again), alternately making and fixing an error;
- a one-character edit of a facet's parameter other files call (its callers
  are checked again too);
- a one-character edit of a facet every file calls (all of them are checked
  again: about the cost of a full check);

and completion requests (``step.`` returns; names visible in a body). Prints
the medians; targets: diagnostics 200 ms, completion 100 ms. Figures only, no asserts.

    python benchmarks/lsp_bench.py [--files 60] [--repeat 21]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

_COMMON = """\
/** Shared by every module. */
namespace app.common {
    event facet Log(message: String) => (ok: Boolean)
    facet Tagged(label: String = "none")
    schema Stamp { at: String, by: String }
}
"""

_MODULE = """\
/** Module {i}: fetches, scores and stores records. */
namespace app.m{i} {{
    use app.common
    use app.m{prev}
    /** Fetch the records of a source. */
    event facet Fetch{i}(source: String, limit: Long = 100) => (items: Json, count: Long)
    /** Score one record. */
    event facet Score{i}(record: Record{i}, weight: Double = 1.0) => (score: Double)
    event facet Store{i}(key: String, value: Json) => (stored: Boolean, stamp: Stamp)
    schema Record{i} {{ name: String, size: Long, tags: [String] }}
{workflows}}}
"""

_WORKFLOW = """\
    /** Workflow {j} of module {i}. */
    workflow Run{i}x{j}(source: String, keys: Json = ["a", "b"], threshold: Double = 0.5)
            => (total: Long, best: Double, label: String) andThen {{
        fetched = Fetch{i}(source = $.source, limit = 10 * {j} + 1)
        previous = Fetch{prev}(source = $.source ++ "-prev")
        record = Record{i}(name = "r{j}", size = fetched.count + previous.count, tags = ["x", "y"])
        scored = Score{i}(record = record, weight = $.threshold * 2.0) with Tagged(label = "run{j}")
        stored = Store{i}(key = "k{j}", value = #{{"score": scored.score, "n": fetched.count}})
        logged = Log(message = "stored " ++ stored.stamp.at)
        yield Run{i}x{j}(total = fetched.count + previous.count, best = scored.score, label = record.name)
    }} andThen foreach key in $.keys {{
        each = Fetch{i}(source = key) catch {{
            failed = Log(message = each.error)
        }}
        yield Run{i}x{j}(label = "each " ++ key)
    }} andThen when {{
        case fetched.count > 100 && scored.score >= $.threshold => {{
            big = Store{i}(key = "big{j}", value = fetched.items)
        }}
        case _ => {{
            small = Log(message = "small batch {j}")
        }}
    }}
"""


def generate(folder: Path, files: int, workflows: int = 7) -> int:
    """Write the workspace; returns its number of lines."""
    (folder / "common.ffl").write_text(_COMMON)
    lines = _COMMON.count("\n")
    for i in range(files - 1):
        body = "".join(_WORKFLOW.format(i=i, j=j, prev=(i - 1) % (files - 1)) for j in range(workflows))
        text = _MODULE.format(i=i, prev=(i - 1) % (files - 1), workflows=body)
        (folder / f"m{i:02}.ffl").write_text(text)
        lines += text.count("\n")
    return lines


class Bench:
    def __init__(self, client: LanguageClient):
        self.client = client
        self.arrived: dict[str, asyncio.Event] = {}
        self.version = 1

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            self.arrived.setdefault(params.uri, asyncio.Event()).set()

    async def diagnostics_after(self, path: Path, send) -> float:
        """Seconds from sending a change (``send()``) to the arrival of ``path``'s diagnostics."""
        event = self.arrived.setdefault(path.as_uri(), asyncio.Event())
        event.clear()
        start = time.perf_counter()
        send()
        await event.wait()
        return time.perf_counter() - start

    def change(self, path: Path, line: int, col: int, old: str, new: str) -> None:
        self.version += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=self.version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(line, col), types.Position(line, col + len(old))), text=new)]))

    async def completion(self, path: Path, line: int, col: int) -> tuple[float, int]:
        start = time.perf_counter()
        found = await self.client.text_document_completion_async(types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()), position=types.Position(line, col)))
        return time.perf_counter() - start, len(found.items) if found else 0


def _find(text: str, needle: str) -> tuple[int, int]:
    at = text.index(needle)
    return text.count("\n", 0, at), at - (text.rfind("\n", 0, at) + 1)


def _median_ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:7.1f} ms"


async def run(files: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="ffl-lsp-bench-") as tmp:
        folder = Path(tmp)
        lines = generate(folder, files)
        target = folder / "m30.ffl"
        text = target.read_text()
        client = LanguageClient("lsp-bench", "v1")
        bench = Bench(client)
        await client.start_io(sys.executable, "-m", "interpreter", "lsp")
        await client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name="bench")]))
        client.initialized(types.InitializedParams())
        opened = await bench.diagnostics_after(target, lambda: client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(target.as_uri(), "ffl", 1, text))))
        print(f"workspace: {files} files, {lines:,} lines; first open (checks the whole program): "
              f"{opened * 1000:.0f} ms")

        body_line, body_col = _find(text, "Fetch30(source = $.source")  # a call in a body: one char of its name
        body_col += len("Fetch3")
        body = []
        for i in range(repeat):
            old, new = ("0", "9") if i % 2 == 0 else ("9", "0")
            body.append(await bench.diagnostics_after(
                target, lambda old=old, new=new: bench.change(target, body_line, body_col, old, new)))
        sig_line, sig_col = _find(text, "limit: Long = 100")
        signature = []
        for i in range(repeat):
            old, new = ("t", "T") if i % 2 == 0 else ("T", "t")
            signature.append(await bench.diagnostics_after(
                target, lambda old=old, new=new: bench.change(target, sig_line, sig_col + 4, old, new)))

        common = folder / "common.ffl"
        common_text = common.read_text()
        await bench.diagnostics_after(common, lambda: client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(common.as_uri(), "ffl", 1, common_text))))
        log_line, log_col = _find(common_text, "message: String")
        everywhere = []
        for i in range(max(3, repeat // 4)):
            old, new = ("e", "E") if i % 2 == 0 else ("E", "e")
            everywhere.append(await bench.diagnostics_after(
                common, lambda old=old, new=new: bench.change(common, log_line, log_col + 1, old, new)))

        member_line, member_col = _find(text, "scored.score, \"n\"")
        anywhere_line, anywhere_col = _find(text, "logged = Log")
        member, anywhere = [], []
        for _ in range(repeat):
            seconds, count = await bench.completion(target, member_line, member_col + len("scored."))
            member.append(seconds)
            seconds, count_anywhere = await bench.completion(target, anywhere_line, anywhere_col + 8)
            anywhere.append(seconds)

        print(f"diagnostics after a one-character edit in a body:       median {_median_ms(body)}  (target 200 ms)")
        print(f"diagnostics after a one-character edit of a signature:  median {_median_ms(signature)}  "
              "(its callers are checked too)")
        print(f"diagnostics after a one-character edit of Log:          median {_median_ms(everywhere)}  "
              "(every file calls it: all are checked again)")
        print(f"completion of a step's returns ({count} items):            median {_median_ms(member)}  "
              "(target 100 ms)")
        print(f"completion of names visible in a body ({count_anywhere} items):   median {_median_ms(anywhere)}  "
              "(target 100 ms)")
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=60, help="files in the generated workspace")
    parser.add_argument("--repeat", type=int, default=21, help="measurements of each kind (the median is shown)")
    args = parser.parse_args()
    asyncio.run(run(args.files, args.repeat))


if __name__ == "__main__":
    main()
