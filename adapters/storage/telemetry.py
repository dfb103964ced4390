"""A turn's telemetry as one database row, and back.

The row holds the turn's ids, the first stage's time and the stages as one JSON list, each stage
`[stage, level, duration_ms, microseconds after created_at, span_id, payload]`. Reading a row back
gives the same `TelemetryEvent`s the turn emitted (timestamps to the microsecond). SQL readers that
want a row per stage have the view `telemetry_events` (migration 0004), with the old columns.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from adapters.encoding import dumps
from agent.domain.records import TelemetryEvent

_US = timedelta(microseconds=1)


def turn_rows(events: Sequence[TelemetryEvent]) -> list[dict[str, Any]]:
    """The rows to insert for a turn's events: one per interaction (a turn has one; an admin action too)."""
    by_turn: dict[tuple[str, str], list[TelemetryEvent]] = {}
    for e in events:
        by_turn.setdefault((e.session_id, e.interaction_id), []).append(e)
    rows = []
    for (session_id, interaction_id), group in by_turn.items():
        start = group[0].timestamp
        stages = [[e.stage, e.level, e.duration_ms, (e.timestamp - start) // _US, e.span_id, e.payload] for e in group]
        rows.append(
            {
                "session_id": session_id,
                "interaction_id": interaction_id,
                "created_at": start,
                "trace_id": group[0].trace_id,
                "stages": dumps(stages).decode(),
            }
        )
    return rows


def events_of(row: Any) -> list[TelemetryEvent]:
    """A stored turn's events, in the order they were emitted. `row` has the table's columns."""
    start = row.created_at if isinstance(row.created_at, datetime) else datetime.fromisoformat(row.created_at)
    start = start if start.tzinfo else start.replace(tzinfo=UTC)
    return [
        TelemetryEvent.model_construct(
            timestamp=start + timedelta(microseconds=at),
            session_id=row.session_id,
            interaction_id=row.interaction_id,
            stage=stage,
            level=level,
            payload=payload,
            duration_ms=duration_ms,
            trace_id=row.trace_id,
            span_id=span_id,
        )
        for stage, level, duration_ms, at, span_id, payload in json.loads(row.stages)
    ]


def all_events(rows: Iterable[Any]) -> list[TelemetryEvent]:
    return [e for row in rows for e in events_of(row)]
