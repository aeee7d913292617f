"""Plain-words messages for Lark's syntax errors ("unexpected X, expected Y or Z")."""

from __future__ import annotations

from lark import Token
from lark.lexer import PatternStr, TerminalDef

_REGEX_TERMINALS = {
    "IDENT": "a name",
    "PARAM": "a parameter reference ($.name)",
    "STRING": "a string",
    "INT": "a number",
    "FLOAT": "a number",
    "SCRIPT_BODY": "a script body",
    "$END": "end of input",
}
_EXPRESSION_START = {
    "IDENT", "PARAM", "STRING", "INT", "FLOAT", "TRUE", "FALSE", "NULL",
    "LSQB", "MAP_OPEN", "LPAR", "MINUS", "BANG",
}  # fmt: skip
_OPERATORS = {
    "OROR", "ANDAND", "EQ", "NE", "LT", "LE", "GT", "GE", "CONCAT",
    "PLUS", "MINUS", "STAR", "SLASH", "PERCENT", "LSQB", "DOT",
}  # fmt: skip
_COMPARISONS = {"EQ", "NE", "LT", "LE", "GT", "GE"}


class Terminals:
    """Terminal name -> how to show it to a user, built from the Lark parser's terminals."""

    def __init__(self, terminals: list[TerminalDef]):
        self._shown: dict[str, str] = dict(_REGEX_TERMINALS)
        for term in terminals:
            if isinstance(term.pattern, PatternStr):
                self._shown[term.name] = f"'{term.pattern.value}'"

    def show(self, name: str) -> str:
        return self._shown.get(name, name)

    def expected(self, names: set[str]) -> str:
        """'expected A, B or C'; operators are left out when anything else would do."""
        shown: set[str] = set()
        if len(names & (_EXPRESSION_START - _OPERATORS)) >= 5:
            names = names - _EXPRESSION_START
            shown.add("an expression")
        elif names - _OPERATORS:
            names = names - _OPERATORS
        elif names:
            return "expected an operator"
        shown |= {self.show(n) for n in names}
        items = sorted(shown)
        if not items:
            return ""
        if len(items) == 1:
            return f"expected {items[0]}"
        return "expected " + ", ".join(items[:-1]) + " or " + items[-1]


def describe_token(token: Token) -> str:
    """How an offending token reads in a message."""
    if token.type == "$END":
        return "end of input"
    if token.type == "IDENT":
        return f"name '{token.value}'"
    if token.type == "SCRIPT_BODY":
        return "script body"
    value = str(token.value)
    if len(value) > 40:
        value = value[:37] + "..."
    return f"'{value}'" if token.type != "STRING" else f"string {value}"


def unexpected_token_message(token: Token, expected: set[str], terminals: Terminals) -> str:
    if token.type in _COMPARISONS and expected and not (expected & _COMPARISONS):
        return (
            f"unexpected {describe_token(token)}: comparisons do not chain "
            "(combine them with && or ||, or add parentheses)"
        )
    wanted = terminals.expected(expected)
    message = f"unexpected {describe_token(token)}"
    if token.type not in ("IDENT", "$END") and str(token.value).isidentifier() and "IDENT" in expected:
        message += " (a reserved word)"
    return f"{message}, {wanted}" if wanted else message


def unexpected_char_message(char: str) -> str:
    if char == "'":
        return "unexpected character \"'\": strings use double quotes"
    if char == "\x00":
        return "unexpected NUL character"
    if char.isprintable():
        return f"unexpected character '{char}'"
    return f"unexpected character U+{ord(char):04X}"
