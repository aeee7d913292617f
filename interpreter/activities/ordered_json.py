"""A payload converter that keeps records in the order they were written.

Temporal's default JSON converter sorts every object's keys. FFL records
are Python dicts end to end — inputs, map literals, handler payloads and
returns, outputs, the mirror — and a dict keeps its insertion order, which
handlers print and users read (a summary of a config, a report's columns).
Insertion order is as deterministic as sorted order: replay decodes what
history holds, so nothing else changes.
"""

from __future__ import annotations

from typing import Any

from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    AdvancedJSONEncoder,
    CompositePayloadConverter,
    DefaultPayloadConverter,
    JSONPlainPayloadConverter,
)


class OrderedJSONPayloadConverter(JSONPlainPayloadConverter):
    """``json/plain`` as the SDK writes it, without sorting keys."""

    _compact = AdvancedJSONEncoder(separators=(",", ":"))  # one for every payload: ``json.dumps`` builds one a call

    def to_payload(self, value: Any) -> Payload | None:
        return Payload(metadata={"encoding": self.encoding.encode()},
                       data=self._compact.encode(value).encode())


class OrderedPayloadConverter(CompositePayloadConverter):
    """The SDK's default payload converters, with JSON in insertion order."""

    def __init__(self) -> None:
        super().__init__(*(OrderedJSONPayloadConverter() if isinstance(c, JSONPlainPayloadConverter) else c
                           for c in DefaultPayloadConverter.default_encoding_payload_converters))
