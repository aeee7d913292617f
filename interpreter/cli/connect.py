"""Temporal client options from command-line flags and the environment.

Shared by ``worker.py``, ``ffl worker``, ``ffl run --address`` and ``ffl status``
so every entry point connects the same way: flags first, then
``TEMPORAL_ADDRESS``, ``TEMPORAL_NAMESPACE``, ``TEMPORAL_TLS_CERT``,
``TEMPORAL_TLS_KEY``, ``TEMPORAL_TLS_CA``, ``TEMPORAL_API_KEY``.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ADDRESS = "localhost:7233"
DEFAULT_NAMESPACE = "default"


@dataclass
class ConnectOptions:
    address: str = DEFAULT_ADDRESS
    namespace: str = DEFAULT_NAMESPACE
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_ca: str | None = None
    api_key: str | None = None

    def describe(self) -> str:
        security = "mTLS" if self.tls_cert else ("TLS" if self.tls_ca or self.api_key else "plain")
        auth = " + API key" if self.api_key else ""
        return f"{self.address} namespace {self.namespace} ({security}{auth})"


def add_connection_args(parser: argparse.ArgumentParser, *, address_help: str | None = None) -> None:
    group = parser.add_argument_group("Temporal connection")
    group.add_argument(
        "--address", help=address_help or f"Temporal frontend host:port (env TEMPORAL_ADDRESS, default {DEFAULT_ADDRESS})"
    )
    group.add_argument("--namespace", help="Temporal namespace (env TEMPORAL_NAMESPACE, default 'default')")
    group.add_argument("--tls-cert", help="client certificate PEM file for mTLS (env TEMPORAL_TLS_CERT)")
    group.add_argument("--tls-key", help="client private key PEM file for mTLS (env TEMPORAL_TLS_KEY)")
    group.add_argument("--tls-ca", help="server root CA PEM file (env TEMPORAL_TLS_CA)")
    group.add_argument("--api-key", help="API key, e.g. for Temporal Cloud (env TEMPORAL_API_KEY); implies TLS")


def options_from_args(args: argparse.Namespace, env: dict[str, str] | None = None) -> ConnectOptions:
    env = dict(os.environ) if env is None else env

    def pick(flag: str, var: str) -> str | None:
        value = getattr(args, flag, None)
        return value if value else (env.get(var) or None)

    return ConnectOptions(
        address=pick("address", "TEMPORAL_ADDRESS") or DEFAULT_ADDRESS,
        namespace=pick("namespace", "TEMPORAL_NAMESPACE") or DEFAULT_NAMESPACE,
        tls_cert=pick("tls_cert", "TEMPORAL_TLS_CERT"),
        tls_key=pick("tls_key", "TEMPORAL_TLS_KEY"),
        tls_ca=pick("tls_ca", "TEMPORAL_TLS_CA"),
        api_key=pick("api_key", "TEMPORAL_API_KEY"),
    )


def _read(path: str | None) -> bytes | None:
    return Path(path).expanduser().read_bytes() if path else None


def tls_config(options: ConnectOptions):
    """``TLSConfig`` from the PEM files, ``True`` for TLS with system roots (API key only), else ``False``."""
    from temporalio.service import TLSConfig

    if bool(options.tls_cert) != bool(options.tls_key):
        raise ValueError("mTLS needs both --tls-cert and --tls-key (or TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY)")
    if options.tls_cert or options.tls_ca:
        return TLSConfig(
            server_root_ca_cert=_read(options.tls_ca),
            client_cert=_read(options.tls_cert),
            client_private_key=_read(options.tls_key),
        )
    return bool(options.api_key)


def core_logs_to_python_logging() -> None:
    """Send the SDK core's own log lines (e.g. payload-size warnings) to Python's ``temporalio.core`` logger.

    By default the Rust core writes them to standard output, where they would
    corrupt a command's result (``ffl run`` prints its returns there as JSON).
    Call before the first client is created.
    """
    import logging

    from temporalio.runtime import (
        LogForwardingConfig,
        LoggingConfig,
        Runtime,
        TelemetryConfig,
        TelemetryFilter,
    )

    logging_config = LoggingConfig(filter=TelemetryFilter(core_level="WARN", other_level="ERROR"),
                                   forwarding=LogForwardingConfig(logger=logging.getLogger("temporalio.core")))
    Runtime.set_default(Runtime(telemetry=TelemetryConfig(logging=logging_config)), error_if_already_set=False)


class ConnectionFailed(RuntimeError):
    """The Temporal server could not be reached; the message is one line naming address and likely cause."""

    def __init__(self, address: str, reason: str):
        self.address, self.reason = address, reason
        super().__init__(f"cannot reach Temporal at {address}: {reason}")


_CAUSES = (
    # (what the SDK core's error says, what it likely means)
    ("connectionrefused", "connection refused — is the server running, and is the port right?"),
    ("connection refused", "connection refused — is the server running, and is the port right?"),
    ("dns error", "the host name does not resolve"),
    ("failed to lookup address", "the host name does not resolve"),
    ("invalidcontenttype", "the server does not speak TLS there (drop --tls-ca/--api-key, or use the TLS port)"),
    ("certificate", "the TLS certificate was not accepted (check --tls-ca, --tls-cert and the host name)"),
    ("invalidcertificate", "the TLS certificate was not accepted (check --tls-ca, --tls-cert and the host name)"),
    ("handshake", "the TLS handshake failed (check --tls-ca, --tls-cert and --tls-key)"),
    ("connection was not ready", "something answers there, but not Temporal's gRPC frontend "
                                 "(the Web UI's port, or a TLS server reached without TLS?)"),
    ("broken pipe", "the connection was closed — not Temporal's gRPC frontend, or TLS expected?"),
    ("connection reset", "the connection was reset — not Temporal's gRPC frontend, or TLS expected?"),
    ("unauthenticated", "the server refused the credentials (check --api-key or the client certificate)"),
    ("permissiondenied", "the server refused the credentials (check --api-key or the client certificate)"),
    ("timed out", "no answer in time — a firewall, or the wrong host or port?"),
    ("deadline", "no answer in time — a firewall, or the wrong host or port?"),
    ("unreachable", "the network is unreachable from here"),
)


def explain_connect_error(error: BaseException | str) -> str:
    """A short, likely cause for the SDK's raw connection error (``tonic::transport::Error(...)``)."""
    text = str(error)
    lowered = text.lower().replace(" ", "").replace("_", "")
    for needle, cause in _CAUSES:
        if needle.replace(" ", "") in lowered:
            return cause
    first = text.removeprefix("Failed client connect: ").split("(", 1)[0].strip(" :`")
    return first or "connection failed"


