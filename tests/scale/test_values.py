"""Large values travel by reference: stored once, content-addressed, resolved for handlers and expressions."""

from __future__ import annotations

import re

from temporalio.worker import Replayer

from interpreter.activities.value_codec import REFERENCE_ENCODING, ClaimCheckCodec, value_converter
from interpreter.activities.value_store import DirectoryValueStore
from interpreter.program.config import RuntimeConfig
from interpreter.workflows import FFLWorkflow

from ..runtime.harness import run_ffl

BIG = """namespace big {
    event facet Make(n: Long) => (blob: String)
    event facet Size(text: String) => (n: Long)
    workflow Run(n: Long) => (a: Long, b: Long, c: Long) andThen {
        m = Make(n = $.n)
        one = Size(text = m.blob)
        two = Size(text = m.blob)
        three = Size(text = m.blob ++ "!")
        yield Run(a = one.n, b = two.n, c = three.n)
    }
}
"""


_REFERENCE = re.compile(rb'"sha256":"([0-9a-f]{64})"')


def make(payload: dict) -> dict:
    return {"blob": "x" * payload["n"]}


def size(payload: dict) -> dict:
    return {"n": len(payload["text"])}


def references(history) -> list[str]:
    """sha256 of every reference payload in the history's events, in order (the history as the server holds it)."""
    return [match.decode() for event in history.events
            for match in _REFERENCE.findall(event.SerializeToString())]


def stored(store: DirectoryValueStore) -> set[str]:
    return {path.name for path in store.root.glob("*/*")}


async def test_a_large_value_goes_by_reference_through_handlers_and_expressions_and_is_written_once(
        temporal_client, tmp_path, value_store):
    n = 2_500_000  # over Temporal's 2 MB payload limit, so only a reference can carry it
    before = stored(value_store)
    run = await run_ffl(temporal_client, BIG, "big.Run", {"n": n}, handlers={"big.Make": make, "big.Size": size},
                        tmp_path=tmp_path, timeout=60)
    assert run.error is None, run.message
    assert run.result == {"a": n, "b": n, "c": n + 1}
    history = await run.handle.fetch_history()  # as the server holds it: payloads still encoded
    assert any(REFERENCE_ENCODING in event.SerializeToString() for event in history.events)
    refs = references(history)
    # the blob (Make's result), Size's argument {"text": blob} twice under one digest, and the "!" variant
    assert len(refs) >= 3 and len(set(refs)) < len(refs)
    assert all(event.ByteSize() < 64 * 1024 for event in history.events)
    new = stored(value_store) - before
    assert new == set(refs)  # one blob per distinct value, however often it crossed the history
    codec = temporal_client.data_converter.payload_codec
    assert isinstance(codec, ClaimCheckCodec)
    writes = codec.writes
    # a replay reads the values back and writes none of them again
    replayer = Replayer(workflows=[FFLWorkflow], data_converter=value_converter(DirectoryValueStore(value_store.root)))
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None
    assert stored(value_store) - before == new
    assert codec.writes == writes


SIZED = """namespace sized {
    event facet Size(text: String) => (n: Long)
    workflow Run(text: String) => (n: Long) andThen {
        s = Size(text = $.text)
        yield Run(n = s.n)
    }
}
"""


async def test_an_input_over_the_value_limit_fails_the_run_before_any_step(temporal_client, tmp_path):
    calls = []

    def counted(payload: dict) -> dict:
        calls.append(1)
        return size(payload)

    run = await run_ffl(temporal_client, SIZED, "sized.Run", {"text": "t" * 4096}, handlers={"sized.Size": counted},
                        tmp_path=tmp_path, config=RuntimeConfig(max_value_bytes=2048))
    assert run.error is not None and run.error.cause.type == "PayloadTooLarge", run.message
    assert "its parameters are 4107 bytes of JSON; a value may have at most 2048 bytes" in run.message
    assert calls == []
