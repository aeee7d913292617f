"""``ffl mirror-status`` and ``ffl mirror-init``: read and prepare the MongoDB mirror.

``status_from_mongo`` is also what ``ffl status RUN --mongo URI`` (or with
MONGODB_URI set) calls; ``mirror-status`` is kept as an alias that insists
on the mirror.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from pymongo.errors import PyMongoError

from interpreter.activities.redact import redact


def _mongo_uri(args: argparse.Namespace) -> str | None:
    return args.mongo or os.environ.get("MONGODB_URI")


def status_from_mongo(run: str, uri: str, database: str | None = None, out: TextIO | None = None, *,
                      brief: bool = False, missing_ok: bool = False) -> int | None:
    """Print the step tree of ``run`` (workflow id, run id or runner uuid) from the mirror; exit status.

    With ``missing_ok`` a run the mirror does not hold returns None (the
    caller then asks the workflow itself) instead of failing.
    """
    from interpreter.activities.mirror.status import fetch_run, render_run

    out = out or sys.stdout
    try:
        view = fetch_run(uri, run, database)
    except PyMongoError as exc:
        print(f"ffl: cannot read the mirror at {redact(uri)}: {redact(str(exc))}", file=sys.stderr)
        return None if missing_ok else 1
    if view is None:
        if missing_ok:
            return None
        print(f"ffl: no run '{run}' in the mirror at {redact(uri)}", file=sys.stderr)
        return 1
    print(render_run(view, values=not brief), file=out)
    return 0


def _status(args: argparse.Namespace) -> int:
    uri = _mongo_uri(args)
    if not uri:
        print("ffl: give --mongo URI or set MONGODB_URI", file=sys.stderr)
        return 2
    return status_from_mongo(args.run, uri, args.database)


def _init(args: argparse.Namespace) -> int:
    from pymongo import MongoClient

    from interpreter.activities.mirror import database_from_uri, ensure_indexes

    uri = _mongo_uri(args)
    if not uri:
        print("ffl: give --mongo URI or set MONGODB_URI", file=sys.stderr)
        return 2
    try:
        database = database_from_uri(uri, args.database)
        client: MongoClient = MongoClient(uri, serverSelectionTimeoutMS=5000)
    except PyMongoError as exc:  # a malformed URI
        print(f"ffl: bad MongoDB URI {redact(uri)}: {redact(str(exc))}", file=sys.stderr)
        return 2
    try:
        names = ensure_indexes(client[database])
    except PyMongoError as exc:
        print(f"ffl: cannot create the mirror's indexes at {redact(uri)}: {redact(str(exc))}", file=sys.stderr)
        return 1
    finally:
        client.close()
    print(f"{len(names)} indexes ready in database {database}")
    return 0


def _mongo_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mongo", metavar="URI", help="MongoDB URI (default: $MONGODB_URI)")
    parser.add_argument("--database", help="database name (default: the URI's, else 'facetwork')")


def register(subparsers: argparse._SubParsersAction) -> None:
    status = subparsers.add_parser("mirror-status", help="show a run's step tree from the MongoDB mirror")
    status.add_argument("run", metavar="RUN_ID", help="Temporal workflow id, run id or runner uuid")
    _mongo_options(status)
    status.set_defaults(func=_status)
    init = subparsers.add_parser("mirror-init", help="create the mirror's collections' indexes")
    _mongo_options(init)
    init.set_defaults(func=_init)
