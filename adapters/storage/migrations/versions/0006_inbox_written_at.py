"""The platform's own time of each inbox event (Slack `ts`, Discord snowflake), so a session's events
run in the order they were written, not the order they were stored (issue 27).

Events stored before it have none and run first, in arrival order, as they did.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.add_column(sa.Column("written_at", sa.Float, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.drop_column("written_at")
