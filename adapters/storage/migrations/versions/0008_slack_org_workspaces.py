"""Slack workspaces of their own: per-workspace admin channels, also under an org-wide Grid install (issue 47).

An org-wide (Enterprise Grid) install is one installation row serving many workspaces, so the
admin channel moves from the installation to a row per workspace, which also names the workspace's
org and records when an org-wide install lost access to it.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)  # schema.py reads it back as UTCDateTime


def upgrade() -> None:
    op.create_table(
        "slack_workspaces",
        sa.Column("team_id", sa.String(32), primary_key=True),
        sa.Column("enterprise_id", sa.String(32)),
        sa.Column("admin_channel", sa.String(64)),
        sa.Column("revoked_at", UTC_TIME),
        sa.Column("updated_at", UTC_TIME, nullable=False),
    )
    # Admin channels set so far belong to workspace installs, each row naming its team.
    op.execute(
        "INSERT INTO slack_workspaces (team_id, enterprise_id, admin_channel, updated_at) "
        "SELECT team_id, enterprise_id, admin_channel, installed_at FROM slack_installations "
        "WHERE admin_channel IS NOT NULL AND team_id IS NOT NULL"
    )
    with op.batch_alter_table("slack_installations") as batch:
        batch.drop_column("admin_channel")


def downgrade() -> None:
    with op.batch_alter_table("slack_installations") as batch:
        batch.add_column(sa.Column("admin_channel", sa.String(64)))
    op.execute(
        "UPDATE slack_installations SET admin_channel = (SELECT w.admin_channel FROM slack_workspaces w "
        "WHERE w.team_id = slack_installations.team_id)"
    )
    op.drop_table("slack_workspaces")
