"""Pre-lexing pass: the parts of FFL that Lark's regex lexer cannot handle.

One linear scan over the source, before Lark sees it:

- brace script bodies (``script [python] { ... }``) hold Python, whose braces
  may nest and hide in strings and ``#`` comments. Each body is cut out and
  replaced by one placeholder character (the SCRIPT_BODY terminal) followed by
  spaces, newlines kept, so every later offset, line and column is unchanged;
- quoted script bodies that span lines (``script python "`` then lines of
  Python, then ``"``, as the original runtime's programs write them) are cut
  out the same way; a quoted script on one line stays a plain string token;
- doc comments ``/** ... */`` are collected and keyed by the offset of the next
  token, where the declaration they document starts;
- unterminated strings, comments and script bodies, and absurd nesting (which
  would overflow later recursive passes), are reported with their offset.
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass, field

PLACEHOLDER = "\x00"
MAX_NESTING = 32
"""Deepest bracket nesting accepted; keeps the compiled program within pydantic's depth limit."""


class PrescanError(Exception):
    """A lexical problem found before parsing, at a character offset."""

    def __init__(self, offset: int, message: str):
        super().__init__(message)
        self.offset = offset
        self.message = message


@dataclass
class Prescan:
    text: str
    scripts: dict[int, str] = field(default_factory=dict)
    """Placeholder offset -> script code (dedented)."""
    docs: dict[int, str] = field(default_factory=dict)
    """Offset of the token following a doc comment -> the comment's text."""
    decl_starts: list[tuple[int, int]] = field(default_factory=list)
    """(offset, brace depth) of each declaration keyword that begins a line, in order:
    the places where error recovery can resume."""


_TOKEN = re.compile(
    r"""
      (?P<sep>[ \t\r\n\f;]+)
    | (?P<doc>/\*\*(?!/))
    | (?P<block>/\*)
    | (?P<line>//[^\n]*)
    | (?P<string>"(?:[^"\\\n]|\\[^\n])*")
    | (?P<quote>")
    | (?P<word>[A-Za-z0-9_]+)
    | (?P<open>[(\[{])
    | (?P<close>[)\]}])
    | (?P<other>.)
    """,
    re.X | re.S,
)

_PY_TOKEN = re.compile(
    r"""
      (?P<skip>[^#'"{}]+)
    | (?P<comment>\#[^\n]*)
    | (?P<triple>'''|\"\"\")
    | (?P<quote>['"])
    | (?P<open>\{)
    | (?P<close>\})
    """,
    re.X,
)
_PY_SHORT_STRING = {
    "'": re.compile(r"(?:[^'\\\n]|\\.)*(?:'|\n|$)", re.S),
    '"': re.compile(r'(?:[^"\\\n]|\\.)*(?:"|\n|$)', re.S),
}
_MULTILINE_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_QUOTE_ESCAPE = re.compile(r"\\[\\']")
_DOC_LINE_PREFIX = re.compile(r"^\s*\*+ ?")
_DECL_KEYWORDS = frozenset({"namespace", "uses", "use", "facet", "event", "workflow", "schema", "implicit"})


def prescan(text: str) -> Prescan:
    """Scan ``text`` once; return the text Lark should parse plus scripts and docs."""
    result = Prescan(text="")
    pieces: list[str] = []
    copied = 0
    depth = braces = 0
    last_end = 0  # end of the previous token, to see whether a token begins its line
    pending_doc: str | None = None
    pos, end = 0, len(text)
    while pos < end:
        m = _TOKEN.match(text, pos)
        assert m is not None  # the last alternative matches any character
        kind, start = m.lastgroup, pos
        pos = m.end()
        if kind == "sep" or kind == "line":
            continue
        if kind in ("doc", "block"):
            close = text.find("*/", start + 2)
            if close < 0:
                raise PrescanError(start, "unterminated comment: '/*' has no closing '*/'")
            if kind == "doc":
                pending_doc = _clean_doc(text[start + 3 : close]) or None
            pos = close + 2
            continue
        if pending_doc is not None:
            result.docs[start] = pending_doc
            pending_doc = None
        if kind == "word" and m.group() in _DECL_KEYWORDS and (last_end == 0 or "\n" in text[last_end:start]):
            result.decl_starts.append((start, braces))
        last_end = pos
        if kind == "quote":
            raise PrescanError(start, "unterminated string: missing closing '\"' on this line")
        if kind == "open":
            depth += 1
            braces += m.group() == "{"
            if depth > MAX_NESTING:
                raise PrescanError(start, f"nesting too deep (more than {MAX_NESTING} levels of brackets)")
        elif kind == "close":
            depth = max(0, depth - 1)
            braces -= m.group() == "}"
        elif kind == "word" and m.group() == "script" and (start == 0 or text[start - 1] != "."):
            opening = _script_opening(text, pos)
            if opening >= 0 and text[opening] == "{":
                closing = _match_python_braces(text, opening)
                code = _dedent_body(text[opening + 1 : closing])
            elif opening >= 0 and _spans_lines(text, opening):
                closing = _multiline_script_end(text, opening)
                code = _dedent_body(_decode_at(text[opening : closing + 1], opening))
            else:
                continue
            result.scripts[opening] = code
            pieces.append(text[copied:opening])
            pieces.append(PLACEHOLDER)
            pieces.append(re.sub(r"[^\n]", " ", text[opening + 1 : closing + 1]))
            copied = pos = last_end = closing + 1
    pieces.append(text[copied:])
    result.text = "".join(pieces)
    return result


