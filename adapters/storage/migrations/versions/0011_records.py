"""Records of kinds without a table of their own, as tools declare them (issue 48).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)  # schema.py reads it back as UTCDateTime


def upgrade() -> None:
    op.create_table(
        "records",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(48), nullable=False),
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("session_id", sa.String(255), nullable=False),
        sa.Column("owner", sa.String(255)),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("created_at", UTC_TIME, nullable=False),
    )
    op.create_index("ux_records_kind_key", "records", ["kind", "key"], unique=True)
    op.create_index("ix_records_kind_owner", "records", ["kind", "owner", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_records_kind_owner", table_name="records")
    op.drop_index("ux_records_kind_key", table_name="records")
    op.drop_table("records")
