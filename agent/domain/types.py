"""The core's data model: every value that crosses a seam is one of these."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.understanding.levels import Sureness

# The current UTC time, injected where a turn's dates come from (the app's, the policy engine's).
Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


class ClockFrom:
    """A clock that runs on from `start`: a replayed eval runs at its recording's time, so the
    dates its tools write match the ones the recorded answers quote."""

    def __init__(self, start: datetime) -> None:
        self.offset = start - datetime.now(UTC)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChannelType(StrEnum):
    console = "console"
    slack = "slack"
    discord = "discord"


class Message(Model):
    role: Literal["user", "agent", "system"]
    text: str
    timestamp: datetime = Field(default_factory=utcnow)
    # kind: pre | question | answer | error | fallback | notice (resume, handoff) | user
    kind: str = "user"
    metadata: dict[str, Any] = Field(default_factory=dict)


class ChannelContext(Model):
    channel_type: ChannelType = ChannelType.console
    workspace: str = ""
    channel: str = ""
    thread: str = ""
    user: str = ""
    # The channel the person is looking at while they talk to the bot in Slack's assistant split
    # view: kept for the turn and shown in its trace.
    viewing: str = ""


class Interaction(Model):
    """One inbound chat event, already translated by a channel."""

    id: str  # channels use the platform's event key, so a redelivery has the same id
    text: str
    session_key: str
    customer_id: str | None = None
    context: ChannelContext = Field(default_factory=ChannelContext)
    received_at: datetime = Field(default_factory=utcnow)
    # The thread so far, when a channel meets a conversation it has no session for (a mention in
    # the middle of an existing thread): seeds the new session's history.
    thread_history: list[Message] = Field(default_factory=list)
    # Accepted through the channel inbox: the turn's commit marks the inbox entry done.
    from_inbox: bool = False
    # A button click (confirm, cancel, human, or one of a question's choices) rather than typed
    # text; `text` holds its label.
    action: Literal["confirm", "cancel", "human", "choose"] | None = None
    # For a confirm/cancel click: the action hash the clicked question was about, when the button
    # carried it; for a choice: the question it was one of (`OutboundMessage.action_hash`).
    action_hash: str | None = None
    choice: str | None = None  # for a choice click: the value of the choice clicked (`Option.value`)

    @property
    def speaker(self) -> str:
        """Who wrote this message: the platform user, else the customer (console, eval), else a guest."""
        return self.context.user or self.customer_id or "guest"


class Constraints(Model):
    channels: list[str] = Field(default_factory=list)  # empty = every channel
    rollout: int = Field(100, ge=0, le=100)
    min_tier: str | None = None


class Intent(Model):
    id: str
    agent: str
    description: str = ""
    required_params: list[str] = Field(default_factory=list)
    optional_params: list[str] = Field(default_factory=list)
    tool: str | None = None
    priority: int = 10
    constraints: Constraints = Field(default_factory=Constraints)
    # Tool outcome (error code) -> the slot to ask for again, e.g. not_found -> order_id.
    retry_slot_on: dict[str, str] = Field(default_factory=dict)
    # "chat" intents (greetings, thanks) are answered without opening or disturbing a goal.
    kind: Literal["task", "chat"] = "task"
    # The goal stays open after its answer, for follow-ups about it (a recommendation's items).
    stays_open: bool = False
    # Its action waits for the user's own yes (a refund, a deletion): never run on a reading alone.
    confirms: bool = False
    # It hands the conversation to a person: the bot's human offer starts it.
    handoff: bool = False
    # How its planner answers it, the other tools it calls by role, and the intent its answer
    # offers next (config/intents.yaml `handling`, `uses`, `offers`).
    handling: str | None = None
    uses: dict[str, str] = Field(default_factory=dict)
    offers: str | None = None
    # Its tool's arguments from its details (config/intents.yaml `tool_args`: param -> template).
    tool_args: dict[str, str] = Field(default_factory=dict)

    @property
    def goal_type(self) -> str:
        return f"{self.agent}.{self.id}"


class IntentContext(Model):
    channel: str
    customer_id: str | None = None
    customer_tier: str | None = None
    session_id: str = ""


class Classification(Model, Sureness):
    """What understanding made of a message; how sure it is, asked by name (`sure`, `likely`)."""

    intent_id: str | None
    params: dict[str, Any] = Field(default_factory=dict)
    missing: list[str] = Field(default_factory=list)
    confidence: float = 0.0
    # The message answers the question the bot asked (slot fill), or confirms/declines an offer.
    fills_slot: bool = False
    reply: Literal["yes", "no"] | None = None
    # Out of scope: the honest short answer for the topic ("I can't change account settings here.").
    out_of_scope: str | None = None
    outside: bool = False  # out of scope: nearer what the bot cannot do than what it can, no topic close
    # Understanding named a side-effecting intent without being sure: ask this instead of acting.
    offer: str | None = None
    notice: str | None = None  # something the user must hear this turn (a spent LLM budget)
    # The likeliest intents as the reading ranked them, [intent, score] best first (at most three):
    # what a review of misses and a clarifying question draw on.
    candidates: list[tuple[str, float]] = Field(default_factory=list)
    # Unsure between these intents (the likeliest first, `intent_id` among them): the bot asks which
    # one was meant instead of acting on any (agent/conversation/clarify.py).
    clarify: list[str] = Field(default_factory=list)


# Plan steps: a discriminated union on `type`.


class AskUser(Model):
    type: Literal["ask_user"] = "ask_user"
    param: str
    prompt: str
    # What the question offers to pick from ("Which task? 1. call mom; 2. pay rent"): a pick by
    # place or by its words ("the second", "pay rent"), or a click, fills `param` with its value.
    options: list[Option] = Field(default_factory=list)


class Confirm(Model):
    """Ask before the tool runs. `prompt` is a template (agent/templates.py), rendered once, when
    the question is asked, with the goal's slots, `values` and the call's parameters as the policy
    left them ("Refund {amount|money} ..."): what the customer wrote is never read as one."""

    type: Literal["confirm"] = "confirm"
    prompt: str
    tool: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    values: dict[str, Any] = Field(default_factory=dict)


class Respond(Model):
    type: Literal["respond"] = "respond"
    when: Literal["pre", "post", "error"]
    message: str = ""


class ToolCall(Model):
    type: Literal["tool_call"] = "tool_call"
    tool_name: str
    params: dict[str, Any] = Field(default_factory=dict)


PlanStep = Annotated[AskUser | Confirm | Respond | ToolCall, Field(discriminator="type")]


class Offer(Model):
    """Something an answer offers to do next: the move `taken_by` (a yes; a "that didn't help" for
    "If that doesn't fix it, I can open a ticket"), or asking for `intent_id`, starts it with `params`."""

    intent_id: str
    params: dict[str, Any] = Field(default_factory=dict)
    prompt: str = ""
    taken_by: Literal["assent", "unresolved"] = "assent"


class Plan(Model):
    """What an agent wants this pass: steps to run, and state updates for its goal."""

    intent_id: str | None
    goal_id: str | None = None
    steps: list[PlanStep] = Field(default_factory=list)
    reasoning: str = ""
    # Merged into the goal's slots; a None value removes the slot (e.g. an order id not found).
    slots_patch: dict[str, Any] = Field(default_factory=dict)
    # Set when this plan ends the goal.
    goal_status: Literal["done", "failed"] | None = None
    offer: Offer | None = None  # what the answer offers to do next, open until the next message

    @property
    def plan_type(self) -> str:
        kinds = {s.type for s in self.steps}
        for kind in ("tool_call", "ask_user", "confirm"):
            if kind in kinds:
                return kind
        return "respond"


# The kind of a record a turn writes; a tool declares which kinds it writes (`Tool.records`). The
# built-in kinds (ticket, handoff, refund, order_update, task, task_change, handoff_state,
# risk_report) have tables of their own; any other kind is kept in storage's generic records.
RECORD_KIND_PATTERN = r"^[a-z][a-z0-9_]{0,47}$"
RecordKind = Annotated[str, Field(pattern=RECORD_KIND_PATTERN)]


class SideEffect(Model):
    """A row a tool asks to write; stored in the turn's transaction, once per key."""

    kind: RecordKind
    key: str = Field(min_length=1, max_length=255)  # unique within its kind
    data: dict[str, Any]
    # Whose record it is: the gateway sets the requester's (`ToolContext.owner`), so a tool cannot
    # write a record for someone else; a kind without a table of its own is read back by it.
    owner: str | None = None


