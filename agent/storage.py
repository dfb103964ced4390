"""Everything the bot keeps, as the capabilities a store declares (adapters/storage/ implements them):
one Protocol per capability, bundled in `Storage`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal, Protocol, runtime_checkable

from agent.conversation.session import SessionState
from agent.domain.records import InboxEvent, Preferences, TaskRecord, TicketRecord, ToolRecord, TurnRecord
from agent.domain.types import Message, OutboundMessage, ToolResult


@runtime_checkable
class SessionStore(Protocol):
    """Conversation memory: session state, history and the turn's writes.

    One `commit` is one database transaction: state (optimistic lock on `version`),
    messages, telemetry, side effects and the tool ledger.
    """

    async def load(self, session_id: str, history_limit: int) -> tuple[SessionState | None, list[Message]]:
        """Return the saved state (None for a new session) and the latest messages, oldest first."""
        ...

    async def commit(self, turn: TurnRecord) -> None:
        """Write the turn atomically. Raises VersionConflict if another writer saved first."""
        ...

    async def ledger_get(self, key: str) -> ToolResult | None:
        """The stored result of a side-effecting tool call with this idempotency key."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class DemoData(Protocol):
    """The demo's own record: the day it first ran (its orders' dates are relative to that day), and
    a way to put it back as shipped, forgetting what the bot changed about it (refunds, reports)."""

    async def demo_started_on(self, today: date) -> date:
        """The day the demo first ran; `today` becomes it when none is recorded yet."""
        ...

    async def reset_demo(self) -> int:
        """Drops the bot's changes to the demo data and its first day; returns how many changes."""
        ...


