"""Layer 6: ``ffl lsp``, a Language Server Protocol server for FFL over stdio.

It reuses the compiler (no second parser): the workspace keeps each file's
parse, re-checks only the files an edit can affect (``program.py``), and
answers editor requests from an index of names built from the resolved trees
(``index.py``). Each feature lives in its own module; ``server.py`` wires
them to pygls.
"""
