"""Layer rules of the architecture, enforced: each layer imports with the layers above it blocked.

Layers, imports pointing only down: 1 compiler, 2 program (model, serializer,
evaluator), 3 semantics (the language's interpreter and its effects interface),
4 workflows, 5 activities, 6 entry points (cli, local, testing, worker, the
language server). The pure layers (compiler, program, semantics) and the
deterministic workflows must not reach MongoDB; the pure layers must not reach
Temporal either, so the semantics run with temporalio made unimportable. The
language server reads programs only: it reaches neither Temporal, MongoDB nor
the layers that run programs. Each check runs in a fresh interpreter that
imports every module of the package.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

ENTRY = ["interpreter.cli", "interpreter.local", "interpreter.testing", "interpreter.lsp", "interpreter.operations",
         "interpreter.compatibility", "worker"]

RULES = {
    "interpreter.program": ["interpreter.compiler", "interpreter.semantics", "interpreter.workflows",
                            "interpreter.activities",
                            *ENTRY, "temporalio", "pymongo", "lark"],
    "interpreter.compiler": ["interpreter.semantics", "interpreter.workflows", "interpreter.activities", *ENTRY,
                             "temporalio", "pymongo"],
    "interpreter.semantics": ["interpreter.compiler", "interpreter.workflows", "interpreter.activities", *ENTRY,
                              "temporalio", "pymongo"],
    "interpreter.workflows": ["interpreter.activities", *ENTRY, "pymongo"],
    "interpreter.activities": ENTRY,
    "interpreter.lsp": ["interpreter.semantics", "interpreter.workflows", "interpreter.activities", "interpreter.cli",
                        "interpreter.local", "interpreter.testing",
                        "worker", "temporalio", "pymongo"],
}

PROBE = textwrap.dedent("""
    import importlib, pkgutil, sys
    layer, blocked = sys.argv[1], sys.argv[2].split(",")

    class Blocker:
        def find_spec(self, name, path=None, target=None):
            if any(name == b or name.startswith(b + ".") for b in blocked):
                raise ImportError(f"layer violation: {name} imported by {layer}")
            return None

    sys.meta_path.insert(0, Blocker())
    package = importlib.import_module(layer)
    names = [layer]
    for info in pkgutil.walk_packages(package.__path__, layer + "."):
        importlib.import_module(info.name)
        names.append(info.name)
    print(" ".join(names))
""")


def probe(layer: str, blocked: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROBE, layer, ",".join(blocked)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("layer", sorted(RULES))
def test_layer_imports_nothing_above_it(layer: str):
    done = probe(layer, RULES[layer])
    assert done.returncode == 0, done.stderr[-2000:]
    assert layer in done.stdout.split()


def test_probe_detects_a_violation():
    # the command line imports the compiler, so blocking the compiler must make it fail
    done = probe("interpreter.cli", ["interpreter.compiler"])
    assert done.returncode != 0
    assert "layer violation: interpreter.compiler" in done.stderr
