"""The database schema: every table agentbot writes, in one MetaData.

A change here needs a migration beside it (`agentbot db revision -m "..."` writes one from the
difference; tests/adapters/test_migrations.py fails until it exists). Timestamps are stored as UTC
and always read back timezone-aware (UTCDateTime).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    DateTime,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    text,
)

from agent.errors import StorageError


class UTCDateTime(TypeDecorator[datetime]):
    """Stores UTC, always returns timezone-aware datetimes (SQLite keeps no zone of its own)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime: agentbot stores timezone-aware UTC only")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


metadata = MetaData()

sessions = Table(
    "sessions",
    metadata,
    Column("id", String(255), primary_key=True),
    Column("version", Integer, nullable=False),
    Column("customer_id", String(255)),
    Column("channel_type", String(32)),
    Column("state", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)
messages = Table(
    "messages",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", String(255), nullable=False),
    Column("interaction_id", String(255)),
    Column("role", String(16), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("text", Text, nullable=False),
    Column("meta", Text, nullable=False, default="{}"),
    Column("created_at", UTCDateTime, nullable=False),
    Column("trace_id", String(32)),
    Index("ix_messages_session", "session_id", "id"),
)
# A turn's telemetry is one row: its stages as a JSON list of [stage, level, duration_ms,
# microseconds after created_at, span_id, payload] (`adapters/storage/telemetry.py`). One row per
# stage cost ten inserts per turn and most of the database's bytes. The view `telemetry_events`
# (migration 0004) still shows one row per stage to SQL readers.
telemetry = Table(
    "telemetry_turns",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", String(255), nullable=False),
    Column("interaction_id", String(255), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),  # the first stage's time
    Column("trace_id", String(32)),
    Column("stages", Text, nullable=False),
    Index("ix_telemetry_turns_session", "session_id", "id"),
)
tickets = Table(
    "tickets",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("session_id", String(255), nullable=False),
    Column("customer_id", String(255)),
    Column("summary", Text, nullable=False),
    Column("order_id", String(64)),
    Column("status", String(32), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)
handoffs = Table(
    "handoffs",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("session_id", String(255), nullable=False),
    Column("customer_id", String(255)),
    Column("reason", Text, nullable=False),
    Column("status", String(32), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)
risk_reports = Table(
    "risk_reports",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("session_id", String(255), nullable=False),
    Column("release_id", String(64), nullable=False),
    Column("severity", String(16), nullable=False),
    Column("findings", Text, nullable=False),  # a JSON list of sentences
    Column("created_at", UTCDateTime, nullable=False),
)
tool_ledger = Table(
    "tool_ledger",
    metadata,
    Column("idempotency_key", String(64), primary_key=True),
    Column("session_id", String(255), nullable=False),
    Column("tool", String(64), nullable=False),
    Column("result", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

inbox = Table(
    "inbox",
    metadata,
    Column("key", String(255), primary_key=True),
    Column("session_key", String(255), nullable=False),
    Column("payload", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("accepted_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime),
    # accepted -> committed (the turn's answers are in the outbox) -> done (they were sent)
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("retry_at", UTCDateTime),  # a failed delivery waits until then before it is tried again
    # The platform's time of the message (seconds since the epoch): a session's events run in this order.
    Column("written_at", Float),
    Index("ix_inbox_status", "status", "accepted_at"),
    Index("ix_inbox_session", "session_key", "status", "accepted_at"),
)
# One worker at a time owns a session's queue: it holds this row and renews it while it works; a
# crashed worker's row expires and another worker takes the session over.
session_leases = Table(
    "session_leases",
    metadata,
    Column("session_key", String(255), primary_key=True),
    Column("owner", String(128), nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
)
# A platform's "slow down" (HTTP 429 with Retry-After), shared by every worker: one row per
# platform, workspace (a digest of its token) and method. Nobody calls the method before `until`;
# after it one worker sends a probe (`probe_until` holds the others meanwhile) and a success deletes
# the row.
rate_pauses = Table(
    "rate_pauses",
    metadata,
    Column("key", String(255), primary_key=True),
    Column("until", UTCDateTime, nullable=False),
    Column("probe_until", UTCDateTime),
)
# The transactional outbox: every message a channel event's turn shows, by a stable id derived from
# the event. Answers are written in the turn's commit and sent after it; pre-messages and notices
# are written just before they are sent. `sent` rows are never sent again.
outbox = Table(
    "outbox",
    metadata,
    Column("id", String(255), primary_key=True),
    Column("event_key", String(255), nullable=False),
    Column("session_key", String(255), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("kind", String(16), nullable=False),
    Column("body", Text, nullable=False),  # the OutboundMessage as JSON
    Column("status", String(16), nullable=False),  # pending | sending | sent
    Column("ref", String(255)),  # the platform's id of what was posted (Slack ts, Discord message id)
    Column("created_at", UTCDateTime, nullable=False),
    Column("sent_at", UTCDateTime),
    Index("ix_outbox_event", "event_key", "seq"),
)

refunds = Table(
    "refunds",
    metadata,
    Column("id", String(64), primary_key=True),  # from the confirmation hash: one refund per confirmed action
    Column("session_id", String(255), nullable=False),
    Column("customer_id", String(255)),
    Column("order_id", String(64), nullable=False),
    Column("amount", Float, nullable=False),
    Column("status", String(32), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_refunds_customer", "customer_id", "created_at"),
)
# The demo order data is read-only; what this bot changed about an order (a refund) is kept here
# and laid over it by adapters/data/overlay.py, so later lookups and policies see it.
order_updates = Table(
    "order_updates",
    metadata,
    Column("order_id", String(64), primary_key=True),
    Column("data", Text, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)
tasks = Table(
    "tasks",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("owner", String(255), nullable=False),
    Column("number", Integer, nullable=False),
    Column("title", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    # Numbers are per owner and unique: two turns that picked the same number cannot both commit.
    Index("ux_tasks_owner_number", "owner", "number", unique=True),
)
# One row per session that was ever handed to people, so a sweep finds unclaimed ones.
handoff_queue = Table(
    "handoff_queue",
    metadata,
    Column("session_id", String(255), primary_key=True),
    Column("status", String(16), nullable=False),
    Column("reason", Text, nullable=False),
    Column("requested_at", UTCDateTime, nullable=False),
    Column("alerted_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

customer_preferences = Table(
    "customer_preferences",
    metadata,
    Column("customer_id", String(255), primary_key=True),
    Column("data", Text, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)
# Dollars spent on LLM calls per UTC day and budget key (customer:C-001, channel:slack:C1), shared
# by every worker and kept across restarts (migration 0003_llm_spend).
llm_spend = Table(
    "llm_spend",
    metadata,
    Column("day", String(10), primary_key=True),
    Column("key", String(255), primary_key=True),
    Column("dollars", Float, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# Slack's own records (migration 0005_slack_workspaces). The channel a person looks at beside an
# assistant thread (bolt's thread context), kept per thread so a later message's turn knows it.
slack_assistant_threads = Table(
    "slack_assistant_threads",
    metadata,
    Column("channel_id", String(64), primary_key=True),
    Column("thread_ts", String(32), primary_key=True),
    Column("context", Text, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)
# One row per workspace (or Enterprise Grid org) that installed the app through OAuth: its bot
# token and who the bot is there. Uninstalling deletes it.
slack_installations = Table(
    "slack_installations",
    metadata,
    Column("team_key", String(80), primary_key=True),  # "-:<team id>", or "<enterprise id>:-" org-wide
    Column("enterprise_id", String(32)),
    Column("team_id", String(32)),
    Column("team_name", String(255)),
    Column("bot_user_id", String(32)),
    Column("bot_token", Text, nullable=False),
    Column("installation", Text, nullable=False),  # slack_sdk's Installation, as JSON
    Column("installed_at", UTCDateTime, nullable=False),
)
# What one workspace of an OAuth install has of its own (migration 0008_slack_org_workspaces): the
# admin channel set there, the Grid org it belongs to (so an alert about its conversation finds an
# org-wide install's token), and when an org-wide install lost access to it. Deleted with the install.
slack_workspaces = Table(
    "slack_workspaces",
    metadata,
    Column("team_id", String(32), primary_key=True),
    Column("enterprise_id", String(32)),
    Column("admin_channel", String(64)),
    Column("revoked_at", UTCDateTime),
    Column("updated_at", UTCDateTime, nullable=False),
)
# OAuth `state` values handed to browsers starting an install; each is consumed once.
slack_oauth_states = Table(
    "slack_oauth_states",
    metadata,
    Column("state", String(64), primary_key=True),
    Column("expires_at", UTCDateTime, nullable=False),
)
# Discord's records (migration 0009_discord_guilds): per server (guild), the channel its admins chose
# with `/agentbot admin-channel` for that server's admin alerts, and who chose it.
discord_guilds = Table(
    "discord_guilds",
    metadata,
    Column("guild_id", String(32), primary_key=True),
    Column("admin_channel_id", String(32)),
    Column("set_by", String(32)),
    Column("updated_at", UTCDateTime, nullable=False),
)
# The day the demo first ran: demo data's dates are day offsets from it ("+6d"), so an order shipped
# yesterday arrives next week whenever the demo starts (migration 0007_demo_calendar). One row;
# `agentbot demo reset` deletes it with the bot's changes to the demo orders.
demo_calendar = Table(
    "demo_calendar",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("started_on", String(10), nullable=False),
)

# Messages the bot did not understand well, kept for a person to label (agent/review/, migration
# 0010_review_items). Written in the turn's transaction; texts redacted like traces; one workspace's
# items are read only under that workspace. Deleted after settings' review_retention_days.
review_items = Table(
    "review_items",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("kind", String(24), nullable=False),
    Column("status", String(16), nullable=False),
    Column("text", Text, nullable=False),
    Column("reading", Text, nullable=False),  # ReviewReading as JSON
    Column("nearest", String(128)),  # the intent the bot thought likeliest, for grouping
    Column("session_id", String(255), nullable=False),
    Column("interaction_id", String(255), nullable=False),
    Column("channel", String(32), nullable=False),
    Column("workspace", String(255), nullable=False),
    Column("followed_by", Text),
    Column("label", String(255)),
    Column("created_at", UTCDateTime, nullable=False),
    Column("labelled_at", UTCDateTime),
    Index("ix_review_items_waiting", "workspace", "status", "created_at"),
)

# What tools write of a kind without a table of its own (`Tool.records`, migration 0011_records): one
# row per kind and key, written once in the turn's transaction, read back by its owner (the
# customer, or a guest in one conversation). A new kind of record needs no migration.
records = Table(
    "records",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(48), nullable=False),
    Column("key", String(255), nullable=False),
    Column("session_id", String(255), nullable=False),
    Column("owner", String(255)),
    Column("data", Text, nullable=False),  # JSON
    Column("created_at", UTCDateTime, nullable=False),
    Index("ux_records_kind_key", "kind", "key", unique=True),
    Index("ix_records_kind_owner", "kind", "owner", "created_at"),
)

EFFECT_TABLES = {"ticket": tickets, "handoff": handoffs, "refund": refunds, "task": tasks, "risk_report": risk_reports}


def integrity_unit(conn: Connection) -> list[str]:
    """SQLite's quick check: an empty list when the file is sound, else what it found."""
    if conn.dialect.name != "sqlite":
        return []
    found = [str(r[0]) for r in conn.execute(text("PRAGMA quick_check")).all()]
    return [] if found == ["ok"] else found


def damaged(path: str, problems: list[str]) -> StorageError:
    """The error for a damaged SQLite file: where it is and what to do, in one line (the CLI and
    the services print it once at startup)."""
    return StorageError(
        f"the SQLite database {path} is damaged ({'; '.join(problems[:3])}); stop agentbot, keep a copy of the "
        f"file, then restore a backup or rebuild it: sqlite3 {path} .recover | sqlite3 recovered.db"
    )
