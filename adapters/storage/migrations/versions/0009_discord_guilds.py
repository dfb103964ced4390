"""Discord's records in the bot's database: each server's admin channel (issue 49).

Revision ID: 0009
Revises: 0007
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)  # schema.py reads it back as UTCDateTime


def upgrade() -> None:
    op.create_table(
        "discord_guilds",
        sa.Column("guild_id", sa.String(32), primary_key=True),
        sa.Column("admin_channel_id", sa.String(32)),
        sa.Column("set_by", sa.String(32)),
        sa.Column("updated_at", UTC_TIME, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("discord_guilds")
