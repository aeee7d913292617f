"""FFL's search attributes on a Temporal namespace: check them at worker start, register them with ``ffl setup``.

A run upserts ``FflProgramHash``, ``FflNamespace`` and ``FflWorkflow`` only
when the interpreter worker found them registered (the answer is pinned in
the run's configuration, so replays agree); otherwise it warns once and runs
carry the same facts in their memo only — an unregistered attribute would
fail every workflow task of the run.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from ..program.config import RuntimeConfig
from ..program.runinfo import SEARCH_ATTRIBUTES
from .connect import (
    add_connection_args,
    connect,
    core_logs_to_python_logging,
    options_from_args,
    server_error_line,
)


def _indexed_type(kind: str):
    from temporalio.api.enums.v1 import IndexedValueType

    return IndexedValueType.Value(f"INDEXED_VALUE_TYPE_{kind.upper()}")


async def registered(client, namespace: str) -> dict[str, str]:
    """Custom search attributes of ``namespace``: name → type (``KEYWORD``, ``TEXT``, ...)."""
    from temporalio.api.enums.v1 import IndexedValueType
    from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest

    response = await client.operator_service.list_search_attributes(ListSearchAttributesRequest(namespace=namespace))
    return {name: IndexedValueType.Name(value).removeprefix("INDEXED_VALUE_TYPE_")
            for name, value in response.custom_attributes.items()}


def _same(kind: str, registered_kind: str) -> bool:
    return kind.upper() == registered_kind.replace("_", "")


async def missing(client, namespace: str) -> list[str]:
    """FFL's search attributes the namespace lacks (or holds with another type)."""
    present = await registered(client, namespace)
    return [name for name, kind in SEARCH_ATTRIBUTES.items() if not _same(kind, present.get(name, ""))]


async def with_search_attributes(client, namespace: str, config: RuntimeConfig, warn) -> RuntimeConfig:
    """``config`` with ``search_attributes`` set to whether runs may upsert them here; warns when not."""
    try:
        lacking = await missing(client, namespace)
    except Exception as exc:  # noqa: BLE001 - e.g. no operator permission: degrade, never fail the worker
        warn(f"warning: cannot list search attributes of namespace {namespace} ({server_error_line(exc, '')}); "
             "runs carry program, namespace and workflow in their memo only")
        return config.model_copy(update={"search_attributes": False})
    if lacking:
        warn(f"warning: namespace {namespace} lacks the search attributes {', '.join(lacking)}; runs carry "
             "them in their memo only (register them with: ffl setup --namespace " + namespace + ")")
    return config.model_copy(update={"search_attributes": not lacking})


async def setup(client, namespace: str) -> list[tuple[str, str, str]]:
    """Register FFL's search attributes; (name, type, what happened) for each."""
    from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest

    present = await registered(client, namespace)
    report: list[tuple[str, str, str]] = []
    wanted: dict[str, str] = {}
    for name, kind in SEARCH_ATTRIBUTES.items():
        if name not in present:
            wanted[name] = kind
            report.append((name, kind, "added"))
        elif _same(kind, present[name]):
            report.append((name, kind, "already registered"))
        else:
            report.append((name, kind, f"registered with another type ({present[name]}): remove it first"))
    if wanted:
        await client.operator_service.add_search_attributes(AddSearchAttributesRequest(
            namespace=namespace, search_attributes={name: _indexed_type(kind) for name, kind in wanted.items()}))
    return report


def _setup(args: argparse.Namespace) -> int:
    options = options_from_args(args)
    core_logs_to_python_logging()

    async def run() -> int:
        client = await connect(options)
        report = await setup(client, options.namespace)
        for name, kind, outcome in report:
            print(f"search attribute {name} ({kind}): {outcome}")
        return 1 if any("another type" in outcome for _, _, outcome in report) else 0

    try:
        return asyncio.run(run())
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback
        print(f"ffl setup: {server_error_line(exc, options.address)}", file=sys.stderr)
        return 1


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "setup", help="prepare a Temporal namespace for FFL runs (register FFL's search attributes)",
        description="Register the search attributes FFL runs carry (" + ", ".join(
            f"{n} {k}" for n, k in SEARCH_ATTRIBUTES.items()) + ") on a namespace, through Temporal's "
        "operator service; idempotent. Then the Web UI and 'temporal workflow list --query' find runs by "
        "program ('FflProgramHash = \"…\"'), FFL namespace and workflow. Interpreter workers started "
        "before this upsert them only after a restart.",
    )
    add_connection_args(parser)
    parser.set_defaults(func=_setup)
