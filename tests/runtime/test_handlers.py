"""Handler registry and loading: both registration conventions, files, directories, packages."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from interpreter.activities.handlers import (
    HandlerLoadError,
    HandlerRegistry,
    load_handlers,
    queue_for,
)
from tests import conformance_suite as suite

FIXTURES = Path(__file__).parent / "handler_fixtures"


def test_register_lookup_names_and_queues():
    registry = HandlerRegistry()
    registry.register("osm.cache.Download", lambda p: {})
    registry.register("Plain", lambda p: {})
    assert registry.lookup("osm.cache.Download") is not None
    assert registry.lookup("osm.Missing") is None
    assert registry.names() == ["Plain", "osm.cache.Download"]
    assert registry.names(queue="osm") == ["osm.cache.Download"]
    assert registry.queues() == ["default", "osm"]
    with pytest.raises(TypeError):
        registry.register("x.Y", "not callable")


def test_queue_for_uses_first_segment_and_overrides():
    assert queue_for("osm.cache.Download") == "osm"
    assert queue_for("Download") == "default"
    overrides = {"osm.cache": "cache-q", "osm.cache.Special": "special"}
    assert queue_for("osm.cache.Download", overrides) == "cache-q"
    assert queue_for("osm.cache.Special", overrides) == "special"
    assert queue_for("osm.Other", overrides) == "osm"


def test_load_decorated_file():
    registry = load_handlers(str(FIXTURES / "decorated.py"))
    assert registry.names() == ["Top", "deco.Double"]
    assert registry.lookup("deco.Double")({"n": 4}) == {"value": 8}


def test_load_register_handlers_file_and_directory():
    registry = load_handlers(str(FIXTURES / "convention.py"))
    assert registry.names() == ["conv.Shout"]
    assert registry.lookup("conv.Shout")({"text": "hi"}) == {"text": "HI"}
    both = load_handlers(str(FIXTURES))
    assert both.names() == ["Top", "conv.Shout", "deco.Double"]


def test_load_package_by_name_collects_submodule_handlers(monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURES))
    try:
        registry = load_handlers(["pkg_handlers"])
        assert registry.names() == ["pkg.Echo"]
        # Loading again (module already imported) still finds the decorated handlers.
        assert load_handlers("pkg_handlers").names() == ["pkg.Echo"]
    finally:
        sys.modules.pop("pkg_handlers", None)
        sys.modules.pop("pkg_handlers.sub", None)


def test_conformance_handlers_load():
    spec = suite.folder("dataflow") / "handlers.py"
    registry = load_handlers(str(spec))
    assert registry.names() == ["calc.Add", "calc.Label", "calc.Mul"]


def test_load_errors_are_clear(tmp_path):
    with pytest.raises(HandlerLoadError, match="not found"):
        load_handlers(str(tmp_path / "missing.py"))
    with pytest.raises(HandlerLoadError, match="cannot import"):
        load_handlers("no_such_module_for_ffl")
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    with pytest.raises(HandlerLoadError, match="registers no handlers"):
        load_handlers(str(empty))
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(HandlerLoadError, match="boom"):
        load_handlers(str(broken))


def test_module_name_resolves_against_working_directory(tmp_path, monkeypatch):
    (tmp_path / "cwd_handlers_mod.py").write_text(
        "def register_handlers(registry):\n    registry.register('cwd.F', lambda p: {})\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    try:
        assert load_handlers("cwd_handlers_mod").names() == ["cwd.F"]
    finally:
        sys.modules.pop("cwd_handlers_mod", None)
