"""FFL source text -> SourceFile (the AST of interpreter/program/model.py).

``parse_source`` is the only entry point. It raises FFLSyntaxError for every
kind of bad input and nothing else: Lark's exceptions, numeric overflows and
even internal failures become diagnostics with ``file:line:col``. After an
error it blanks out the broken declaration and parses again, so one run
reports the first error of each broken declaration (up to MAX_ERRORS).

Choices of the syntax (docs/language.md states them):
- reserved words are never names, even where the grammar could tell them apart;
- ``;`` and newlines are interchangeable and ignorable anywhere;
- calls and yields need parentheses (``F()``); mixins may omit them (``with M``);
- ``case _`` is the default case; ``-`` before a number literal folds into it;
- strings take JSON escapes plus ``\\'``; identifiers are ASCII;
- ``uses`` belongs inside a namespace (the AST has nowhere else to keep it);
- brackets nest at most 32 deep and expressions at most 64 levels, which keeps
  compiled programs inside pydantic's serialisation depth limit.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from lark import Lark, Token, UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr

from ..program.gcpause import collector_paused
from ..program.model import SourceFile
from .diagnostics import Diagnostic, FFLSyntaxError
from .parse_build import STATE, Builder, BuildError, ParseState
from .parse_errors import Terminals, unexpected_char_message, unexpected_token_message
from .parse_prescan import Prescan, PrescanError, prescan

__all__ = ["parse_source"]


@cache
def _parser() -> tuple[Lark, Terminals]:
    """The LALR parser, built once per process (grammar analysis takes ~0.1 s)."""
    grammar = resources.files("interpreter.compiler").joinpath("grammar.lark").read_text(encoding="utf-8")
    keywords: dict[str, str] = {}

    def reserve(token: Token) -> Token:
        # The contextual lexer only knows the keywords valid at each point; elsewhere a
        # keyword would lex as a name. Reserved words are never names in FFL.
        kind = keywords.get(token.value)
        return Token.new_borrow_pos(kind, token.value, token) if kind else token

    lark = Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        transformer=Builder(),
        maybe_placeholders=False,
        lexer_callbacks={"IDENT": reserve},
    )
    keywords.update(
        (t.pattern.value, t.name)
        for t in lark.terminals
        if isinstance(t.pattern, PatternStr) and t.pattern.value.isidentifier()
    )
    return lark, Terminals(lark.terminals)


def parse_source(text: str, path: str = "<string>") -> SourceFile:
    """Parse one FFL file; raise FFLSyntaxError (with file:line:col) on any bad input."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return _parse(str(text).replace("\r\n", "\n"), path)
    except FFLSyntaxError:
        raise
    except UnicodeError as exc:
        raise FFLSyntaxError([Diagnostic(path, 1, 1, f"source is not valid UTF-8 text: {exc}")]) from None
    except Exception as exc:  # wrap everything: callers rely on FFLSyntaxError only
        message = f"internal parser error ({type(exc).__name__}: {exc})"
        raise FFLSyntaxError([Diagnostic(path, 1, 1, message)]) from None


def _parse(text: str, path: str) -> SourceFile:
    bad = _first_unencodable(text)
    if bad >= 0:
        raise _error(text, path, bad, f"invalid character U+{ord(text[bad]):04X} (unpaired surrogate)")
    try:
        scan = prescan(text)
    except PrescanError as exc:
        raise _error(text, path, exc.offset, exc.message) from None
    errors: list[Diagnostic] = []
    source = scan.text
    while True:
        try:
            result = _parse_prepared(source, text, path, scan)
        except _Failure as failure:
            errors.append(failure.diagnostic)
            source = _skip_declaration(source, text, scan, failure.diagnostic) if len(errors) < MAX_ERRORS else None
            if source is None:
                raise FFLSyntaxError(errors) from None
            continue
        if errors:
            raise FFLSyntaxError(errors)
        return result


MAX_ERRORS = 10
"""Most syntax errors reported for one file (each one costs a re-parse)."""


class _Failure(Exception):
    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _parse_prepared(source: str, text: str, path: str, scan: Prescan) -> SourceFile:
    """One Lark parse of the prescanned ``source``; the first error becomes a _Failure."""
    lark, terminals = _parser()
    token = STATE.set(ParseState(path=path, scripts=scan.scripts, docs=scan.docs))
    try:
        with collector_paused():
            return lark.parse(source)
    except BuildError as exc:
        raise _Failure(Diagnostic(path, exc.line, exc.col, exc.message)) from None
    except UnexpectedToken as exc:
        message = unexpected_token_message(exc.token, _acceptable(exc), terminals)
        if exc.token.type == "$END":
            raise _Failure(_diagnostic_at(text, path, len(text.rstrip()), message)) from None
        raise _Failure(Diagnostic(path, exc.token.line or 1, exc.token.column or 1, message)) from None
    except UnexpectedCharacters as exc:
        message = unexpected_char_message(text[exc.pos_in_stream])
        raise _Failure(_diagnostic_at(text, path, exc.pos_in_stream, message)) from None
    except UnexpectedInput as exc:
        message = f"syntax error: {exc}"
        raise _Failure(Diagnostic(path, max(exc.line, 1), max(exc.column, 1), message)) from None
    finally:
        STATE.reset(token)


def _skip_declaration(source: str, text: str, scan: Prescan, error: Diagnostic) -> str | None:
    """``source`` with the declaration holding ``error`` blanked out, to look for more errors.

    The declaration runs from the last line-initial declaration keyword before the
    error to the next one at or after it. Blanking keeps every offset, and is done
    only when the cut holds balanced braces, so it cannot invent errors of its own.
    Returns None when there is no safe place to resume.
    """
    offset = _offset(text, error.line, error.col)
    before = [(o, d) for o, d in scan.decl_starts if o < offset]
    after = [(o, d) for o, d in scan.decl_starts if o >= offset]
    if not before or not after or before[-1][1] != after[0][1]:
        return None
    cut, resume = before[-1][0], after[0][0]
    return source[:cut] + re.sub(r"[^\n]", " ", source[cut:resume]) + source[resume:]


def _offset(text: str, line: int, col: int) -> int:
    start = 0
    for _ in range(line - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return len(text)
    return start + col - 1


def _acceptable(exc: UnexpectedToken) -> set[str]:
    """Terminals that would really have been accepted where the parse failed.

    LALR merges states, so ``exc.expected`` can list tokens valid only in other
    contexts; trying each candidate on a copy of the parser gives the exact set.
    """
    expected = set(exc.expected or ())
    try:
        exact = exc.interactive_parser.accepts() if exc.interactive_parser is not None else expected
    except Exception:  # a failed trial must not hide the real error
        return expected
    return set(exact) or expected


def _error(text: str, path: str, offset: int, message: str) -> FFLSyntaxError:
    return FFLSyntaxError([_diagnostic_at(text, path, offset, message)])


def _diagnostic_at(text: str, path: str, offset: int, message: str) -> Diagnostic:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return Diagnostic(path, line, col, message)


def _first_unencodable(text: str) -> int:
    """Offset of the first character UTF-8 cannot encode (a lone surrogate), or -1."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return -1
