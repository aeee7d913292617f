"""FFL source text -> SourceFile (the AST of interpreter/program/model.py).

``parse_source`` is the only entry point. It raises FFLSyntaxError for every
kind of bad input and nothing else: Lark's exceptions, numeric overflows and
even internal failures become diagnostics with ``file:line:col``.
"""

from __future__ import annotations

import gc
from functools import cache
from importlib import resources

from lark import Lark, Token, UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr

from ..program.model import SourceFile
from .diagnostics import Diagnostic, FFLSyntaxError
from .parse_build import STATE, Builder, BuildError, ParseState
from .parse_errors import Terminals, unexpected_char_message, unexpected_token_message
from .parse_prescan import PrescanError, prescan

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
    lark, terminals = _parser()
    token = STATE.set(ParseState(path=path, scripts=scan.scripts, docs=scan.docs))
    # The parse allocates many long-lived, acyclic nodes; collector passes over them
    # would make parsing super-linear, and there is no cyclic garbage to find.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return lark.parse(scan.text)
    except BuildError as exc:
        raise FFLSyntaxError([Diagnostic(path, exc.line, exc.col, exc.message)]) from None
    except UnexpectedToken as exc:
        raise _token_error(text, path, exc, terminals) from None
    except UnexpectedCharacters as exc:
        raise _error(text, path, exc.pos_in_stream, unexpected_char_message(text[exc.pos_in_stream])) from None
    except UnexpectedInput as exc:
        line, col = exc.line if exc.line > 0 else 1, exc.column if exc.column > 0 else 1
        raise FFLSyntaxError([Diagnostic(path, line, col, f"syntax error: {exc}")]) from None
    finally:
        STATE.reset(token)
        if collecting:
            gc.enable()


def _token_error(text: str, path: str, exc: UnexpectedToken, terminals: Terminals) -> FFLSyntaxError:
    tok: Token = exc.token
    message = unexpected_token_message(tok, _acceptable(exc), terminals)
    if tok.type == "$END":
        end = len(text.rstrip())
        return _error(text, path, end, message)
    return FFLSyntaxError([Diagnostic(path, tok.line or 1, tok.column or 1, message)])


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
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return FFLSyntaxError([Diagnostic(path, line, col, message)])


def _first_unencodable(text: str) -> int:
    """Offset of the first character UTF-8 cannot encode (a lone surrogate), or -1."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return -1
