"""Compact JSON for what agentbot writes (telemetry rows, trace files), with orjson.

Where orjson and the json module differ, the json module's answer is kept: a datetime as `str()`
writes it, any other unknown value by `str()`, keys that are not strings as strings, and an integer
wider than 64 bits (which orjson refuses) through the json module itself.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME


def dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value, default=str, option=_OPTIONS)
    except orjson.JSONEncodeError:
        return json.dumps(value, default=str, separators=(",", ":")).encode()
