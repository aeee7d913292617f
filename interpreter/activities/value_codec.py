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

Plain Temporal CLI users see the references (``temporal workflow show``);
inputs they send stay inline up to Temporal's own 2 MB.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence

from temporalio.api.common.v1 import Payload
from temporalio.converter import DataConverter, PayloadCodec

from .failures import UserFacingFailures
from .value_store import ValueStore, digest_of, open_value_store

REFERENCE_ENCODING = b"ffl/reference"
THRESHOLD_ENV = "FFL_VALUE_THRESHOLD"
DEFAULT_THRESHOLD = 128 * 1024
"""Bytes of a payload above which it is stored by reference."""

CACHE_BYTES = 256 * 1024 * 1024
"""Bytes of recently stored or read values kept in memory per process."""


def threshold_from_env() -> int:
    text = os.environ.get(THRESHOLD_ENV, "")
    try:
        return int(text) if text else DEFAULT_THRESHOLD
    except ValueError:
        raise ValueError(f"{THRESHOLD_ENV} must be a number of bytes, got {text!r}") from None


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

    def __init__(self, store: ValueStore, threshold: int = DEFAULT_THRESHOLD, cache_bytes: int = CACHE_BYTES):
        self.store = store
        self.threshold = threshold
        self.cache = _Cache(cache_bytes)
        self.writes = 0  # values this process wrote (tests and benchmarks read it)

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [await self._encode(p) if p.ByteSize() > self.threshold else p for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [await self._decode(p) if p.metadata.get("encoding") == REFERENCE_ENCODING else p
                for p in payloads]

    async def _encode(self, payload: Payload) -> Payload:
        data = payload.SerializeToString(deterministic=True)
        digest = digest_of(data)
        if self.cache.get(digest) is None:
            if await asyncio.to_thread(self.store.put, digest, data):
                self.writes += 1
            self.cache.put(digest, data)
        reference = {"sha256": digest, "size": len(data),
                     "encoding": payload.metadata.get("encoding", b"").decode("utf-8", "replace")}
        return Payload(metadata={"encoding": REFERENCE_ENCODING},
                       data=json.dumps(reference, separators=(",", ":")).encode("utf-8"))

    async def _decode(self, payload: Payload) -> Payload:
        digest = json.loads(payload.data)["sha256"]
        data = self.cache.get(digest)
        if data is None:
            data = await asyncio.to_thread(self.store.get, digest)
            self.cache.put(digest, data)
        return Payload.FromString(data)


def value_converter(store: ValueStore | None = None, threshold: int | None = None, *,
                    mongo_uri: str | None = None) -> DataConverter:
    """The default data converter with the claim-check codec and user-facing failures (failures.py): what every
    client and worker here uses."""
    codec = ClaimCheckCodec(store if store is not None else open_value_store(mongo_uri),
                            threshold if threshold is not None else threshold_from_env())
    return dataclasses.replace(DataConverter.default, payload_codec=codec, failure_converter_class=UserFacingFailures)


def codec_of(converter: DataConverter) -> ClaimCheckCodec | None:
    codec = converter.payload_codec
    return codec if isinstance(codec, ClaimCheckCodec) else None
