"""Credentials never reach output: URIs in messages and log lines lose their user info and secret parameters.

``mongodb://alice:s3cret@db:27017/afl?authSource=admin`` is shown as
``mongodb://***@db:27017/afl?authSource=admin``; query parameters that carry
secrets (``password=``, ``token=``, ``authMechanismProperties=`` ...) keep
their name and lose their value. ``RedactingFilter`` applies the same to
every log record a handler emits.
"""

from __future__ import annotations

import logging
import re

_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#\s@'\"]+)@")
_SECRET_PARAM = re.compile(
    r"(?P<key>[?&;](?:password|passwd|pwd|secret|token|api_?key|access_?key|secret_?key|sessiontoken|"
    r"authmechanismproperties|tlscertificatekeyfilepassword|sslclientcertificatekeypassword)=)[^&;#\s'\"]*",
    re.IGNORECASE,
)


def redact(text: str) -> str:
    """``text`` with the credentials of every URI in it replaced by ``***``."""
    if "://" not in text and "=" not in text:
        return text
    text = _USERINFO.sub(r"\g<scheme>***@", text)
    return _SECRET_PARAM.sub(r"\g<key>***", text)


class RedactingFilter(logging.Filter):
    """A handler filter that redacts each record's message (arguments merged in first)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and record.exc_info[1] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            cleaned_exc = redact(text)
            if cleaned_exc != text:
                record.exc_text, record.exc_info = cleaned_exc, None
        return True


def redact_logging() -> None:
    """Install ``RedactingFilter`` on every handler of the root logger (after ``logging.basicConfig``)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())


class RedactingStream:
    """A text stream that redacts what is written to it (the command line's standard error)."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def redact_stderr() -> None:
    """Route ``sys.stderr`` through ``RedactingStream`` (idempotent)."""
    import sys

    if not isinstance(sys.stderr, RedactingStream):
        sys.stderr = RedactingStream(sys.stderr)  # type: ignore[assignment]
