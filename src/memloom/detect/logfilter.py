"""Log lines pass through redaction before any handler writes them.

Request paths, error messages and tracebacks can carry whatever a client sent
(a token in a query string, a secret in a rejected memory); the filter rewrites
each record's message and traceback with the same rules that guard the store.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from memloom.detect import default_detector


class RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        detector = default_detector()
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: let logging report it as usual
            return True
        redacted, hits = detector.redact(message)
        if hits:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            record.exc_text = detector.redact(logging.Formatter().formatException(record.exc_info))[
                0
            ]
        if record.stack_info:
            record.stack_info = detector.redact(record.stack_info)[0]
        return True


def install(loggers: Iterable[str] = ("", "uvicorn", "uvicorn.error", "uvicorn.access")) -> None:
    """Add the filter to every handler of these loggers (root: ``""``), once."""
    for name in loggers:
        for handler in logging.getLogger(name).handlers:
            if not any(isinstance(f, RedactingFilter) for f in handler.filters):
                handler.addFilter(RedactingFilter())
