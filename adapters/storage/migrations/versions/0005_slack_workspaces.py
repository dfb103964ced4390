"""Slack's records in the bot's database: assistant thread contexts, OAuth installations, OAuth states.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)  # schema.py reads it back as UTCDateTime


def upgrade() -> None:
    op.create_table(
        "slack_assistant_threads",
        sa.Column("channel_id", sa.String(64), primary_key=True),
        sa.Column("thread_ts", sa.String(32), primary_key=True),
        sa.Column("context", sa.Text, nullable=False),
        sa.Column("updated_at", UTC_TIME, nullable=False),
    )
    op.create_table(
        "slack_installations",
        sa.Column("team_key", sa.String(80), primary_key=True),
        sa.Column("enterprise_id", sa.String(32)),
        sa.Column("team_id", sa.String(32)),
        sa.Column("team_name", sa.String(255)),
        sa.Column("bot_user_id", sa.String(32)),
        sa.Column("bot_token", sa.Text, nullable=False),
        sa.Column("installation", sa.Text, nullable=False),
        sa.Column("admin_channel", sa.String(64)),
        sa.Column("installed_at", UTC_TIME, nullable=False),
    )
    op.create_table(
        "slack_oauth_states",
        sa.Column("state", sa.String(64), primary_key=True),
        sa.Column("expires_at", UTC_TIME, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("slack_oauth_states")
    op.drop_table("slack_installations")
    op.drop_table("slack_assistant_threads")