def server_error_line(error: BaseException, address: str) -> str:
    """One line for an error a command met while talking to the server (never the raw transport text)."""
    from temporalio.service import RPCError, RPCStatusCode

    if isinstance(error, ConnectionFailed):
        return str(error)
    if isinstance(error, RPCError):
        if error.status in (RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED):
            return str(ConnectionFailed(address, explain_connect_error(error)))
        if error.status in (RPCStatusCode.UNAUTHENTICATED, RPCStatusCode.PERMISSION_DENIED):
            return f"Temporal at {address} refused the request: {error.message}"
        return f"Temporal at {address}: {error.message}"
    return f"{type(error).__name__}: {error}"


async def connect(options: ConnectOptions, retry_for: float = 0.0, *, mongo_uri: str | None = None,
                  data_converter=None):
    """A connected ``temporalio.client.Client``, or ``ConnectionFailed`` with a one-line reason.

    ``retry_for`` seconds of retries cover a server that is still starting
    (a fresh dev server listens before its frontend is healthy). Its data
    converter (unless ``data_converter`` is given) stores large values by
    reference (activities/value_codec.py): in GridFS of ``mongo_uri`` (else
    ``$MONGODB_URI``) unless ``$FFL_VALUE_STORE`` names the shared directory,
    which is the default without MongoDB. Every worker built from it carries the run header
    (activities/run_header.py).
    """
    import asyncio
    import os

    from temporalio.client import Client

    from ..activities.run_header import RunHeader
    from ..activities.value_codec import value_converter

    converter = data_converter or value_converter(mongo_uri=mongo_uri or os.environ.get("MONGODB_URI"))
    tls = tls_config(options)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + retry_for
    while True:
        try:
            return await Client.connect(options.address, namespace=options.namespace, tls=tls, api_key=options.api_key,
                                        data_converter=converter, interceptors=[RunHeader()])
        except RuntimeError as exc:
            if loop.time() >= deadline:
                raise ConnectionFailed(options.address, explain_connect_error(exc)) from None
            await asyncio.sleep(0.5)
