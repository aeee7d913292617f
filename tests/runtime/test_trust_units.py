"""The trust boundary's pieces without a server: value stores repair, the codec verifies, handler errors keep names."""

from __future__ import annotations

import asyncio
import json

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.exceptions import ApplicationError

from interpreter.activities.dispatch import _error
from interpreter.activities.value_codec import REFERENCE_ENCODING, ClaimCheckCodec
from interpreter.activities.value_store import DirectoryValueStore, ValueUnreachable, digest_of


def _big(n: int = 4096) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=json.dumps("v" * n).encode())


def test_a_damaged_copy_is_rewritten_by_the_next_put(tmp_path):
    store = DirectoryValueStore(tmp_path)
    data = b"some value"
    digest = digest_of(data)
    assert store.put(digest, data)
    assert not store.put(digest, data)  # intact: nothing written
    path = tmp_path / digest[:2] / digest
    path.write_bytes(b"altered")
    assert store.put(digest, data)  # damaged: repaired
    assert store.get(digest) == data


def test_the_codec_repairs_a_value_it_has_in_its_cache(tmp_path):
    store = DirectoryValueStore(tmp_path)
    codec = ClaimCheckCodec(store, threshold=1024)
    payload = _big()
    [ref] = asyncio.run(codec.encode([payload]))
    digest = json.loads(ref.data)["sha256"]
    (tmp_path / digest[:2] / digest).write_bytes(b"altered")
    asyncio.run(codec.encode([payload]))  # cached, yet written again: the stored copy was checked
    assert store.get(digest) == payload.SerializeToString(deterministic=True)
    assert codec.writes == 2


@pytest.mark.parametrize("body, error_type", [
    (b"not json", "InvalidReference"),
    (b'{"sha256": "../../etc/passwd", "size": 1}', "InvalidReference"),
    (b'{"sha256": ["x"], "size": 1}', "InvalidReference"),
    (json.dumps({"sha256": "a" * 64, "size": "1"}).encode(), "InvalidReference"),
    (json.dumps({"sha256": "a" * 64, "size": 10}).encode(), "ValueMissing"),
    (json.dumps({"sha256": "a" * 64, "size": 1 << 40}).encode(), "ValueTooLarge"),
])  # fmt: skip
def test_a_reference_is_resolved_only_once_verified(tmp_path, body, error_type):
    codec = ClaimCheckCodec(DirectoryValueStore(tmp_path))
    with pytest.raises(ApplicationError) as raised:
        asyncio.run(codec.decode([Payload(metadata={"encoding": REFERENCE_ENCODING}, data=body)]))
    assert raised.value.type == error_type and raised.value.non_retryable


def test_a_reference_whose_size_lies_is_refused(tmp_path):
    store = DirectoryValueStore(tmp_path)
    [ref] = asyncio.run(ClaimCheckCodec(store, threshold=1024).encode([_big()]))
    lying = dict(json.loads(ref.data), size=5)
    with pytest.raises(ApplicationError, match="its reference says 5"):
        asyncio.run(ClaimCheckCodec(store).decode([Payload(metadata={"encoding": REFERENCE_ENCODING},
                                                           data=json.dumps(lying).encode())]))


class _Flaky(DirectoryValueStore):
    """Unreachable for its first ``down`` calls."""

    def __init__(self, root, down: int):
        super().__init__(root)
        self.down = down

    def put(self, digest: str, data: bytes) -> bool:
        if self.down:
            self.down -= 1
            raise ValueUnreachable("store down")
        return super().put(digest, data)


def test_an_unreachable_store_is_retried_not_failed(tmp_path):
    store = _Flaky(tmp_path, down=2)
    [ref] = asyncio.run(ClaimCheckCodec(store, threshold=1024, patience=30).encode([_big()]))
    assert ref.metadata["encoding"] == REFERENCE_ENCODING and store.down == 0


def test_an_unreachable_store_fails_past_the_codecs_patience(tmp_path):
    with pytest.raises(ValueUnreachable):
        asyncio.run(ClaimCheckCodec(_Flaky(tmp_path, down=100), threshold=1024, patience=0).encode([_big()]))


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


def test_a_handler_error_whose_str_raises_keeps_its_class_name():
    error = _error(_Unprintable())
    assert error.type == "_Unprintable" and "str() raised RuntimeError" in error.message
