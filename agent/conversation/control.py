"""Conversation control, read before understanding in every mode: "cancel that" calls off the
request in progress, "bye" closes politely, and a message with no meaning (emoji, "hmm") gets a
short nudge that names what is pending. The phrases come from config/intents.yaml `vocabulary`.
"""

from __future__ import annotations

import re
from typing import Literal

from agent.config import Messages, Vocabulary
from agent.conversation import goals
from agent.conversation.notices import GoalNames, resume
from agent.session import Goal, SessionState
from agent.turn import Turn
from agent.types import Interaction, OutboundMessage

Kind = Literal["cancel", "farewell", "empty"]
_WORD = re.compile(r"[a-z0-9']+")
# Cancel and farewell are short remarks; a longer message says something more and is understood normally.
MAX_WORDS = 7


def _phrases(items: list[str]) -> list[tuple[str, ...]]:
    return sorted({tuple(_WORD.findall(p.lower())) for p in items if _WORD.findall(p.lower())}, key=len, reverse=True)


class Control:
    """
    Args:
        vocabulary: the cancel, farewell, empty and softener phrases.
        messages: what the bot says.
        names: names goals in words people use.
    """

    def __init__(self, vocabulary: Vocabulary, messages: Messages, names: GoalNames):
        self.cancel = _phrases(vocabulary.cancel)
        self.farewell = _phrases(vocabulary.farewell)
        self._farewell_words = {w for p in self.farewell for w in p}
        self.empty = {w for p in vocabulary.empty for w in _WORD.findall(p.lower())}
        self.soft = {w for p in vocabulary.softeners for w in _WORD.findall(p.lower())}
        self.messages = messages
        self.names = names
        self.bare_replies = {" ".join(_WORD.findall(w.lower())) for w in [*vocabulary.yes, *vocabulary.no]}

    @staticmethod
    def applies(interaction: Interaction, state: SessionState) -> bool:
        """Typed text with no yes/no question open in the thread: an open confirmation reads "stop"
        as its "no", and someone else's is refused to a bystander by Confirmations."""
        return interaction.action is None and state.pending_confirmation is None and not state.open_confirmations()

    def read(self, text: str, state: SessionState) -> Kind | None:
        words = _WORD.findall(text.lower().replace("\u2019", "'"))
        if not words or all(w in self.empty for w in words):
            return "empty"
        if len(words) > MAX_WORDS:
            return None
        goal = state.active_goal
        # "cancel the ticket" names the goal it calls off; those words do not make it a new request.
        allowed = self.soft | (set(_WORD.findall(self.names(goal).lower())) if goal else set())
        if self._only(words, self.cancel, allowed):
            return "cancel"
        if self._only(words, self.farewell, allowed | self._farewell_words):
            return "farewell"
        if " ".join(words) in self.bare_replies:
            # A bare "ok" or "no" when nothing was asked as a yes/no question answers nothing.
            return "empty"
        return None

    @staticmethod
    def _only(words: list[str], phrases: list[tuple[str, ...]], allowed: set[str]) -> bool:
        """The message is one of the phrases with nothing but allowed words around it."""
        present = set(words)
        for phrase in phrases:
            if phrase[0] not in present:  # the phrase cannot start anywhere
                continue
            n = len(phrase)
            for i in range(len(words) - n + 1):
                if tuple(words[i : i + n]) == phrase and all(w in allowed for w in words[:i] + words[i + n :]):
                    return True
        return False

    async def answer(self, kind: Kind, state: SessionState, t: Turn) -> None:
        m = self.messages
        goal = state.active_goal
        t.emit("intent_classified", {"intent_id": None, "control": kind})
        if kind == "cancel":
            cancelled, resumed = goals.cancel(state)
            t.emit("goal_updated", {"action": "cancelled", "goal_id": cancelled.id if cancelled else None})
            if cancelled is None:
                await t.send(OutboundMessage(kind="answer", text=m.nothing_to_cancel))
            else:
                await t.send(OutboundMessage(kind="answer", text=m.cancelled.format(goal=self.names(cancelled))))
                if resumed is not None and (notice := self._resume(resumed)) is not None:
                    await t.send(notice)
        elif kind == "farewell":
            text = m.farewell_pending.format(goal=self.names(goal)) if goal else m.farewell
            await t.send(OutboundMessage(kind="answer", text=text))
        else:
            await t.send(self._nudge(goal))
        t.emit("response_generated", {"control": kind})

    def _resume(self, goal: Goal) -> OutboundMessage | None:
        # Cancelling is no side question: the earlier request is announced even for the same agent.
        return resume(goal, "", self.messages, self.names(goal))

    def _nudge(self, goal: Goal | None) -> OutboundMessage:
        m = self.messages
        if goal is not None and goal.next_question:
            return OutboundMessage(kind="question", text=f"{m.nudge} {goal.next_question}")
        if goal is not None:
            return OutboundMessage(kind="answer", text=m.nudge_open.format(goal=self.names(goal)))
        return OutboundMessage(kind="answer", text=m.nudge_idle)
