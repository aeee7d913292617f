"""``ffl test [PATH...]``: run the ``*.test.yaml`` files beside FFL programs (docs/testing.md).

In memory by default (milliseconds, no server); ``--temporal`` runs the same
files on Temporal's time-skipping test server. Output and exit status are
pytest's: a line per file, a line per broken expectation at the YAML's
``file:line``, FFL coverage, a summary; 0 all passed, 1 failures, 2 a file
could not be run, 5 no tests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

DESCRIPTION = """\
Run the *.test.yaml files beside FFL programs (docs/testing.md): in memory by
default, in milliseconds and without a server; with --temporal, the same files
on Temporal's time-skipping test server. Output and exit status are pytest's:
0 all passed, 1 a test failed, 2 a file or test could not run, 5 no tests."""


def register(subparsers) -> None:
    test = subparsers.add_parser("test", help="run the FFL tests (*.test.yaml) of files or folders",
                                 description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    test.add_argument("paths", nargs="*", metavar="PATH", help="test files or folders (default: .)")
    test.add_argument("--temporal", action="store_true",
                      help="run on Temporal's time-skipping test server instead of in memory")
    test.add_argument("--coverage-json", metavar="FILE", help="also write the FFL coverage as JSON to FILE")
    test.set_defaults(func=_test)


def _test(args: argparse.Namespace) -> int:
    try:
        from interpreter.testing.suite import run_files
    except ModuleNotFoundError as err:
        if err.name != "yaml":
            raise
        print("ffl test: reading test files needs PyYAML (pip install 'ffl-temporal[test]')", file=sys.stderr)
        return 2

    if args.temporal:
        from interpreter.testing.temporal import on_temporal

        report = asyncio.run(on_temporal(lambda run: run_files(args.paths, sys.stdout, run)))
    else:
        report = asyncio.run(run_files(args.paths, sys.stdout))
    if args.coverage_json:
        Path(args.coverage_json).write_text(json.dumps(report.coverage.as_json(), indent=2) + "\n")
    return report.status
