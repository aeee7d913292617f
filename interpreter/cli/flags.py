"""Flags spelled as the ``temporal`` CLI spells them, beside the older positional arguments.

``ffl signal ID NAME JSON`` also reads ``--workflow-id ID --name NAME --input JSON`` (``-w``, ``-n``, ``-i``),
``ffl cancel`` and ``ffl status`` take ``--workflow-id``: what a Temporal user types works, and what
worked before still does.
"""

from __future__ import annotations

import argparse


class FlagError(Exception):
    """A value given twice with different spellings, or not at all."""


def add_either(parser: argparse.ArgumentParser, dest: str, metavar: str, flags: tuple[str, ...], help: str, *,
               required: bool = True) -> None:
    """A positional ``dest`` that may instead be given as one of ``flags`` (read it back with :func:`either`)."""
    parser.add_argument(dest, metavar=metavar, nargs="?", help=f"{help} (or {flags[0]})")
    parser.add_argument(*flags, dest=f"{dest}_flag", metavar=metavar, help=f"{help}, as temporal spells it")
    parser.set_defaults(**{f"{dest}_required": required})


def either(args: argparse.Namespace, dest: str, flag: str) -> str | None:
    """The value of ``dest`` given positionally or as ``flag``; FlagError when both differ or a required one is missing."""
    positional, named = getattr(args, dest), getattr(args, f"{dest}_flag")
    if positional is not None and named is not None and positional != named:
        raise FlagError(f"{dest.replace('_', ' ')} given twice: {positional!r} and {flag} {named!r}")
    value = named if named is not None else positional
    if value is None and getattr(args, f"{dest}_required"):
        raise FlagError(f"missing {dest.replace('_', ' ')}: give it as {flag} or as the argument")
    return value
