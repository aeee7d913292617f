"""Layer 1: FFL text → syntax tree → validated, resolved Program (pure: no Temporal, no MongoDB).

Public facade: ``check_sources``/``check_files`` return every diagnostic
(errors and warnings); ``compile_sources``/``compile_files`` return a Program or
raise CompileError; ``compile_result``/``compile_files_result`` return a
CompileResult carrying the program and its warnings.

Choices the language makes (docs/language.md states them; kept here, next to the code):
- Name lookup: a dotted name is a qualified name (else relative to the current
  namespace); a short name is looked up in the current namespace first (it
  shadows), then in the ``uses`` of the namespace block it is written in and
  at top level; found in two of those, it is ambiguous. Found in none, a name
  declared in exactly one namespace of the program resolves to it with a
  warning suggesting the ``use`` line (the original runtime's last resolution
  step); declared in several, it is an error listing them.
- A mixin naming a facet declared nowhere is dropped from the compiled program
  with a warning (``with Timeout(minutes = 120)`` in the original's programs).
- Inside ``foreach v in ...`` the bare name ``v`` (``v.email``) compiles to
  ``$.v``; a step of that name visible there is an error naming both.
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
- An error about an unknown name ends with ``(did you mean ...?)`` naming up
  to three names valid at that place and spelt alike (``suggest.py``): never a
  step defined later or in a sibling block, a declaration by its short name
  only where that is visible.
- Sources are compiled in path order, so the file order given never changes
  the program or its content hash.
"""

from .compile import (
    CompileResult,
    check_files,
    check_sources,
    compile_files,
    compile_files_result,
    compile_result,
    compile_sources,
)
from .diagnostics import CompileError, Diagnostic, FFLSyntaxError
from .parser import parse_source

__all__ = [
    "CompileError",
    "CompileResult",
    "Diagnostic",
    "FFLSyntaxError",
    "check_files",
    "check_sources",
    "compile_files",
    "compile_files_result",
    "compile_result",
    "compile_sources",
    "parse_source",
]
