"""What a message does in the conversation: one step, `interpret`, between understanding and acting.

Understanding says what a message means (an intent with its values, or a reply move read by the
embedded model from nlu.yaml's `moves` banks). Whether that answers the open question, agrees,
refuses, cancels, says goodbye or starts something new depends on what the bot is waiting for;
`interpret` decides it here, once, and the router hands each kind of move to its one handler.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from agent.config import IntentSpec, SlotSpec
from agent.session import PendingConfirmation, SessionState
from agent.text import Answer as YesNo
from agent.types import Classification, Interaction
from agent.understanding.reading import Reading


@dataclass(frozen=True)
class Assent:
    """Yes to the open yes/no question (typed, or the Confirm button)."""

    cls: Classification | None = None  # an offer's request, carried into the turn


@dataclass(frozen=True)
class Refusal:
    """No to the open yes/no question (typed, or the Cancel button)."""


@dataclass(frozen=True)
class Cancel:
    """Calls off the request in progress ("never mind", "nah, leave it" while a value is awaited)."""


@dataclass(frozen=True)
class Goodbye:
    """Closes the conversation for now."""


@dataclass(frozen=True)
class Unclear:
    """Says nothing the bot can act on: "hmm", an emoji, a bare "ok" when nothing was asked."""


@dataclass(frozen=True)
class SlotAnswer:
    """The value the open question asked for, for the goal that asked it."""

    cls: Classification


@dataclass(frozen=True)
class Chat:
    """Small talk (a greeting, thanks, "what can you do"): answered, and the open question kept."""

    cls: Classification


@dataclass(frozen=True)
class Request:
    """A new request, a change of the pending action's values, or a message no intent fits (then
    `cls.intent_id` is None and the out-of-scope answer is given)."""

    cls: Classification


@dataclass(frozen=True)
class Several:
    """Several requests in one message, handled in order."""

    found: list[Classification] = field(default_factory=list)


Move = Assent | Refusal | Cancel | Goodbye | Unclear | SlotAnswer | Chat | Request | Several

# What a classifier's own yes/no reply (an LLM's reading) is as a move.
_REPLIES = {"yes": "assent", "no": "refusal"}


class ReplyReader(Protocol):
    """The embedded model: what a message means, and the reply move it makes (`Reading.move`)."""

    def read(self, text: str, eligible: set[str] | None = None) -> Reading: ...


def reply(state: SessionState, interaction: Interaction, said: str | None, empty: bool = False) -> Move | None:
    """The move a short reply makes, decided before the message is understood as a request;
    None when it is not a reply (understanding then reads it).

    Args:
        said: the reply move the embedded model read (nlu.yaml `moves`: assent, refusal, wait, cancel,
            goodbye), or None.
        empty: the message carries no words with meaning ("hmm", an emoji).
    """
    if interaction.action == "confirm":
        return Assent()
    if interaction.action == "cancel":
        return Refusal()
    pending = state.pending_confirmation
    if pending is not None or state.open_confirmations():
        if said == "assent":
            offered = pending is not None and pending.kind == "offer"
            return Assent(cls=_offered(pending) if offered and pending is not None else None)
        if said in ("refusal", "cancel"):
            return Refusal()
        # Anything else, "hold on" included, is read as a request; the question stays open and is
        # asked again after it, and nothing runs without a yes.
        return None
    goal = state.active_goal
    if said == "cancel" or (said == "refusal" and goal is not None and goal.missing):
        return Cancel()  # "nah, leave it" while the refund waits for an order id
    if said == "goodbye":
        return Goodbye()
    if empty or said in ("assent", "refusal", "wait"):
        # A bare "ok" or "no" when nothing was asked answers nothing; "hold on" while an order id
        # is awaited keeps the question open.
        return Unclear()
    return None


def interpret(
    state: SessionState,
    interaction: Interaction,
    found: list[Classification],
    said: str | None,
    chat: str | None,
    specs: dict[str, IntentSpec],
    slots: dict[str, SlotSpec],
) -> Move:
    """The move of a message understanding has read.

    Args:
        found: the message's classifications (several when it makes several requests).
        said: the reply move the embedded model read, or None.
        chat: the small-talk intent the embedded model read, or None.
    """
    cls = found[0]
    # The classifier (an LLM) may read a yes or no itself.
    if said is None and cls.reply is not None and (move := reply(state, interaction, _REPLIES[cls.reply])):
        return move
    if len(found) > 1:
        return Several(found)
    spec = specs.get(cls.intent_id or "")
    goal = state.active_goal
    awaited = goal.missing[0] if goal is not None and goal.missing else None
    small_talk = chat is not None and chat in specs and specs[chat].kind == "chat"
    if cls.fills_slot and awaited in slots and slots[awaited].free_text and small_talk:
        # "thank you" is not the ticket's description: small talk is answered as small talk.
        return Chat(Classification(intent_id=chat, confidence=cls.confidence))
    if spec is not None and spec.kind == "chat":
        return Chat(cls)
    if cls.fills_slot:
        return SlotAnswer(cls)
    return Request(cls)


def classification(move: Move) -> Classification:
    """The classification a move is acted on with."""
    if isinstance(move, Assent):
        return move.cls or Classification(intent_id=None, reply="yes", confidence=1.0)
    if isinstance(move, Refusal):
        return Classification(intent_id=None, reply="no", confidence=1.0)
    if isinstance(move, Several):
        return move.found[0]
    if isinstance(move, SlotAnswer | Chat | Request):
        return move.cls
    return Classification(intent_id=None)


def yes_or_no(move: Move) -> YesNo | None:
    """The answer a move gives an open yes/no question."""
    return "yes" if isinstance(move, Assent) else "no" if isinstance(move, Refusal) else None


def _offered(pending: PendingConfirmation) -> Classification:
    """An offer made because understanding was unsure carries the request's values."""
    return Classification(intent_id=pending.intent_id, params=pending.params, reply="yes", confidence=1.0)
