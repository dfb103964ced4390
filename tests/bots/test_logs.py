"""AGENTBOT_LOG_LEVEL and AGENTBOT_LOG_FORMAT=json, as a log collector reads them."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from agent.errors import ConfigError
from bots.logs import configure_logging


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers, root.level = handlers, level


def test_json_lines_with_utc_time_level_logger_and_message() -> None:
    stream = io.StringIO()
    configure_logging({"AGENTBOT_LOG_LEVEL": "info", "AGENTBOT_LOG_FORMAT": "json"}, stream)
    logging.getLogger("agentbot.slack").info("listening on %s", "http://0.0.0.0:5000")
    logging.getLogger("agentbot.slack").debug("not shown at INFO")
    (line,) = stream.getvalue().splitlines()
    entry = json.loads(line)
    assert entry["level"] == "INFO" and entry["logger"] == "agentbot.slack"
    assert entry["message"] == "listening on http://0.0.0.0:5000" and entry["time"].endswith("+00:00")


def test_a_traceback_stays_inside_its_json_line() -> None:
    stream = io.StringIO()
    configure_logging({"AGENTBOT_LOG_FORMAT": "json"}, stream)
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("agentbot").exception("turn failed")
    (line,) = stream.getvalue().splitlines()
    assert "ValueError: boom" in json.loads(line)["error"]


@pytest.mark.parametrize(("name", "value"), [("AGENTBOT_LOG_LEVEL", "loud"), ("AGENTBOT_LOG_FORMAT", "xml")])
def test_a_wrong_value_names_the_variable(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        configure_logging({name: value}, io.StringIO())
