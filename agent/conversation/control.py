"""Conversation control, the handler of the cancel, goodbye and unclear moves (agent/conversation/
moves.py): "cancel that" calls off the request in progress, "bye" closes politely, and a message
with no meaning (emoji, "hmm") gets a short nudge that names what is pending.
"""

from __future__ import annotations

from agent.config.schema import Messages, Vocabulary
from agent.context.outcome import Classified, ControlKind
from agent.context.turn import TurnContext
from agent.conversation import goals
from agent.conversation.moves import Cancel, ControlMove, Goodbye, Unclear
from agent.conversation.notices import GoalNames, resume
from agent.conversation.session import Goal
from agent.domain.types import OutboundMessage
from agent.templates import render
from agent.text import words

Kind = ControlKind


class Control:
    """
    Args:
        vocabulary: the words that carry no meaning on their own ("hmm", "lol").
        messages: what the bot says.
        names: names goals in words people use.
    """

    def __init__(self, vocabulary: Vocabulary, messages: Messages, names: GoalNames):
        self.empty = {w for p in vocabulary.empty for w in words(p)}
        self.messages = messages
        self.names = names

    def says_nothing(self, text: str) -> bool:
        """No word with a meaning: an emoji, "hmm", "lol"."""
        said = words(text)
        return not said or all(w in self.empty for w in said)

    async def answer(self, move: ControlMove, ctx: TurnContext) -> None:
        kind: Kind = "cancel" if isinstance(move, Cancel) else "farewell" if isinstance(move, Goodbye) else "empty"
        m, t = self.messages, ctx.t
        goal = ctx.me.active_goal
        said = move.said if isinstance(move, Unclear) else None
        classified = Classified(intent_id=None, control=kind)
        if said:
            classified.reply = said
        t.classified(classified)
        if kind == "cancel":
            cancelled, resumed = goals.cancel(ctx.me)
            t.emit("goal_updated", {"action": "cancelled", "goal_id": cancelled.id if cancelled else None})
            if cancelled is None:
                await ctx.out.send(OutboundMessage(kind="answer", text=m.nothing_to_cancel))
            else:
                await ctx.out.send(
                    OutboundMessage(kind="answer", text=render(m.cancelled, {"goal": self.names(cancelled)}))
                )
                if resumed is not None and (notice := self._resume(resumed)) is not None:
                    await ctx.out.send(notice)
        elif kind == "farewell":
            text = render(m.farewell_pending, {"goal": self.names(goal)}) if goal else m.farewell
            await ctx.out.send(OutboundMessage(kind="answer", text=text))
        else:
            await ctx.out.send(self._nudge(goal, replied=isinstance(move, Unclear) and move.replied))
        t.emit("response_generated", {"control": kind})

    def _resume(self, goal: Goal) -> OutboundMessage | None:
        # Cancelling is no side question: the earlier request is announced even for the same agent.
        return resume(goal, "", self.messages, self.names(goal))

    def _nudge(self, goal: Goal | None, replied: bool = False) -> OutboundMessage:
        """What is pending, asked again; a bare yes to a question gets the question as it was (the
        person who just answered is plainly there)."""
        m = self.messages
        if goal is not None and goal.next_question:
            text = goal.next_question if replied else f"{m.nudge} {goal.next_question}"
            return OutboundMessage(kind="question", text=text)
        if goal is not None:
            return OutboundMessage(kind="answer", text=render(m.nudge_open, {"goal": self.names(goal)}))
        return OutboundMessage(kind="answer", text=m.nudge_idle)
