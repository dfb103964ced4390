"""What a message does in the conversation: one step, `interpret`, between understanding and acting.

Understanding says what a message means (an intent with its values, or a reply move read by the
embedded model from nlu.yaml's `moves` banks). Whether that agrees, refuses, cancels, says goodbye
or starts something new depends on what the bot is waiting for; `reply` decides the replies before
anything is understood, `answers.py` whether it is the value the bot asked for, and `interpret` the
rest, and the router hands each kind of move to its one handler.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.config.schema import IntentSpec, SlotSpec
from agent.context.turn import TurnContext
from agent.conversation.session import PendingConfirmation
from agent.domain.types import Classification
from agent.text import Answer as YesNo
from agent.understanding.levels import GIVEN
from agent.understanding.reading import bare_reply
from agent.understanding.replies import YesNoAnswer


@dataclass(frozen=True)
class Assent:
    """Yes to the open yes/no question (typed, or the Confirm button)."""

    cls: Classification | None = None  # an offer's request, carried into the turn
    # What the yes came with besides ("Sure, what's your returns policy?", "yes, and track my
    # order"): answered after the action runs.
    asked: tuple[str, ...] = ()


@dataclass(frozen=True)
class Refusal:
    """No to the open yes/no question (typed, or the Cancel button)."""


@dataclass(frozen=True)
class Wait:
    """Not yet ("hold on", "let me think"): nothing runs, and the open question stays open."""


@dataclass(frozen=True)
class Cancel:
    """Calls off the request in progress ("never mind", "nah, leave it" while a value is awaited)."""


@dataclass(frozen=True)
class Goodbye:
    """Closes the conversation for now."""


@dataclass(frozen=True)
class Unsure:
    """A reply to the open yes/no question that is not plainly a yes or a no ("sure, but no,
    actually", "yes, and put it on my other card" when the action takes no card): nothing runs,
    and the question is asked again with its buttons, saying what was understood."""

    answer: YesNoAnswer


@dataclass(frozen=True)
class Unclear:
    """Says nothing the bot can act on: "hmm", an emoji, a bare "ok" when nothing was asked."""

    # A bare yes to a question that asks for a value ("which order?"): the question is asked again
    # as it was, with no "I'm still here" (the person is plainly there).
    replied: bool = False
    # The reply move it read as ("refusal": a bare "no, not what I meant" right after an answer says
    # the answer misread the message before it, which the review inbox marks).
    said: str | None = None


@dataclass(frozen=True)
class SlotAnswer:
    """The value the open question asked for, for the goal that asked it."""

    cls: Classification


@dataclass(frozen=True)
class Change:
    """New values for the action waiting for a yes ("yes, but just $15 of it", "make it O-24680
    instead"): the action is planned again and the changed action asked about."""

    cls: Classification


@dataclass(frozen=True)
class Chat:
    """Small talk (a greeting, thanks, "what can you do"): answered, and the open question kept."""

    cls: Classification


@dataclass(frozen=True)
class Request:
    """A new request (a classifier's reading of the waiting action with new values still changes
    it), or a message no intent fits (then `cls.intent_id` is None and the out-of-scope answer is given)."""

    cls: Classification


@dataclass(frozen=True)
class Several:
    """Several requests in one message, handled in order."""

    found: list[Classification] = field(default_factory=list)


Move = Assent | Refusal | Wait | Cancel | Goodbye | Unsure | Unclear | SlotAnswer | Change | Chat | Request | Several
# The moves control answers by itself (agent/conversation/control.py), with nothing understood or run.
ControlMove = Cancel | Goodbye | Unclear | Wait


@dataclass(frozen=True)
class Heard:
    """What the embedded model and the slot patterns read in a message before it is understood."""

    said: str | None = None  # the reply move (nlu.yaml `moves`), or None
    chat: str | None = None  # the small-talk intent the model read, or None
    empty: bool = False  # no word with a meaning ("hmm", an emoji)
    value: Any = None  # the awaited slot's value, when the message is nothing but that value
    describes: bool = False  # the awaited slot takes a description in any words (a ticket's problem)
    # The message read as a whole as the answer to the open yes/no question, when one is open.
    answer: YesNoAnswer | None = None


# What a classifier's own yes/no reply (an LLM's reading) is as a move.
_REPLIES = {"yes": "assent", "no": "refusal"}


def asks_anew(ctx: TurnContext, heard: Heard) -> bool:
    """The reply to the waiting action's yes/no question is a request of its own, which is answered
    while the question stays open (it is asked again after) and nothing runs on it: a yes with a
    part that names values of another request ("yes, and where is O-12345?"), or a reply that is
    no yes while the whole message is a sure request of another intent ("wait, where is my order
    O-34567?", "I'd rather speak to a person first")."""
    pending, answer, reading = ctx.me.pending_confirmation, heard.answer, ctx.reading
    if pending is None or answer is None or reading is None:
        return False
    if answer.effect == "run":
        return bool(answer.requests() - {pending.intent_id})
    if not reading.sure or reading.intent == pending.intent_id:
        return False
    return answer.effect in ("hold", "ask_again", "replan") and not answer.of_kind("assent")


def reply(ctx: TurnContext, heard: Heard) -> Move | None:
    """The move a reply makes, decided before the message is understood as a request; None when
    it is not a reply (understanding then reads it)."""
    interaction, me = ctx.interaction, ctx.me
    if interaction.action == "confirm":
        return Assent()
    if interaction.action == "cancel":
        return Refusal()
    said, pending = heard.said, me.pending_confirmation
    if pending is not None and pending.kind == "offer" and pending.taken_by == "unresolved":
        if said == "unresolved":
            return Assent(cls=_offered(pending))  # "that didn't help" takes up the ticket offered for that case
        pending = None  # "ok" to "if that doesn't fix it, I can open a ticket" opens nothing
    if pending is not None and pending.kind == "tool" and heard.answer is not None:
        if asks_anew(ctx, heard):
            return None
        return _answered(heard.answer)
    if pending is not None or ctx.state.open_confirmations(interaction.speaker):
        if said == "assent":
            offered = pending is not None and pending.kind == "offer"
            return Assent(cls=_offered(pending) if offered and pending is not None else None)
        if said in ("refusal", "cancel"):
            return Refusal()
        if said == "wait" and pending is not None and pending.kind == "tool":
            return Wait()
        return None  # anything else is read as a request; the question is asked again after it
    goal = me.active_goal
    if heard.value is not None:
        return None  # nothing but the value asked for: "no budget" answers, its "no" refuses nothing
    if said == "cancel" or (said == "refusal" and goal is not None and goal.missing):
        return Cancel()  # "nah, leave it" while the refund waits for an order id
    if said == "goodbye":
        return Goodbye()
    if said == "wait":
        return Wait()  # "hold on" while an order id is awaited
    if said == "unresolved" and goal is not None and goal.missing and not heard.describes:
        return Unclear()  # "didn't work" names no device; it may well describe a ticket's problem
    if heard.empty or said in ("assent", "refusal"):
        # A bare "ok" or "no" when nothing was asked answers nothing.
        return Unclear(replied=not heard.empty, said=said if not heard.empty else None)
    return None


def interpret(
    ctx: TurnContext,
    found: list[Classification],
    heard: Heard,
    specs: dict[str, IntentSpec],
    slots: dict[str, SlotSpec],
) -> Move:
    """The move of a message understanding has read (`found`: one classification per request)."""
    cls = found[0]
    interaction = ctx.interaction
    # The classifier (an LLM) may read a yes or no itself; only a bare one counts.
    said = _REPLIES.get(cls.reply or "") if heard.said is None and bare_reply(interaction.text) else None
    if said is not None and (move := reply(ctx, Heard(said=said))) is not None:
        return move
    if len(found) > 1:
        return Several(found)
    spec = specs.get(cls.intent_id or "")
    goal = ctx.me.active_goal
    awaited = goal.missing[0] if goal is not None and goal.missing else None
    chat = heard.chat if heard.chat in specs and specs[heard.chat].kind == "chat" else None
    if cls.fills_slot and awaited in slots and slots[awaited].free_text and chat is not None:
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
        return move.cls or Classification(intent_id=None, reply="yes", confidence=GIVEN)
    if isinstance(move, Refusal):
        return Classification(intent_id=None, reply="no", confidence=GIVEN)
    if isinstance(move, Several):
        return move.found[0]
    if isinstance(move, SlotAnswer | Change | Chat | Request):
        return move.cls
    return Classification(intent_id=None)


def yes_or_no(move: Move) -> YesNo | None:
    """The answer a move gives an open yes/no question."""
    return "yes" if isinstance(move, Assent) else "no" if isinstance(move, Refusal) else None


def _answered(answer: YesNoAnswer) -> Move | None:
    """The move an answer to the open yes/no question makes (agent/understanding/replies.py has
    the one rule for what is a yes, and what each answer does). A change is read against the
    waiting action by the caller; a message that answers nothing is read as a request."""
    match answer.effect:
        case "run":
            return Assent(asked=tuple(answer.of_kind("asks", "remark")))
        case "drop":
            return Refusal()
        case "hold":
            return Wait()
        case "ask_again":
            return Unsure(answer)
        case "replan" | "request":
            return None


def _offered(pending: PendingConfirmation) -> Classification:
    """An offer made because understanding was unsure carries the request's values."""
    return Classification(intent_id=pending.intent_id, params=pending.params, reply="yes", confidence=GIVEN)