# An admin alert's kind: a `[a-z0-9_]` word. The core's own are `CoreAlert`; a tool declares the kinds
# it raises (`Tool.alerts`); each kind's title, shown by every admin channel, is in agents.yaml `alerts:`.
AlertKind = Annotated[str, Field(pattern=RECORD_KIND_PATTERN)]


class CoreAlert(StrEnum):
    """The alert kinds the core itself raises (a tool's own are on its declaration)."""

    HANDOFF = "handoff"
    POLICY_DENIED = "policy_denied"
    POLICY_ESCALATION = "policy_escalation"
    PROVIDER_OUTAGE = "provider_outage"
    LLM_BUDGET = "llm_budget"


class Alert(Model):
    kind: AlertKind
    # The kind's title and icon from agents.yaml `alerts:`, set on the way to the admin channels.
    title: str = ""
    icon: str = ""
    session_id: str
    summary: str
    details: dict[str, Any] = Field(default_factory=dict)
    dedupe_key: str = ""  # alerts with the same key within the dedupe window are sent once


class ToolResult(Model):
    tool: str
    success: bool
    data: dict[str, Any] | None = None
    error: str | None = None
    error_code: str | None = None
    execution_time_ms: float = 0.0
    replayed: bool = False  # answered from the idempotency ledger, not run again
    idempotency_key: str | None = None
    effects: list[SideEffect] = Field(default_factory=list)
    alerts: list[Alert] = Field(default_factory=list)  # admins hear of these after the turn commits


