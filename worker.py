"""Serve one FFL task queue: ``python worker.py --task-queue osm --handlers PKG_OR_FILE``.

``--task-queue ffl`` runs the interpreter workflow; see ``python worker.py --help``.
The logic lives in ``interpreter.cli.worker_main`` (also ``ffl worker``).
"""

from interpreter.cli.worker_main import main

if __name__ == "__main__":
    main()
