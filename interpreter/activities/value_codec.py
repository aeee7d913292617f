"""Large values by reference: a claim-check payload codec on every client and worker this project builds.

Temporal keeps every payload (workflow input, activity argument and result,
query answer) in the run's history and refuses one over 2 MB. The codec sits
on the data converter: a payload above the threshold (default 128 KB,
``$FFL_VALUE_THRESHOLD`` bytes) is written to the value store under the
sha256 of its bytes and replaced by a small reference payload (encoding
``ffl/reference``, its data ``{"sha256", "size", "encoding"}``); decoding
reads it back (and checks the digest). The workflow code sees plain values,
the history holds references, and since references are content-addressed a
replay or a retry writes nothing new. Recently used values stay in memory,
so a workflow replayed on the same worker does not read them again.

A reference is input like any other: whoever can start a workflow can send
one. So it is resolved only once verified — well formed, at most
``$FFL_VALUE_MAX_BYTES`` (64 MB and a little), present, and its bytes
hashing to its name and of its stated size — and every other reference is
refused with a non-retryable ``ApplicationError`` (``InvalidReference``,
``ValueMissing``, ``ValueDamaged``, ``ValueTooLarge``). Raised while a
workflow's activation is decoded, that error fails the run at once (the SDK
fails the execution, not the task); while an activity's input is decoded,
it fails that attempt (the SDK's "Failed decoding arguments", retried by the
step's policy). A client learns nothing new this way:
naming a stored value takes its sha256, that is, knowing the value.

A store that cannot be reached (``ValueUnreachable``: MongoDB down) is
retried for up to ``$FFL_VALUE_STORE_PATIENCE`` seconds (10 minutes), so an
outage delays a handler's completion instead of failing the attempt and
running the handler again. Every write checks the stored copy, so a damaged
value is repaired by the next run that produces it.

Plain Temporal CLI users see the references (``temporal workflow show``);
inputs they send stay inline up to Temporal's own 2 MB.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TypeVar

from temporalio.api.common.v1 import Payload
from temporalio.converter import DataConverter, PayloadCodec
from temporalio.exceptions import ApplicationError

from .failures import UserFacingFailures
from .ordered_json import OrderedPayloadConverter
from .value_store import (
    ValueDamaged,
    ValueMissing,
    ValueStore,
    ValueUnreachable,
    digest_of,
    open_value_store,
    valid_digest,
)

T = TypeVar("T")

REFERENCE_ENCODING = b"ffl/reference"
THRESHOLD_ENV = "FFL_VALUE_THRESHOLD"
DEFAULT_THRESHOLD = 128 * 1024
"""Bytes of a payload above which it is stored by reference."""

CACHE_BYTES = 256 * 1024 * 1024
"""Bytes of recently stored or read values kept in memory per process."""

MAX_BYTES_ENV = "FFL_VALUE_MAX_BYTES"
DEFAULT_MAX_BYTES = 64 * 1024 * 1024 + 64 * 1024
"""Most bytes a reference may name: ``RuntimeConfig.max_value_bytes`` of JSON and its payload's metadata.
Raise it with ``$FFL_VALUE_MAX_BYTES`` when the configuration raises that limit."""

MISSING_RETRIES = 3
MISSING_PAUSE = 1.0
"""A value reported missing is asked for again this many times, this many seconds apart, before it is refused."""

PATIENCE_ENV = "FFL_VALUE_STORE_PATIENCE"
DEFAULT_PATIENCE = 600.0
"""Seconds an unreachable value store is retried before the value fails (the attempt is then retried)."""


def _env_number(name: str, default: float) -> float:
    text = os.environ.get(name, "")
    try:
        return float(text) if text else default
    except ValueError:
        raise ValueError(f"{name} must be a number, got {text!r}") from None


def threshold_from_env() -> int:
    return int(_env_number(THRESHOLD_ENV, DEFAULT_THRESHOLD))


def refused(message: str, error_type: str) -> ApplicationError:
    """A reference that can never resolve: not retryable, so the run (or step) fails at once, saying why."""
    return ApplicationError(message, type=error_type, non_retryable=True)


def reference_of(payload: Payload, max_bytes: int) -> tuple[str, int]:
    """The digest and size a reference payload names, refused unless well formed and within ``max_bytes``."""
    try:
        reference = json.loads(payload.data)
    except ValueError:
        reference = None
    if not isinstance(reference, dict):
        raise refused("not a value reference: an ffl/reference payload holds a JSON object", "InvalidReference")
    digest, size = reference.get("sha256"), reference.get("size")
    if not valid_digest(digest):
        raise refused(f"not a value reference: {str(digest)[:80]!r} is not a sha256 digest", "InvalidReference")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise refused(f"not a value reference: size {str(size)[:40]!r} is not a number of bytes", "InvalidReference")
    if size > max_bytes:
        raise refused(f"value {digest} has {size} bytes; a value may have at most {max_bytes} "
                      f"(${MAX_BYTES_ENV})", "ValueTooLarge")
    return digest, size


class _Cache:
    """Serialized payloads by digest, least recently used dropped past ``limit`` bytes."""

    def __init__(self, limit: int):
        self.limit = limit
        self.used = 0
        self.items: OrderedDict[str, bytes] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, digest: str) -> bytes | None:
        with self.lock:
            data = self.items.get(digest)
            if data is not None:
                self.items.move_to_end(digest)
            return data

    def put(self, digest: str, data: bytes) -> None:
        if len(data) > self.limit:
            return
        with self.lock:
            if digest in self.items:
                return
            self.items[digest] = data
            self.used += len(data)
            while self.used > self.limit:
                _, dropped = self.items.popitem(last=False)
                self.used -= len(dropped)


class ClaimCheckCodec(PayloadCodec):
    """Payloads above ``threshold`` bytes go to ``store``; the history holds a reference to them."""

    def __init__(self, store: ValueStore, threshold: int = DEFAULT_THRESHOLD, cache_bytes: int = CACHE_BYTES, *,
                 max_bytes: int | None = None, patience: float | None = None):
        self.store = store
        self.threshold = threshold
        self.cache = _Cache(cache_bytes)
        self.max_bytes = max_bytes if max_bytes is not None else int(_env_number(MAX_BYTES_ENV, DEFAULT_MAX_BYTES))
        self.patience = patience if patience is not None else _env_number(PATIENCE_ENV, DEFAULT_PATIENCE)
        self.writes = 0  # values this process wrote or repaired (tests and benchmarks read it)

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [await self._encode(p) if p.ByteSize() > self.threshold else p for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [await self._decode(p) if p.metadata.get("encoding") == REFERENCE_ENCODING else p
                for p in payloads]

    async def _encode(self, payload: Payload) -> Payload:
        data = payload.SerializeToString(deterministic=True)
        digest = digest_of(data)
        if await self._patiently(self.store.put, digest, data):  # even when cached: the copy may be damaged
            self.writes += 1
        self.cache.put(digest, data)
        reference = {"sha256": digest, "size": len(data),
                     "encoding": payload.metadata.get("encoding", b"").decode("utf-8", "replace")}
        return Payload(metadata={"encoding": REFERENCE_ENCODING},
                       data=json.dumps(reference, separators=(",", ":")).encode("utf-8"))

    async def _decode(self, payload: Payload) -> Payload:
        digest, size = reference_of(payload, self.max_bytes)
        data = self.cache.get(digest)
        if data is None:
            data = await self._stored(digest)
        if len(data) != size:
            raise refused(f"value {digest} has {len(data)} bytes, its reference says {size}", "InvalidReference")
        self.cache.put(digest, data)
        try:
            return Payload.FromString(data)
        except Exception as err:  # bytes that hash right but are no payload: written by no codec
            raise refused(f"value {digest} is not a stored payload: {err}", "InvalidReference") from None

    async def _stored(self, digest: str) -> bytes:
        """The bytes under ``digest``. A value missing is asked for again a few times, a second apart: a store that
        has just come back from an outage may not hold every value yet; then it is refused."""
        asked = 1
        while True:
            try:
                return await self._patiently(self.store.get, digest)
            except ValueMissing as err:
                if asked > MISSING_RETRIES:
                    raise refused(str(err), "ValueMissing") from None
            except ValueDamaged as err:
                raise refused(str(err), "ValueDamaged") from None
            asked += 1
            await asyncio.sleep(MISSING_PAUSE)

    async def _patiently(self, call: Callable[..., T], *args: object) -> T:
        """``call`` in a thread, retried while the store is unreachable, for up to ``patience`` seconds."""
        deadline = time.monotonic() + self.patience
        pause = 0.5
        while True:
            try:
                return await asyncio.to_thread(call, *args)
            except ValueUnreachable:
                if time.monotonic() + pause > deadline:
                    raise
            await asyncio.sleep(pause)
            pause = min(pause * 2, 5.0)


def value_converter(store: ValueStore | None = None, threshold: int | None = None, *,
                    mongo_uri: str | None = None) -> DataConverter:
    """The default data converter with the claim-check codec and user-facing failures (failures.py): what every
    client and worker here uses."""
    codec = ClaimCheckCodec(store if store is not None else open_value_store(mongo_uri),
                            threshold if threshold is not None else threshold_from_env())
    return dataclasses.replace(DataConverter.default, payload_converter_class=OrderedPayloadConverter,
                               payload_codec=codec, failure_converter_class=UserFacingFailures)

