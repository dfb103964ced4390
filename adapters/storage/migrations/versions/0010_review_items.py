"""Misses kept for review: messages the bot did not understand well, for people to label (issue 46).

Revision ID: 0010
Revises: 0007
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)  # schema.py reads it back as UTCDateTime


def upgrade() -> None:
    op.create_table(
        "review_items",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("kind", sa.String(24), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("reading", sa.Text, nullable=False),
        sa.Column("nearest", sa.String(128)),
        sa.Column("session_id", sa.String(255), nullable=False),
        sa.Column("interaction_id", sa.String(255), nullable=False),
        sa.Column("channel", sa.String(32), nullable=False),
        sa.Column("workspace", sa.String(255), nullable=False),
        sa.Column("followed_by", sa.Text),
        sa.Column("label", sa.String(255)),
        sa.Column("created_at", UTC_TIME, nullable=False),
        sa.Column("labelled_at", UTC_TIME),
    )
    op.create_index("ix_review_items_waiting", "review_items", ["workspace", "status", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_review_items_waiting", table_name="review_items")
    op.drop_table("review_items")