class PolicyDecision(Model):
    allowed: bool = True
    violations: list[str] = Field(default_factory=list)
    requires_escalation: bool = False
    requires_confirmation: bool = False
    rule: str = ""
    offer_human: bool = False  # a deny that offers the user a person (privacy refusals)
    alert: bool = True  # admins hear of a deny
    # The call's canonical params (defaults filled from looked-up data), when the engine changed them.
    params: dict[str, Any] | None = None
    facts: dict[str, Any] = Field(default_factory=dict)  # the looked-up values the rules read


class Option(Model):
    """One answer a question offers to pick (a button, a numbered line in the console)."""

    value: str  # what picking it says back (`Interaction.choice`): an intent id, an order ID
    label: str  # what the person sees


class OutboundMessage(Model):
    """A message the bot delivers to the channel during a turn."""

    kind: Literal["pre", "question", "answer", "error", "fallback", "notice"]
    text: str
    buttons: list[Literal["confirm", "cancel", "human"]] = Field(default_factory=list)
    # A question's answers to pick from, in order ("did you mean ...?", "which order?").
    choices: list[Option] = Field(default_factory=list)
    # For a confirmation question: the action its buttons confirm, so a click names what it agrees
    # to; for a question with choices: the question, so a click answers that one and no other.
    action_hash: str | None = None
    # Only for the person who wrote this turn's message (Slack ephemeral, Discord ephemeral follow-up).
    private: bool = False
    # Stable across re-runs of the same event's turn ("<event>:<n>", "<event>:p<n>" for
    # pre-messages): channels record and dedupe deliveries by it. Empty outside a turn.
    id: str = ""


class AgentResponse(Model):
    text: str
    session_id: str
    interaction_id: str
    intent_id: str | None = None
    tool_results: list[ToolResult] = Field(default_factory=list)
    needs_user_input: bool = False
    missing_param: str | None = None
    active_goal: str | None = None
    goal_stack: list[str] = Field(default_factory=list)
    handoff: bool = False
    messages: list[OutboundMessage] = Field(default_factory=list)
    alerts: list[str] = Field(default_factory=list)  # admin alert kinds raised this turn
    confirmation: bool = False  # an action waits for the user's confirm or cancel
