"""Doubt is a question: when understanding is unsure between requests, the customer picks one.

The reading names the requests it is unsure between (`Classification.clarify`, decided from the
banks' calibrated levels in agent/understanding/doubt.py). Nothing is done on that reading: the
bot asks "Did you mean: check an order's status, ask for a refund, or something else?" (buttons on
Slack and Discord, numbered lines in the console) and keeps the question in the speaker's
`clarification`. The answer comes in a later turn:

- a click on a choice, or a typed pick ("2", "the second", "the refund one", "refund please"),
  continues the message the question was about as that request, with the values it held;
- "something else" / "neither" does nothing and offers a person;
- a message that is plainly a request of its own is handled as one, and the question is dropped.

Only the person asked may choose: a click from someone else of the thread gets a private notice.
A click on a question that is no longer open does nothing and says so. A click on the orders a
"which one?" question offered (`Goal.choices`) answers it like the typed ID would.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, replace

from agent.config.schema import Choosing, IntentSpec, Messages
from agent.context.outcome import Chosen, Classified
from agent.context.turn import TurnContext
from agent.conversation.confirmations import BUTTONS
from agent.conversation.handoff import handoff_intent
from agent.conversation.session import Clarification, PendingConfirmation, SessionState
from agent.domain.types import Classification, Option, OutboundMessage
from agent.review.items import SOMETHING_ELSE  # the choice that is none of the requests offered
from agent.templates import render
from agent.text import STOPWORDS, says, words
from agent.understanding.levels import GIVEN
from agent.understanding.picking import Offered, chosen
from agent.understanding.reading import Reading
from agent.understanding.rules import RulesClassifier

# A click, once read, goes on as the words it stands for: no button action is left on the message.
_TYPED = {"action": None, "action_hash": None, "choice": None}


@dataclass(frozen=True)
class Settled:
    """What an open question with choices made of this message.

    `handled`: answered here, nothing more runs this turn. Otherwise the turn goes on with `ctx`
    (the message, or a clicked order as its typed ID), as `chosen` when a request was picked."""

    ctx: TurnContext
    handled: bool = False
    chosen: Classification | None = None


def question_id(interaction_id: str) -> str:
    """A short stable id for the question a turn asks: a re-run of the turn asks the same one."""
    return "q" + hashlib.blake2b(interaction_id.encode(), digest_size=5).hexdigest()


def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in words(text) if w not in STOPWORDS and len(w) > 2)


class Clarifier:
    """Asks which request was meant, and reads the answer.

    Args:
        specs: the intents; a choice is shown by its `label` (else its description).
        messages: the question, "something else", and what a pick of nothing or a stale click says.
        choosing: the words that pick from a list by place ("the second", "2") or pick none of it.
        reader: the embedded understanding, for a pick in the customer's own words ("money back
            please") and for a request plainly of its own.
    """

    def __init__(
        self, specs: Mapping[str, IntentSpec], messages: Messages, choosing: Choosing, reader: RulesClassifier
    ):
        self.specs = specs
        self.messages = messages
        self.choosing = choosing
        self.reader = reader

    def label(self, intent_id: str) -> str:
        spec = self.specs.get(intent_id)
        if spec is None:
            return intent_id
        return spec.label or spec.description.split(" - ")[0].rstrip(".") or intent_id

    def options(self, intents: list[str]) -> list[Option]:
        """The choices as shown: each request, then "something else"."""
        return [Option(value=i, label=self.label(i)) for i in intents] + [
            Option(value=SOMETHING_ELSE, label=self.messages.clarify_other)
        ]

    async def ask(self, ctx: TurnContext, cls: Classification) -> None:
        """Ask which of `cls.clarify` was meant; nothing is done on the reading itself."""
        m, qid = self.messages, question_id(ctx.interaction.id)
        options = self.options(cls.clarify)
        labels = [o.label for o in options]
        listed = f"{', '.join(labels[:-1])}, {m.which_or} {labels[-1]}"
        text = render(m.clarify, {"choices": listed})
        ctx.me.clarification = Clarification(
            id=qid, intents=list(cls.clarify), text=ctx.interaction.text, params=dict(cls.params)
        )
        await ctx.out.send(OutboundMessage(kind="question", text=text, choices=options, action_hash=qid))
        ctx.t.emit("response_generated", {"message": text, "clarify": list(cls.clarify)})

    async def settle(self, ctx: TurnContext) -> Settled:
        """Read the message as the answer to the open question with choices, if it is one."""
        interaction, me = ctx.interaction, ctx.me
        asked = me.clarification
        if interaction.action == "choose":
            qid, value = interaction.action_hash or "", interaction.choice or ""
            goal = me.active_goal
            if asked is not None and asked.id == qid and value in [*asked.intents, SOMETHING_ELSE]:
                return await self._picked(ctx, asked, value)
            if goal is not None and goal.id == qid and any(c.value == value for c in goal.choices):
                # One of the orders "which one?" offered: the same answer as its ID typed.
                typed = interaction.model_copy(update={"text": value} | _TYPED)
                return Settled(ctx=replace(ctx, interaction=typed))
            if _asked_someone_else(ctx.state, interaction.speaker, qid):
                await ctx.out.send(OutboundMessage(kind="notice", text=self.messages.clarify_not_yours, private=True))
                ctx.t.emit("response_generated", {"clarification": "not_the_one_asked"})
                return Settled(ctx=ctx, handled=True)
            await ctx.out.send(OutboundMessage(kind="answer", text=self.messages.clarify_gone))
            ctx.t.emit("response_generated", {"clarification": "not_open"})
            return Settled(ctx=ctx, handled=True)
        if asked is None:
            return Settled(ctx=ctx)
        assert ctx.reading is not None  # typed words, read once by the router
        picked = self._typed(interaction.text, ctx.reading, asked, ctx)
        if picked is None:
            # Not an answer to it: a request of its own, read as any message is; the question is dropped.
            me.clarification = None
            ctx.t.emit("response_generated", {"clarification": "dropped"})
            return Settled(ctx=ctx)
        return await self._picked(ctx, asked, picked)

    def _typed(self, text: str, reading: Reading, asked: Clarification, ctx: TurnContext) -> str | None:
        """The choice a typed reply picks: none of them ("something else", "neither", a bare no),
        one by place ("2", "the second") or by its words ("the refund one"), or the request the
        reply reads as when it is one of those offered; None when it picks nothing."""
        if says(text, self.choosing.none):
            return SOMETHING_ELSE
        options = self.options(asked.intents)
        picked = [options[n].value for n in chosen(text, [Offered(_words(o.label)) for o in options], self.choosing)]
        if len(picked) == 1 and not any(c.isdigit() for c in text):
            return picked[0]  # "a ticket please": the words of one choice offered
        said = self.reader.said(reading, ctx.eligible)
        if said.intent_id is not None and said.intent_id not in asked.intents and said.sure:
            return None  # "add 2 apples to my list": plainly a request of its own, whatever number it holds
        if len(picked) == 1:
            return picked[0]
        if said.values:
            return None  # "where is O-12345?" names values of its own: a request of its own
        if said.reading.move in ("refusal", "cancel"):
            return SOMETHING_ELSE
        if said.intent_id in asked.intents:
            return said.intent_id  # "refund please": the request offered, in the customer's words
        return None  # anything else (plainly a request of its own, or nothing the bot can place)

    def _nothing_meant(self, ctx: TurnContext) -> OutboundMessage:
        """None of the requests offered was meant: a person is offered, unless an action waits for
        the customer's yes (a "yes" would be read as that), whose question is asked again instead."""
        me, m = ctx.me, self.messages
        pending = me.pending_confirmation
        if pending is not None and pending.kind == "tool":
            text = f"{m.clarify_none} {render(m.still_waiting, {'prompt': pending.prompt})}"
            return OutboundMessage(kind="question", text=text, buttons=list(BUTTONS), action_hash=pending.action_hash)
        handoff = handoff_intent(ctx.eligible)
        if handoff is None:
            return OutboundMessage(kind="question", text=f"{m.clarify_none} {m.human_offer}")
        me.pending_confirmation = PendingConfirmation(kind="offer", intent_id=handoff, prompt=m.human_offer)
        return OutboundMessage(kind="question", text=f"{m.clarify_none} {m.human_offer}", buttons=["human"])

    async def _picked(self, ctx: TurnContext, asked: Clarification, value: str) -> Settled:
        """The customer picked `value`: the message asked about continues as that request, or
        (something else) nothing is done and a person is offered."""
        me, t, m = ctx.me, ctx.t, self.messages
        me.clarification = None
        # The asking turn recorded what was offered (`clarify`); this one records the pick.
        chosen = Chosen(chosen=value, asked_about=asked.text)
        if value == SOMETHING_ELSE:
            t.classified(Classified(intent_id=None, confidence=GIVEN, chosen=value, asked_about=asked.text))
            await ctx.out.send(self._nothing_meant(ctx))
            t.emit("response_generated", {"message": m.clarify_none, "clarification": SOMETHING_ELSE})
            return Settled(ctx=ctx, handled=True)
        t.decided.chosen = chosen  # recorded with the request's reading (`intent_classified`)
        spec = self.specs[value]
        takes = set(spec.required_params) | set(spec.optional_params)
        params = {k: v for k, v in asked.params.items() if k in takes}
        # The request's own description (a ticket's problem), as a sure reading would take it.
        described = {
            slot: self.reader.described(slot, asked.text)
            for slot in spec.required_params
            if slot not in params and (spec_of := self.reader.slot(slot)) is not None and spec_of.from_request
        }
        params |= {k: v for k, v in described.items() if v is not None}
        cls = Classification(intent_id=value, params=params, confidence=GIVEN)
        # The turn goes on as if the customer had said that request in the message asked about.
        # The request is the one picked, not a reading of these words: the turn holds no reading.
        original = ctx.interaction.model_copy(update={"text": asked.text} | _TYPED)
        return Settled(ctx=replace(ctx, interaction=original, reading=None), chosen=cls)


def _asked_someone_else(state: SessionState, speaker: str, qid: str) -> bool:
    """Whether the question clicked was asked of another person of the thread."""
    for who, part in state.speakers.items():
        if who == speaker:
            continue
        goal = part.active_goal
        if (part.clarification is not None and part.clarification.id == qid) or (goal is not None and goal.id == qid):
            return True
    return False
