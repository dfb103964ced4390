"""A turn's telemetry row: stages encoded once, read back as the events the turn emitted."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from adapters.storage.telemetry import events_of, turn_rows
from agent.domain.records import TelemetryEvent


@pytest.mark.parametrize("big", [2**40, 2**70], ids=["int64", "wider than orjson takes"])
def test_every_payload_value_reads_back_as_the_json_module_gives_it(big: int) -> None:
    start = datetime(2026, 11, 23, 1, 0, tzinfo=UTC)
    payload = {
        "big": big,
        "at": start,
        "by_number": {3: "three"},
        "text": "Grüße, ½ off → “now”",
        "nested": [1.5, None, True, ["a"]],
    }
    events = [
        TelemetryEvent(
            timestamp=start + timedelta(microseconds=n * 250),
            session_id="s-1",
            interaction_id="s-1:0",
            stage=stage,
            payload=payload if n else {},
            duration_ms=0.25,
            span_id=f"{n:016x}",
        )
        for n, stage in enumerate(("received", "intent_classified"))
    ]
    [row] = turn_rows(events)
    stored = SimpleNamespace(**row, id=1)
    back = events_of(stored)
    assert [e.model_dump() for e in back] == [
        {**e.model_dump(), "payload": json.loads(json.dumps(e.payload, default=str))} for e in events
    ]
    assert back[1].payload["big"] == big and back[1].payload["by_number"] == {"3": "three"}
