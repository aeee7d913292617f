"""``ffl lsp``: the language server for editors, speaking the Language Server Protocol over stdio."""

from __future__ import annotations

import argparse
import os
import sys


def _lsp(args: argparse.Namespace) -> int:
    from ..lsp.server import server

    # pygls closes the streams it is given when the client leaves: give it its own, so the command
    # line's final flush of sys.stdout still works.
    with os.fdopen(sys.stdin.fileno(), "rb", closefd=False) as stdin, \
            os.fdopen(sys.stdout.fileno(), "wb", closefd=False) as stdout:
        server.start_io(stdin, stdout)
    return 0


def register(subparsers) -> None:
    lsp = subparsers.add_parser(
        "lsp",
        help="run the FFL language server (for editors; speaks LSP on stdin/stdout)",
        description="Run the FFL language server over stdio: diagnostics as you type, hover, go to definition, "
        "references, completion, rename, outline and folding for the .ffl files of the workspace. "
        "Editors start it themselves (see docs/editor.md).",
    )
    lsp.set_defaults(func=_lsp)
