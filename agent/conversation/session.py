"""A conversation's state: goals and their stack, confirmations, handoff, and each speaker's part."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field, model_validator

from agent.domain.types import ChannelType, Model, utcnow


class GoalStatus(StrEnum):
    active = "active"
    blocked = "blocked"
    suspended = "suspended"
    done = "done"
    failed = "failed"
    cancelled = "cancelled"
    abandoned = "abandoned"  # left untouched for too many turns


class Goal(Model):
    id: str
    type: str  # "<agent>.<intent id>"
    agent: str
    intent_id: str
    status: GoalStatus = GoalStatus.active
    priority: int = 10
    slots: dict[str, Any] = Field(default_factory=dict)
    missing: list[str] = Field(default_factory=list)
    next_question: str = ""
    updated_at: datetime = Field(default_factory=utcnow)
    resume_announced: bool = False  # the bot said once that it went back to this goal
    # The bot went back to this goal and asked its question again; moving on without answering drops it.
    asked_again: bool = False
    sure: bool = True  # understood surely when it was opened (an unsure reading may be a misreading)
    queued: bool = False  # a later request from the same message, waiting its turn; not yet run
    answered: bool = False  # an open goal (a recommendation) that has given its answer
    touched_turn: int = 0  # the speaker's turn that last worked on this goal (for abandonment)
    # What the awaited slot's question offered to choose from ("Which one: ... or ...?"); a reply
    # that picks one of them ("the second one") answers it.
    choices: list[Choice] = Field(default_factory=list)


class Choice(Model):
    """One of the things the bot offered to choose from ("Which one: ...?"): an order of the customer's."""

    value: str  # what choosing it fills the awaited slot with ("O-12345")
    label: str  # what the bot called it: the items the order holds
    amount: float = 0.0  # for "the cheaper one"
    words: list[str] = Field(default_factory=list)  # the words that name it: its kinds, brand, model words


class Clarification(Model):
    """A question asking which of a few requests the customer meant ("Did you mean ...?"): the
    customer's pick continues the message it was asked about as that request."""

    id: str  # the question: a click on one of its buttons names it
    intents: list[str]  # the requests offered, likeliest first ("something else" besides them)
    text: str  # the message it was asked about
    params: dict[str, Any] = Field(default_factory=dict)  # the typed values read in that message


class PendingConfirmation(Model):
    """Something the bot asked the user to say yes or no to."""

    kind: Literal["offer", "tool"]
    intent_id: str | None = None  # for an offer: the intent a "yes" starts
    tool: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    action_hash: str = ""
    prompt: str = ""
    expires_at: datetime | None = None
    goal_id: str | None = None  # for a tool: the goal whose plan asked for it
    # What takes up an offer: a yes, or, for an offer made in case an answer does not solve the
    # problem ("If that doesn't fix it, I can open a ticket"), a "that didn't help".
    taken_by: Literal["assent", "unresolved"] = "assent"


class Escalation(Model):
    """An action the policy held for a person (`require_escalation`): the exact call, as the policy
    passed it, and what a person decided. Approving runs it once, keyed by `id`."""

    id: str
    tool: str
    params: dict[str, Any] = Field(default_factory=dict)
    intent_id: str | None = None
    agent: str = ""
    rule: str = ""  # the escalation rule that held it; approving bypasses this rule only
    speaker: str = ""  # who asked on the platform, and the customer they are
    customer_id: str | None = None
    decision: Literal["approved", "denied"] | None = None
    by: str = ""  # who decided
    note: str = ""  # the operator's reason for a denial, or the approved action's result
    decided_at: datetime | None = None


class Handoff(Model):
    status: Literal["requested", "claimed", "released"]
    reason: str = ""
    requested_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    by: str = ""  # who claimed or released it
    ticket_id: str | None = None
    alerted_at: datetime = Field(default_factory=utcnow)  # last admin alert; unclaimed ones are re-sent
    alerts_sent: int = 1
    acknowledged: bool = False  # the user was told someone is coming; the bot stays silent after that
    escalation: Escalation | None = None  # the action waiting for a person's approval, if that is why

    @property
    def active(self) -> bool:
        return self.status != "released"


class ConfirmedAction(Model):
    """The last confirmed action carried out, so a repeated confirm is answered, not run again."""

    hash: str | None = None
    tool: str = ""
    answer: str = ""