def _skip_trivia(text: str, pos: int) -> int:
    """Offset of the next token at or after ``pos`` (spaces and comments skipped)."""
    while True:
        m = _TOKEN.match(text, pos)
        if m is None:
            return pos
        if m.lastgroup in ("sep", "line"):
            pos = m.end()
        elif m.lastgroup in ("doc", "block"):
            close = text.find("*/", pos + 2)
            if close < 0:
                return pos  # the main loop reports it
            pos = close + 2
        else:
            return pos


def _script_opening(text: str, pos: int) -> int:
    """Offset of the ``{`` or ``"`` opening a script body after ``script`` ending at ``pos``, else -1."""
    pos = _skip_trivia(text, pos)
    m = _TOKEN.match(text, pos)
    if m is not None and m.lastgroup == "word" and m.group() == "python":
        pos = _skip_trivia(text, m.end())
    return pos if text.startswith(("{", '"'), pos) else -1


def _spans_lines(text: str, quote: int) -> bool:
    """Whether the string opened at ``quote`` does not end on its own line."""
    m = _TOKEN.match(text, quote)
    return m is not None and m.lastgroup == "quote"


def _multiline_script_end(text: str, quote: int) -> int:
    """Offset of the ``"`` closing a quoted script body that spans lines."""
    m = _MULTILINE_STRING.match(text, quote)
    if m is None:
        raise PrescanError(quote, "unterminated script string: no '\"' closes this '\"'")
    return m.end() - 1


def string_value(literal: str) -> str:
    """The value of a quoted string literal: JSON escapes plus ``\\'``; ValueError says what is wrong."""
    text = _QUOTE_ESCAPE.sub(lambda m: "'" if m.group() == "\\'" else m.group(), literal)
    try:
        value = json.loads(text, strict=False)
    except ValueError:
        raise ValueError("invalid escape in string (use \\\" \\\\ \\n \\t \\uXXXX ...)") from None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("invalid \\u escape in string: unpaired surrogate") from None
    return value


def _decode_at(literal: str, offset: int) -> str:
    try:
        return string_value(literal)
    except ValueError as exc:
        raise PrescanError(offset, str(exc)) from None


def _match_python_braces(text: str, brace: int) -> int:
    """Offset of the ``}`` closing the Python body opened at ``brace``."""
    depth = 1
    pos = brace + 1
    while True:
        m = _PY_TOKEN.match(text, pos)
        if m is None:
            raise PrescanError(brace, "unterminated script body: no '}' closes this '{'")
        kind = m.lastgroup
        pos = m.end()
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
            if depth == 0:
                return m.start()
        elif kind == "triple":
            pos = _triple_end(text, pos, m.group())
            if pos < 0:
                raise PrescanError(brace, "unterminated script body: a triple-quoted string never ends")
        elif kind == "quote":
            pos = _PY_SHORT_STRING[m.group()].match(text, pos).end()


def _triple_end(text: str, pos: int, delimiter: str) -> int:
    """Offset just after the unescaped ``delimiter`` closing a triple-quoted string, or -1."""
    while True:
        found = text.find(delimiter, pos)
        if found < 0:
            return -1
        backslashes = 0
        while text[found - 1 - backslashes] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return found + 3
        pos = found + 1


def _dedent_body(body: str) -> str:
    """Script code without the common indentation and surrounding blank lines."""
    first, _, rest = body.partition("\n")
    rest = textwrap.dedent(rest)
    code = first.strip() + "\n" + rest if first.strip() else rest
    return code.strip("\n").rstrip()


def _clean_doc(body: str) -> str:
    """Doc comment text without leading ``*`` decoration."""
    lines = [_DOC_LINE_PREFIX.sub("", line).rstrip() for line in body.split("\n")]
    return "\n".join(lines).strip()
