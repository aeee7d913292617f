"""Every conformance case of ../shared/conformance/valid, run on the real dev server."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from .harness import CONFORMANCE, run_ffl

VALID = CONFORMANCE / "valid"


def _cases() -> list[tuple[str, int, dict]]:
    found = []
    for folder in sorted(p for p in VALID.iterdir() if p.is_dir()):
        for index, case in enumerate(json.loads((folder / "cases.json").read_text())):
            found.append((folder.name, index, case))
    return found


def _load_handlers(folder: Path):
    spec = importlib.util.spec_from_file_location(f"conformance_{folder.name}_handlers", folder / "handlers.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module.register_handlers


def _present(values: dict) -> dict:
    """Null and absent returns count as the same (conformance README)."""
    return {k: v for k, v in values.items() if v is not None}


@pytest.mark.parametrize("folder,index,case", _cases(), ids=[f"{c[0]}-{c[1]}" for c in _cases()])
async def test_conformance_case(temporal_client, tmp_path, folder, index, case):
    directory = VALID / folder
    sources = {p.name: p.read_text() for p in sorted(directory.glob("*.ffl"))}
    run = await run_ffl(temporal_client, sources, case["workflow"], case.get("inputs") or {},
                        handlers=_load_handlers(directory), tmp_path=tmp_path)
    expect = case["expect"]
    if "outputs" in expect:
        assert run.error is None, run.message
        assert _present(run.result) == _present(expect["outputs"])
    else:
        assert run.error is not None, f"expected a failure, got {run.result}"
        for text in expect["error_contains"]:
            assert text in run.message
