"""Completion's keywords are the grammar's reserved words, all of them and only them."""

from __future__ import annotations

import re
from pathlib import Path

from interpreter.lsp.completion import KEYWORDS

GRAMMAR = Path(__file__).parents[2] / "interpreter" / "compiler" / "grammar.lark"


def test_completion_offers_exactly_the_reserved_words_of_the_grammar():
    reserved = set(re.findall(r'^[A-Z]+: "([a-zA-Z]+)"$', GRAMMAR.read_text(), re.M))
    assert len(reserved) > 20
    assert sorted(KEYWORDS) == sorted(reserved)
