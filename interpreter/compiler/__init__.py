"""Layer 1: FFL text → syntax tree → validated, resolved Program (pure: no Temporal, no MongoDB).

Public facade: ``check_sources``/``check_files`` return every diagnostic;
``compile_sources``/``compile_files`` return a Program or raise CompileError.

Choices where the language contract is silent (kept here, next to the code):
- Name lookup: a dotted name is a qualified name (else relative to the current
  namespace); a short name is looked up in the current namespace first (it
  shadows), then in the ``uses`` of the namespace block it is written in and
  at top level; found in two of those, it is ambiguous.
- ``uses`` of a prefix of existing namespaces (``uses osm`` with ``osm.cache``)
  is accepted.
- A call must pass every parameter without a default unless a call-site mixin
  without ``as`` (its arguments or defaults) or an ``implicit`` of the facet
  gives it; calls may also pass parameters of the facet's signature mixins.
- A step has ``error``/``error_type`` when it or the called facet has a catch;
  a facet with neither body, script nor prompt exposes its parameters; a
  signature mixin's parameters and returns are readable too; keys written by
  ``andThen script`` blocks (``result["k"] = ...``) become readable returns.
- Inside a step's tail or catch, yields may target any enclosing step's facet.
- ``$.`` names of a body with a pre-script that uses ``result`` in any way
  other than ``result["k"] = ...`` are not checked (they cannot be told).
- Sources are compiled in path order, so the file order given never changes
  the program or its content hash.
"""

from .compile import check_files, check_sources, compile_files, compile_sources
from .diagnostics import CompileError, Diagnostic, FFLSyntaxError
from .parser import parse_source

__all__ = [
    "CompileError",
    "Diagnostic",
    "FFLSyntaxError",
    "check_files",
    "check_sources",
    "compile_files",
    "compile_sources",
    "parse_source",
]
