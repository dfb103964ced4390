"""The demo's first-run day, which demo data's relative dates count from (issue 29).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "demo_calendar",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("started_on", sa.String(10), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("demo_calendar")
