"""Rate-limit pauses shared by every worker (issue 58).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)  # schema.py reads it back as UTCDateTime


def upgrade() -> None:
    op.create_table(
        "rate_pauses",
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("until", UTC_TIME, nullable=False),
        sa.Column("probe_until", UTC_TIME),
    )


def downgrade() -> None:
    op.drop_table("rate_pauses")