class OrderUpdates(Protocol):
    """What the bot itself changed about orders (refunds issued), laid over the business data."""

    async def order_update(self, order_id: str) -> dict[str, Any] | None: ...

    async def updates_of(self, order_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """What the bot changed about each of these orders, keyed by order id (unchanged ones absent)."""
        ...


class RiskReports(Protocol):
    """Risk reports already filed, so asking about a release again the same day files nothing new."""

    async def risk_report_on(self, release_id: str, day: date, severity: str) -> dict[str, Any] | None:
        """The report filed for this release and severity on this UTC day (`id`, `created_at`), or None."""
        ...


@runtime_checkable
class SpendLedger(Protocol):
    """Dollars spent on LLM calls per UTC day and budget key, shared by every worker."""

    async def spent(self, day: str, keys: list[str]) -> dict[str, float]:
        """Today's dollars for those of `keys` that spent anything."""
        ...

    async def add(self, day: str, keys: list[str], dollars: float) -> None:
        """Add `dollars` to each key, atomically (two workers adding at once both count)."""
        ...


@runtime_checkable
class PreferenceMemory(Protocol):
    async def read(self, customer_id: str) -> Preferences: ...

    async def write(self, customer_id: str, update: Preferences) -> None:
        """Merge `update` into the stored preferences; an empty update is a no-op."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class EventInbox(Protocol):
    """Exactly-once intake: an event is stored by its platform key before any work is done."""

    async def accept(self, event: InboxEvent) -> bool:
        """Store the event; False if its key was seen before (a retry or a duplicate delivery)."""
        ...

    async def finish(self, key: str) -> None:
        """Mark the event handled (a turn's commit also does this in its own transaction)."""
        ...

    async def unfinished(self, older_than_seconds: float) -> list[InboxEvent]:
        """Events not done yet (turn not committed, or answers not all sent), oldest first."""
        ...

    async def knows(self, session_key: str) -> bool:
        """Whether the bot takes part in this conversation: a saved session or an accepted event."""
        ...


class SessionQueue(Protocol):
    """The inbox as a queue per conversation, leased to one worker at a time (bots/dispatch.py)."""

    async def claim(self, session_key: str, owner: str, seconds: float) -> bool: ...

    async def release(self, session_key: str, owner: str) -> None: ...

    async def next_event(self, session_key: str) -> InboxEvent | None: ...

    async def ready_sessions(self, owner: str) -> list[str]: ...

    async def postpone(self, key: str, seconds: float) -> int: ...


class LeasedInbox(EventInbox, SessionQueue, Protocol):
    """The exactly-once inbox the serving channels run on: intake and per-conversation leases."""


# Where an outgoing message stands before a send (Outbox.begin).
Begun = Literal["new", "pending", "sending", "sent", "skipped"]


class Outbox(Protocol):
    """What a channel event's turn shows, recorded before it is sent and marked once it is, so
    recovery sends only what was not."""

    async def begin(self, message: OutboundMessage, event_key: str, session_key: str) -> Begun:
        """Where this message stands; one the turn did not commit is recorded as `sending`, reported `new`."""
        ...

    async def mark_sent(self, message_id: str, ref: str) -> None: ...

    async def unsent(self, event_key: str) -> list[OutboundMessage]:
        """The event's committed answers not yet marked sent, in the order the turn produced them."""
        ...

    async def ref(self, message_id: str) -> str | None:
        """The platform id recorded for a sent message."""
        ...

    async def unshown_pre(self, event_key: str) -> tuple[list[OutboundMessage], bool]:
        """The event's pre-messages recorded but never marked sent, and whether any of its
        answers was sent already (then showing them now would put them after their answer)."""
        ...

    async def skip(self, message_id: str) -> None:
        """Record that a message is left out on purpose (never sent, never retried)."""
        ...


@runtime_checkable
class TaskReader(Protocol):
    """A user's task list, as the task tools read it (writes are the turn's side effects)."""

    async def list_tasks(self, owner: str) -> list[TaskRecord]:
        """Every task of `owner` that is not deleted, by number."""
        ...

    async def next_task_number(self, owner: str) -> int:
        """The number a new task of `owner` gets; numbers of deleted tasks are not reused."""
        ...


@runtime_checkable
class ToolRecords(Protocol):
    """Records tools wrote of kinds without a table of their own (`SideEffect.kind`), read back.
    They are written in the turn's commit (`SessionStore.commit`), once per kind and key."""

    async def find_records(self, kind: str, owner: str, key: str | None = None) -> list[ToolRecord]:
        """`owner`'s records of `kind` (only the one with `key`, if given), oldest first."""


class TicketReader(Protocol):
    """The support tickets the bot opened, as the ticket lookup reads them (opening one is a turn's
    side effect)."""

    async def tickets_of(self, customer_id: str | None, session_id: str, limit: int) -> list[TicketRecord]:
        """A customer's tickets (a guest's: those opened in this conversation), newest first."""
        ...


@runtime_checkable
class RefundHistory(Protocol):
    """Counts the policy engine reads."""

    async def count_refunds(self, customer_id: str, since: datetime) -> int: ...


@runtime_checkable
class HandoffQueue(Protocol):
    """Sessions waiting for a person, so an unclaimed handoff can be re-alerted."""

    async def unclaimed(self, alerted_before: datetime) -> list[str]:
        """Session ids whose handoff is still `requested` and was last alerted before the time."""
        ...


class SchemaState(Protocol):
    """Where a database's schema stands against the newest migration."""

    current: str | None
    head: str

    @property
    def behind(self) -> bool: ...

    def model_dump(self) -> dict[str, Any]: ...


class Database(Protocol):
    """The SQL database under a store, for what lives beside the conversations and is no business
    of the core: a channel's own tables (Slack installations), health checks, operators' metrics,
    admin queries. A unit is a function of one database connection, run in one transaction."""

    url: str  # where it is, without a password (status lines)

    async def ensure_schema(self) -> None:
        """Fail now, not on the first message: the database answers and its schema is current."""
        ...

    async def schema_status(self) -> SchemaState: ...

    async def run(self, fn: Any, *args: Any, what: str) -> Any:
        """Run `fn(connection, *args)` in one transaction; database failures become StorageError."""
        ...

    async def fetch(self, query: str, **params: Any) -> Sequence[Any]:
        """Rows of a read-only SQL query: for the CLI, admin commands and tests."""
        ...


@dataclass(frozen=True)
class Storage:
    """Everything the bot keeps, as the capabilities a store declares: one Protocol per field, and a
    capability left None is not provided; what needs it says so at startup or does without.

    Args:
        sessions: conversation state, history and each turn's writes (the one required part).
        tasks: the task agent's lists (None: the task tools are not offered).
        refunds: refund counts the policy engine reads (None: no per-customer refund limits).
        tickets: the tickets the bot opened (None: customers cannot ask after theirs).
        orders: what the bot changed about orders, laid over the business data.
        handoffs: the queue of unclaimed handoffs (None: no re-alert sweep).
        risk_reports: reports filed today, so a release is not reported twice in a day.
        demo: the demo's first day and its reset (None: order dates as the data has them).
        inbox: exactly-once intake; the Slack and Discord channels need it.
        outbox: exactly-once delivery; the Slack and Discord channels need it.
        spend: LLM dollars per day across workers (None: the daily budgets count this process only).
        preferences: customers' preferences across conversations (None: not remembered).
        records: what tools wrote of kinds without a table of their own, read back (None: a tool
            that reads its records is told this storage keeps none).
        database: the SQL database itself (health checks, metrics, admin queries, Slack's tables).
    """

    sessions: SessionStore
    tasks: TaskReader | None = None
    tickets: TicketReader | None = None
    refunds: RefundHistory | None = None
    orders: OrderUpdates | None = None
    handoffs: HandoffQueue | None = None
    risk_reports: RiskReports | None = None
    demo: DemoData | None = None
    inbox: LeasedInbox | None = None
    outbox: Outbox | None = None
    spend: SpendLedger | None = None
    preferences: PreferenceMemory | None = None
    records: ToolRecords | None = None
    database: Database | None = None
