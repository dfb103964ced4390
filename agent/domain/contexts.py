"""What crosses the core's seams besides its data model: policy and tool contexts, a planner's request, preferences."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agent.conversation.session import Goal, SessionState, Speaker
from agent.domain.records import Preferences, ToolRecord
from agent.domain.types import Intent, Message, ToolResult, utcnow
from agent.errors import ToolError

if TYPE_CHECKING:
    from agent.interfaces import DataSource, ToolRecords


class TurnReads:
    """The business data as one attempt at a turn reads it: its policy check and its tools see the
    same order, read once. The router starts one per attempt, so a retried turn reads afresh.

    Args:
        data: where orders and customers come from.
    """

    def __init__(self, data: DataSource) -> None:
        self.data = data
        self._orders: dict[str, dict[str, Any] | None] = {}
        self._orders_of: dict[str, list[dict[str, Any]]] = {}

    async def get_order(self, order_id: str) -> dict[str, Any] | None:
        if order_id not in self._orders:
            self._orders[order_id] = await self.data.get_order(order_id)
        return self._orders[order_id]  # shared, like every DataSource's answers: read, never changed

    async def get_customer(self, customer_id: str) -> dict[str, Any] | None:
        return await self.data.get_customer(customer_id)

    async def orders_of(self, customer_id: str) -> list[dict[str, Any]]:
        if customer_id not in self._orders_of:
            orders = await self.data.orders_of(customer_id)
            # The attempt's later lookups of these orders (the policy check, the tool) see the same facts.
            self._orders_of[customer_id] = [self._orders.setdefault(str(o.get("order_id")), o) or o for o in orders]
        return self._orders_of[customer_id]

    async def find_customer(self, platform: str, user_id: str) -> dict[str, Any] | None:
        return await self.data.find_customer(platform, user_id)


class OwnRecords:
    """A running tool's records, read back: the kinds it declares (`Tool.records`) that have no table
    of their own, written for the same requester. The gateway hands each run its own.

    Args:
        source: where such records are kept (`Storage.records`); None: this storage keeps none.
        tool: the running tool's name, for its errors.
        kinds: the kinds the tool declares.
        owner: the requester (`ToolContext.owner`): only their records are read.
    """

    def __init__(
        self, source: ToolRecords | None, tool: str = "", kinds: frozenset[str] = frozenset(), owner: str = ""
    ):
        self.source, self.tool, self.kinds, self.owner = source, tool, kinds, owner

    async def find(self, kind: str, key: str | None = None) -> list[ToolRecord]:
        """The requester's records of `kind` (only the one with `key`, if given), oldest first."""
        if kind not in self.kinds:
            raise ToolError(self.tool, f"reads records it does not declare ({kind!r})", code="undeclared_record")
        if self.source is None:
            raise ToolError(self.tool, f"this storage keeps no {kind!r} records", code="no_records")
        return await self.source.find_records(kind, self.owner, key)


NO_RECORDS = OwnRecords(None, "a tool")  # a tool that declares no records, or a run outside the gateway, reads none


class PolicyContext(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    session: SessionState
    intent_id: str | None
    agent: str
    customer: dict[str, Any] | None = None
    reads: TurnReads | None = None  # the turn's reads; None (outside a turn): the engine's own source


class ToolContext(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    session_id: str
    interaction_id: str
    agent: str
    intent_id: str | None = None
    customer_id: str | None = None  # the customer who wrote the message (threads are shared)
    speaker: str = ""  # who wrote it on the platform; a guest's own data is keyed by it
    # The confirmed action this call carries out: its hash is the call's idempotency key, so a
    # second confirmation replays the first result instead of acting twice.
    action_hash: str | None = None
    # The turn's time (the app's clock: a replayed eval runs at its recording's) and its reads of the
    # business data (None outside a turn: a tool reads its own source).
    now: datetime = Field(default_factory=utcnow)
    reads: TurnReads | None = None
    records: OwnRecords = NO_RECORDS  # the tool's own records, read back (set by the gateway)

    @property
    def owner(self) -> str:
        """Whose data this run touches: a customer's follows them; a guest's belongs to that guest in
        that conversation."""
        return self.customer_id or f"session:{self.session_id}" + (f":{self.speaker}" if self.speaker else "")


class AgentRequest(BaseModel):
    """What an agent sees on each pass of a turn. Agents request tools; only the router runs them."""

    goal: Goal
    intent: Intent
    state: SessionState  # the thread
    me: Speaker = Field(default_factory=Speaker)  # the speaker's goals and confirmations
    text: str = ""  # what the user said this turn
    results: list[ToolResult] = Field(default_factory=list)  # this turn's tool results so far
    history: list[Message] = Field(default_factory=list)
    preferences: Preferences | None = None
    pass_number: int = 1
