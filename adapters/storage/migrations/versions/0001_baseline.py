"""Baseline: the tables agentbot 0.1 created with metadata.create_all.

Databases from before migrations existed have some or all of these tables and no alembic_version;
this revision creates only what is missing and adds the columns that 0.1 builds added later, so such
a database is adopted with its rows. The tables are frozen copies: later schema changes go in new
revisions, never here.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)
frozen = sa.MetaData()

sa.Table(
    "sessions",
    frozen,
    sa.Column("id", sa.String(255), primary_key=True),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("customer_id", sa.String(255)),
    sa.Column("channel_type", sa.String(32)),
    sa.Column("state", sa.Text, nullable=False),
    sa.Column("created_at", UTC_TIME, nullable=False),
    sa.Column("updated_at", UTC_TIME, nullable=False),
)
sa.Table(
    "messages",
    frozen,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session_id", sa.String(255), nullable=False),
    sa.Column("interaction_id", sa.String(255)),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("meta", sa.Text, nullable=False),
    sa.Column("created_at", UTC_TIME, nullable=False),
    sa.Column("trace_id", sa.String(32)),
    sa.Index("ix_messages_session", "session_id", "id"),
)
sa.Table(
    "telemetry_events",
    frozen,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session_id", sa.String(255), nullable=False),
    sa.Column("interaction_id", sa.String(255), nullable=False),
    sa.Column("stage", sa.String(64), nullable=False),
    sa.Column("level", sa.String(8), nullable=False),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("duration_ms", sa.Float, nullable=False),
    sa.Column("created_at", UTC_TIME, nullable=False),
    sa.Column("trace_id", sa.String(32)),
    sa.Column("span_id", sa.String(16)),
    sa.Index("ix_telemetry_session", "session_id", "id"),
)
sa.Table(
    "tickets",
    frozen,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("session_id", sa.String(255), nullable=False),
    sa.Column("customer_id", sa.String(255)),
    sa.Column("summary", sa.Text, nullable=False),
    sa.Column("order_id", sa.String(64)),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("created_at", UTC_TIME, nullable=False),
)
sa.Table(
    "handoffs",
    frozen,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("session_id", sa.String(255), nullable=False),
    sa.Column("customer_id", sa.String(255)),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("created_at", UTC_TIME, nullable=False),
)
sa.Table(
    "risk_reports",
    frozen,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("session_id", sa.String(255), nullable=False),
    sa.Column("release_id", sa.String(64), nullable=False),
    sa.Column("severity", sa.String(16), nullable=False),
    sa.Column("findings", sa.Text, nullable=False),
    sa.Column("created_at", UTC_TIME, nullable=False),
)
sa.Table(
    "tool_ledger",
    frozen,
    sa.Column("idempotency_key", sa.String(64), primary_key=True),
    sa.Column("session_id", sa.String(255), nullable=False),
    sa.Column("tool", sa.String(64), nullable=False),
    sa.Column("result", sa.Text, nullable=False),
    sa.Column("created_at", UTC_TIME, nullable=False),
)
sa.Table(
    "inbox",
    frozen,
    sa.Column("key", sa.String(255), primary_key=True),
    sa.Column("session_key", sa.String(255), nullable=False),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("accepted_at", UTC_TIME, nullable=False),
    sa.Column("finished_at", UTC_TIME),
    sa.Index("ix_inbox_status", "status", "accepted_at"),
)
sa.Table(
    "refunds",
    frozen,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("session_id", sa.String(255), nullable=False),
    sa.Column("customer_id", sa.String(255)),
    sa.Column("order_id", sa.String(64), nullable=False),
    sa.Column("amount", sa.Float, nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("created_at", UTC_TIME, nullable=False),
    sa.Index("ix_refunds_customer", "customer_id", "created_at"),
)
sa.Table(
    "order_updates",
    frozen,
    sa.Column("order_id", sa.String(64), primary_key=True),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("updated_at", UTC_TIME, nullable=False),
)
sa.Table(
    "tasks",
    frozen,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("owner", sa.String(255), nullable=False),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("created_at", UTC_TIME, nullable=False),
    sa.Column("updated_at", UTC_TIME, nullable=False),
    sa.Index("ix_tasks_owner", "owner", "number"),
)
sa.Table(
    "handoff_queue",
    frozen,
    sa.Column("session_id", sa.String(255), primary_key=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("requested_at", UTC_TIME, nullable=False),
    sa.Column("alerted_at", UTC_TIME, nullable=False),
    sa.Column("updated_at", UTC_TIME, nullable=False),
)
sa.Table(
    "customer_preferences",
    frozen,
    sa.Column("customer_id", sa.String(255), primary_key=True),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("updated_at", UTC_TIME, nullable=False),
)

# Columns that 0.1 development builds added after their table first shipped.
LATE_COLUMNS = {"messages": ["trace_id"], "telemetry_events": ["trace_id", "span_id"]}


def upgrade() -> None:
    bind = op.get_bind()
    existing = set(sa.inspect(bind).get_table_names())
    for table in frozen.sorted_tables:
        if table.name not in existing:
            table.create(bind)
    inspector = sa.inspect(bind)
    for table_name, names in LATE_COLUMNS.items():
        have = {c["name"] for c in inspector.get_columns(table_name)}
        for name in names:
            if name not in have:
                column = frozen.tables[table_name].c[name]
                op.add_column(table_name, sa.Column(name, column.type))


def downgrade() -> None:
    for table in reversed(frozen.sorted_tables):
        op.drop_table(table.name)
