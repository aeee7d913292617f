"""Importing handler code the way its authors wrote it: modules, files, directories and packages.

- A module or package name is imported like ``python -m`` would (the working
  directory is searchable).
- A package directory (it has ``__init__.py``) is imported under its own
  name, its parent appended to ``sys.path``, so its modules can import each
  other as ``handlers.x.y``, as the original runtime's example packages do.
- A ``.py`` file inside a package is imported with its package context
  (``handlers/x/y.py`` becomes ``handlers.x.y``); a file outside any package
  under a name unique to its path, so two ``handlers.py`` never clash.
- A directory of plain ``.py`` files gives one module per file.

Paths are appended to ``sys.path`` (never put first), so a handler package
never hides this project's modules or an installed library — the original
project's own modules keep importing from where they are installed.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from urllib.parse import unquote, urlparse


class HandlerLoadError(RuntimeError):
    """A handler spec could not be found or imported."""


def _append_path(folder: Path) -> None:
    entry = str(folder)
    if entry not in sys.path:
        sys.path.append(entry)


def package_root(path: Path) -> Path | None:
    """The outermost package directory holding ``path`` (a file or a package directory), if any."""
    folder = path if path.is_dir() else path.parent
    root = None
    while (folder / "__init__.py").is_file() and folder.name.isidentifier():
        root = folder
        folder = folder.parent
    return root


def _dotted(root: Path, path: Path) -> str:
    parts = [root.name, *path.relative_to(root).parts]
    if parts[-1] == "__init__.py":
        parts.pop()
    elif parts[-1].endswith(".py"):
        parts[-1] = parts[-1][:-3]
    return ".".join(parts)


def _located_at(module: ModuleType, root: Path) -> bool:
    locations = list(getattr(module, "__path__", None) or [])
    if not locations and getattr(module, "__file__", None):
        locations = [str(Path(module.__file__).parent)]
    return any(Path(p).resolve() == root for p in locations)


def _import_root_package(root: Path) -> None:
    """Import the package ``root`` under its own name (unless that package is already imported)."""
    name = root.name
    existing = sys.modules.get(name)
    if existing is not None:
        if not _located_at(existing, root):
            where = getattr(existing, "__file__", None) or list(getattr(existing, "__path__", []) or [])
            raise HandlerLoadError(
                f"cannot import package '{name}' from {root}: another module named '{name}' is already "
                f"imported (from {where}); one process holds one package of a name"
            )
        return
    _append_path(root.parent)
    spec = importlib.util.spec_from_file_location(name, root / "__init__.py", submodule_search_locations=[str(root)])
    if spec is None or spec.loader is None:
        raise HandlerLoadError(f"cannot import package {root}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(name, None)
        raise HandlerLoadError(f"importing handler package {root} failed: {type(exc).__name__}: {exc}") from exc


def _import_in_package(root: Path, path: Path) -> ModuleType:
    _import_root_package(root)
    dotted = _dotted(root, path)
    try:
        return importlib.import_module(dotted)
    except HandlerLoadError:
        raise
    except BaseException as exc:
        raise HandlerLoadError(f"importing handlers {dotted} ({path}) failed: {type(exc).__name__}: {exc}") from exc


def _import_loose_file(path: Path) -> ModuleType:
    """A .py file outside any package, under a name unique to its path; its folder becomes searchable."""
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    mod_name = f"ffl_handlers_{path.stem}_{digest}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise HandlerLoadError(f"cannot import handlers from {path}")
    module = importlib.util.module_from_spec(spec)
    _append_path(path.parent)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(mod_name, None)
        raise HandlerLoadError(f"importing handlers {path} failed: {type(exc).__name__}: {exc}") from exc
    return module


def import_path(path: Path) -> ModuleType:
    """Import a ``.py`` file or a package directory, with its package context when it has one."""
    path = path.resolve()
    loaded = _module_from_file(path)
    if loaded is not None:
        return loaded
    root = package_root(path)
    if root is not None:
        return _import_in_package(root, path / "__init__.py" if path.is_dir() else path)
    return _import_loose_file(path)


def _module_from_file(path: Path) -> ModuleType | None:
    """A module already imported from ``path`` (a file registering itself by ``file://`` is one)."""
    target = path / "__init__.py" if path.is_dir() else path
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        # Compare base names first: resolving every loaded module's path would cost a syscall each.
        if isinstance(file, str) and os.path.basename(file) == target.name and Path(file).resolve() == target:
            return module
    return None


def import_name(name: str) -> ModuleType:
    """Import a module by name; like ``python -m``, the working directory is searched too."""
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise HandlerLoadError(f"cannot import handler module {name!r}: {exc}") from exc
    except BaseException as exc:
        raise HandlerLoadError(f"importing handler module {name!r} failed: {type(exc).__name__}: {exc}") from exc


def import_spec(spec: str) -> list[ModuleType]:
    """The modules a ``--handlers`` spec names: a module name, a ``.py`` file, or a (package) directory."""
    path = Path(spec)
    if path.is_dir():
        if (path / "__init__.py").is_file():
            return [import_path(path)]
        files = sorted(p for p in path.glob("*.py") if not p.name.startswith("_"))
        if not files:
            packages = sorted(p.name for p in path.iterdir() if (p / "__init__.py").is_file())
            hint = f" (it holds the package{'s' if len(packages) > 1 else ''} {', '.join(packages)}: pass " \
                   f"{'one' if len(packages) > 1 else 'it'} instead)" if packages else ""  # fmt: skip
            raise HandlerLoadError(f"no .py files in handler directory {spec}{hint}")
        return [import_path(p) for p in files]
    if path.is_file():
        return [import_path(path)]
    if spec.endswith(".py") or "/" in spec or "\\" in spec:
        raise HandlerLoadError(f"handler file or directory not found: {spec}")
    return [import_name(spec)]


def import_module_uri(uri: str) -> ModuleType:
    """The module a registration's ``module_uri`` names: a dotted module path or a ``file://`` path."""
    if uri.startswith("file:"):
        parsed = urlparse(uri)
        path = Path(unquote(parsed.netloc + parsed.path))
        if not path.is_file():
            raise HandlerLoadError(f"module_uri {uri}: no such file")
        return import_path(path)
    return import_name(uri)
