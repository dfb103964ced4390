"""Outbox, session leases, inbox retries, unique task numbers (issue 15).

Task numbers were max+1 without a constraint, so a database may hold duplicates (two threads adding
at once). They are renumbered after the owner's highest number before the unique index is created.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 18:49:33.487565
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "outbox",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("event_key", sa.String(length=255), nullable=False),
        sa.Column("session_key", sa.String(length=255), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("ref", sa.String(length=255), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.create_index("ix_outbox_event", ["event_key", "seq"], unique=False)

    op.create_table(
        "session_leases",
        sa.Column("session_key", sa.String(length=255), nullable=False),
        sa.Column("owner", sa.String(length=128), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("session_key"),
    )
    with op.batch_alter_table("inbox", schema=None) as batch_op:
        batch_op.add_column(sa.Column("attempts", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("retry_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index("ix_inbox_session", ["session_key", "status", "accepted_at"], unique=False)

    _renumber_duplicate_tasks()
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tasks_owner"))
        batch_op.create_index("ux_tasks_owner_number", ["owner", "number"], unique=True)


def _renumber_duplicate_tasks() -> None:
    bind = op.get_bind()
    tasks = sa.table("tasks", sa.column("id"), sa.column("owner"), sa.column("number"))
    rows = bind.execute(
        sa.select(tasks.c.id, tasks.c.owner, tasks.c.number).order_by(tasks.c.owner, tasks.c.number, tasks.c.id)
    ).all()
    top: dict[str, int] = {}
    for row in rows:
        top[row.owner] = max(top.get(row.owner, 0), row.number)
    seen: set[tuple[str, int]] = set()
    for row in rows:
        if (row.owner, row.number) in seen:
            top[row.owner] += 1
            bind.execute(tasks.update().where(tasks.c.id == row.id).values(number=top[row.owner]))
        else:
            seen.add((row.owner, row.number))


def downgrade() -> None:
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.drop_index("ux_tasks_owner_number")
        batch_op.create_index(batch_op.f("ix_tasks_owner"), ["owner", "number"], unique=False)

    with op.batch_alter_table("inbox", schema=None) as batch_op:
        batch_op.drop_index("ix_inbox_session")
        batch_op.drop_column("retry_at")
        batch_op.drop_column("attempts")

    op.drop_table("session_leases")
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.drop_index("ix_outbox_event")

    op.drop_table("outbox")
