"""Process logging from AGENTBOT_LOG_LEVEL and AGENTBOT_LOG_FORMAT (`text`, or `json` for log collectors)."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TextIO

from agent.redaction import Redactor
from bots.secrets import scrubber
from bots.settings import DeploySettings


class RedactingFilter(logging.Filter):
    """Masks each record's message and traceback (personal data, token shapes, the environment's
    secrets by value) before any handler formats it: logs never carry what telemetry may not."""

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


def redacting_filter(env: Mapping[str, str]) -> RedactingFilter:
    """The environment's secrets (`bots/secrets.py`) are masked by value as well as by shape."""
    return RedactingFilter(scrubber(env))


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, message, and the traceback if any."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_text:
            entry["error"] = record.exc_text
        elif record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(env: Mapping[str, str], stream: TextIO | None = None, default_level: str = "WARNING") -> None:
    """Level and format from the environment's settings; every record passes the scrubber of `env`'s secrets."""
    variables = DeploySettings.from_env(env).project
    level = variables.log_level or default_level
    handler = logging.StreamHandler(stream or sys.stderr)
    if variables.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(redacting_filter(env))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    # Alembic says "Running upgrade ..." per revision, some over two lines; a start-up that migrates is
    # not news at INFO, and a failed migration still raises and is explained in one line.
    logging.getLogger("alembic").setLevel(logging.WARNING)