class LLMUsage(Model):
    """Running LLM totals of the session; they commit with each turn and survive restarts."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0


class HistorySummary(Model):
    """A model-written summary of the history that no longer fits the window, through a timestamp."""

    text: str = ""
    through: str = ""


class Speaker(Model):
    """One person's part of a shared conversation: what they asked for and what they agreed to.
    A turn resolves its speaker's part once (`SessionState.part`) and works on it in place."""

    customer_id: str | None = None
    turns: int = 0  # this speaker's turns in the thread; their goals idle too long are abandoned
    active_goal_id: str | None = None
    goal_stack: list[str] = Field(default_factory=list)
    goals: dict[str, Goal] = Field(default_factory=dict)
    pending_confirmation: PendingConfirmation | None = None
    confirmed_action: ConfirmedAction | None = None
    clarification: Clarification | None = None  # the open "Did you mean ...?" question

    @property
    def active_goal(self) -> Goal | None:
        return self.goals.get(self.active_goal_id) if self.active_goal_id else None


# Goals and confirmations of rows stored before conversations had several speakers.
LEGACY_SPEAKER = "~legacy"
_SPEAKER_FIELDS = ("active_goal_id", "goal_stack", "goals", "pending_confirmation", "confirmed_action")


class SessionState(Model):
    """A conversation (a thread). Its history, handoff and LLM budget are shared; each speaker's
    goals and confirmations are their own part in `speakers`."""

    session_id: str
    workspace_id: str = ""
    customer_id: str | None = None  # the customer of the latest turn's speaker
    channel_type: ChannelType = ChannelType.console
    version: int = 0
    handoff: Handoff | None = None
    llm_usage: LLMUsage = Field(default_factory=LLMUsage)
    llm_budget_notice_day: str | None = None  # the day the user was told the LLM budget is spent
    history_summary: HistorySummary | None = None
    updated_at: datetime = Field(default_factory=utcnow)
    turns: int = 0  # user turns handled in this thread
    speakers: dict[str, Speaker] = Field(default_factory=dict)

    def part(self, speaker: str, customer_id: str | None) -> Speaker:
        """`speaker`'s part of the thread (resolved to `customer_id`, or a guest), made on first use.
        The goals of a row from before speakers belong to the customer who started it."""
        legacy = self.speakers.get(LEGACY_SPEAKER)
        if speaker not in self.speakers and legacy and customer_id is not None and legacy.customer_id == customer_id:
            self.speakers[speaker] = self.speakers.pop(LEGACY_SPEAKER)
        part = self.speakers.setdefault(speaker, Speaker())
        part.customer_id = customer_id
        return part

    def open_confirmations(self, speaker: str) -> dict[str, PendingConfirmation]:
        """Other speakers' actions waiting for their confirmation, by speaker."""
        return {
            who: part.pending_confirmation
            for who, part in self.speakers.items()
            if who != speaker and part.pending_confirmation is not None and part.pending_confirmation.kind == "tool"
        }

    @property
    def every_goal(self) -> list[Goal]:
        """Every speaker's goals (for evaluation and inspection)."""
        return [g for part in self.speakers.values() for g in part.goals.values()]

    @model_validator(mode="before")
    @classmethod
    def _from_facts(cls, data: Any) -> Any:
        """Rows stored before speakers kept one speaker's goals at the top; rows older still kept
        some fields in a free-form `facts` dict."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        facts = data.pop("facts", None) or {}
        if facts.get("handoff_acknowledged") and isinstance(data.get("handoff"), dict):
            data["handoff"] = {**data["handoff"], "acknowledged": True}
        for old, new in (
            ("confirmed_action", "confirmed_action"),
            ("llm_usage", "llm_usage"),
            ("llm_budget_notice", "llm_budget_notice_day"),
            ("history_summary", "history_summary"),
        ):
            if facts.get(old) is not None:
                data.setdefault(new, facts[old])
        data.pop("speaker", None)  # "approved_action" of `facts` was a per-turn value: it is dropped
        solo = {name: data.pop(name) for name in _SPEAKER_FIELDS if name in data}
        if any(solo.values()):
            part = Speaker(customer_id=data.get("customer_id"), turns=data.get("turns", 0), **solo)
            data["speakers"] = {LEGACY_SPEAKER: part, **data.get("speakers", {})}
        return data
