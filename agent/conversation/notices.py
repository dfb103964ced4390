"""What the bot says when it goes back to an earlier request, or cannot place a message."""

from __future__ import annotations

from agent.config import Messages
from agent.types import Goal, OutboundMessage, PendingConfirmation, SessionState


def resume(goal: Goal, interrupted_by: str, m: Messages) -> OutboundMessage | None:
    """Say the bot is back on an earlier request: always when it waits for an answer (the question
    comes with it), once otherwise, and not at all after a side question of the same agent."""
    if not goal.missing and (goal.resume_announced or goal.agent == interrupted_by):
        return None
    goal.resume_announced = True
    text = m.resume.format(goal=goal.intent_id.replace("_", " "))
    if goal.next_question:
        text = f"{text} {goal.next_question}"
    return OutboundMessage(kind="question" if goal.missing else "notice", text=text)


def fallback(state: SessionState, can_hand_off: bool, m: Messages, out_of_scope: str | None = None) -> OutboundMessage:
    """The answer to a message no intent fits (or an out-of-scope topic's own honest answer): the
    pending question again, and a person on offer."""
    goal = state.active_goal
    text = out_of_scope or m.fallback
    if goal and goal.next_question:
        text = f"{text} {goal.next_question}"
    buttons: list = []
    if can_hand_off:
        state.pending_confirmation = PendingConfirmation(kind="offer", intent_id="human_handoff", prompt=m.human_offer)
        buttons = ["human"]
    text = f"{text} {m.human_offer}"
    return OutboundMessage(kind="fallback", text=text, buttons=buttons)
