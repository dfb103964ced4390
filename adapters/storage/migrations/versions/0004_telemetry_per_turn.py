"""Telemetry as one row per turn (issue 18); a view `telemetry_events` keeps a row per stage for SQL readers.

A turn's stages become one JSON list in `telemetry_turns.stages`, each stage
`[stage, level, duration_ms, microseconds after created_at, span_id, payload]`: one insert per turn
instead of ten, and about a third of the bytes. Existing rows are carried over, a turn per
(session, interaction) run of consecutive rows. The view has the old table's columns, so queries
written against it keep working (its `created_at` is to the millisecond on SQLite).

A later revision that rebuilds `telemetry_turns` on SQLite (batch mode) drops the view first and
creates it again after.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
# Chained after the newest revision on main; re-parent it if another lands first (one line of heads).
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)
BATCH = 5000

turns = sa.table(
    "telemetry_turns",
    sa.column("id", sa.Integer),
    sa.column("session_id", sa.String),
    sa.column("interaction_id", sa.String),
    sa.column("created_at", UTC_TIME),
    sa.column("trace_id", sa.String),
    sa.column("stages", sa.Text),
)
events = sa.table(
    "telemetry_events",
    sa.column("id", sa.Integer),
    sa.column("session_id", sa.String),
    sa.column("interaction_id", sa.String),
    sa.column("stage", sa.String),
    sa.column("level", sa.String),
    sa.column("payload", sa.Text),
    sa.column("duration_ms", sa.Float),
    sa.column("created_at", UTC_TIME),
    sa.column("trace_id", sa.String),
    sa.column("span_id", sa.String),
)

VIEW = {
    "sqlite": """
CREATE VIEW telemetry_events AS
SELECT t.id * 1000 + s.key AS id, t.session_id, t.interaction_id,
       json_extract(s.value, '$[0]') AS stage, json_extract(s.value, '$[1]') AS level,
       json_extract(s.value, '$[5]') AS payload, json_extract(s.value, '$[2]') AS duration_ms,
       strftime('%Y-%m-%d %H:%M:%f', t.created_at, printf('%+.6f seconds', json_extract(s.value, '$[3]') / 1e6))
         AS created_at,
       t.trace_id, json_extract(s.value, '$[4]') AS span_id
FROM telemetry_turns t, json_each(t.stages) s
""",
    "postgresql": """
CREATE VIEW telemetry_events AS
SELECT t.id * 1000 + s.n - 1 AS id, t.session_id, t.interaction_id,
       s.v->>0 AS stage, s.v->>1 AS level, (s.v->5)::text AS payload, (s.v->>2)::float AS duration_ms,
       t.created_at + (s.v->>3)::bigint * interval '1 microsecond' AS created_at,
       t.trace_id, s.v->>4 AS span_id
FROM telemetry_turns t CROSS JOIN LATERAL json_array_elements(t.stages::json) WITH ORDINALITY AS s(v, n)
""",
}


def _aware(value: Any) -> datetime:
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _runs(rows: Iterator[Any]) -> Iterator[list[Any]]:
    """Consecutive rows of one (session, interaction): the events one turn committed together."""
    run: list[Any] = []
    for row in rows:
        if run and (row.session_id, row.interaction_id) != (run[0].session_id, run[0].interaction_id):
            yield run
            run = []
        run.append(row)
    if run:
        yield run


def _turn(run: list[Any]) -> dict[str, Any]:
    start = _aware(run[0].created_at)
    stages = [
        [
            r.stage,
            r.level,
            r.duration_ms,
            round((_aware(r.created_at) - start).total_seconds() * 1e6),
            r.span_id,
            json.loads(r.payload),
        ]
        for r in run
    ]
    return {
        "session_id": run[0].session_id,
        "interaction_id": run[0].interaction_id,
        "created_at": start,
        "trace_id": run[0].trace_id,
        "stages": json.dumps(stages, separators=(",", ":")),
    }


def upgrade() -> None:
    op.create_table(
        "telemetry_turns",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.String(length=255), nullable=False),
        sa.Column("interaction_id", sa.String(length=255), nullable=False),
        sa.Column("created_at", UTC_TIME, nullable=False),
        sa.Column("trace_id", sa.String(length=32), nullable=True),
        sa.Column("stages", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("telemetry_turns", schema=None) as batch_op:
        batch_op.create_index("ix_telemetry_turns_session", ["session_id", "id"], unique=False)
    bind = op.get_bind()
    old = bind.execute(sa.select(events).order_by(events.c.session_id, events.c.id))
    batch: list[dict[str, Any]] = []
    for run in _runs(iter(old)):
        batch.append(_turn(run))
        if len(batch) == BATCH:
            bind.execute(sa.insert(turns), batch)
            batch = []
    if batch:
        bind.execute(sa.insert(turns), batch)
    op.drop_table("telemetry_events")
    op.execute(VIEW[bind.dialect.name])


def downgrade() -> None:
    bind = op.get_bind()
    op.execute("DROP VIEW telemetry_events")
    op.create_table(
        "telemetry_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.String(length=255), nullable=False),
        sa.Column("interaction_id", sa.String(length=255), nullable=False),
        sa.Column("stage", sa.String(length=64), nullable=False),
        sa.Column("level", sa.String(length=8), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.Column("created_at", UTC_TIME, nullable=False),
        sa.Column("trace_id", sa.String(length=32), nullable=True),
        sa.Column("span_id", sa.String(length=16), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("telemetry_events", schema=None) as batch_op:
        batch_op.create_index("ix_telemetry_session", ["session_id", "id"], unique=False)
    rows: list[dict[str, Any]] = []
    for turn in bind.execute(sa.select(turns).order_by(turns.c.id)):
        start = _aware(turn.created_at)
        for stage, level, duration_ms, at, span_id, payload in json.loads(turn.stages):
            rows.append(
                {
                    "session_id": turn.session_id,
                    "interaction_id": turn.interaction_id,
                    "stage": stage,
                    "level": level,
                    "payload": json.dumps(payload, separators=(",", ":")),
                    "duration_ms": duration_ms,
                    "created_at": start + timedelta(microseconds=at),
                    "trace_id": turn.trace_id,
                    "span_id": span_id,
                }
            )
    if rows:
        bind.execute(sa.insert(events), rows)
    op.drop_table("telemetry_turns")
