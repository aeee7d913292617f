"""'Did you mean' suffixes for errors about unknown names.

Every error site passes the misspelt word and the names valid at that point;
this module alone decides what counts as close and how the suffix reads, so
all messages suggest alike. It only runs once an error has been found: a
program without errors never gets here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from difflib import SequenceMatcher

CUTOFF = 0.6  # difflib's own default for get_close_matches
MARGIN = 0.1  # a name this much less similar than the best one is noise beside it
MOST = 3


def close_names(word: str, names: Iterable[str], key: Callable[[str], str] | None = None) -> list[str]:
    """The names closest to ``word`` (at most ``MOST``), best first, ties in alphabetical order.

    ``word`` is compared with ``key(name)`` (the name itself by default:
    ``key`` drops what a name shows but the word lacks, such as ``$.``),
    ignoring case, by difflib's similarity ratio as ``difflib.get_close_matches``
    does; unlike it, ties keep a stable, alphabetical order, and names much
    less similar than the best one are left out. The word itself is never
    offered.
    """
    by_key: dict[str, set[str]] = {}
    for name in names:
        if name != word:
            by_key.setdefault((key(name) if key else name).lower(), set()).add(name)
    matcher = SequenceMatcher()
    matcher.set_seq2(word.lower())
    scored: list[tuple[float, str]] = []
    for candidate in by_key:
        matcher.set_seq1(candidate)
        if matcher.real_quick_ratio() >= CUTOFF and matcher.quick_ratio() >= CUTOFF:
            score = matcher.ratio()
            if score >= CUTOFF:
                scored.append((score, candidate))
    found: list[str] = []
    best = max((score for score, _ in scored), default=0.0)
    for score, candidate in sorted(scored, key=lambda pair: (-pair[0], pair[1])):
        if score < best - MARGIN:
            break
        found += sorted(by_key[candidate])
    return found[:MOST]


def did_you_mean(word: str, names: Iterable[str], key: Callable[[str], str] | None = None) -> str:
    """`` (did you mean 'a' or 'b'?)`` for the names close to ``word``; empty when none is."""
    found = [f"'{name}'" for name in close_names(word, names, key)]
    if not found:
        return ""
    listed = found[0] if len(found) == 1 else ", ".join(found[:-1]) + " or " + found[-1]
    return f" (did you mean {listed}?)"
