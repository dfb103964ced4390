"""Process logging from AGENTBOT_LOG_LEVEL and AGENTBOT_LOG_FORMAT (`text`, or `json` for log collectors)."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TextIO

from agent.errors import ConfigError

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
FORMATS = ("text", "json")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, message, and the traceback if any."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(env: Mapping[str, str], stream: TextIO | None = None) -> None:
    level = (env.get("AGENTBOT_LOG_LEVEL") or "WARNING").upper()
    if level not in LEVELS:
        raise ConfigError("environment", f"{level!r} is not one of {', '.join(LEVELS)}", field="AGENTBOT_LOG_LEVEL")
    fmt = (env.get("AGENTBOT_LOG_FORMAT") or "text").lower()
    if fmt not in FORMATS:
        raise ConfigError("environment", f"{fmt!r} is not one of {', '.join(FORMATS)}", field="AGENTBOT_LOG_FORMAT")
    handler = logging.StreamHandler(stream or sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
