"""Logging that never writes personal data or secrets: every record is masked before any handler formats it."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

from agent.redaction import Redactor

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)


class RedactingFilter(logging.Filter):
    """Masks the formatted message and the traceback of each record (patterns and exact secrets)."""

    def __init__(self, redactor: Redactor):
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.redactor.text(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.text(record.exc_text)
        return True


def configure(level: int, fmt: str, env: Mapping[str, str]) -> None:
    """`logging.basicConfig` plus masking on every root handler; the environment's secrets
    (variables named *KEY, *TOKEN, *SECRET, *PASSWORD) are masked by value as well."""
    logging.basicConfig(level=level, format=fmt)
    secrets = [v for k, v in env.items() if _SECRET_NAME.search(k)]
    redacting = RedactingFilter(Redactor(secrets=secrets))
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(redacting)
