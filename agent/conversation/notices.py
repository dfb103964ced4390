"""What the bot says when it goes back to an earlier request, queues one, or cannot place a message."""

from __future__ import annotations

from agent.config.schema import IntentSpec, Messages
from agent.context.outcome import Classified
from agent.context.turn import TurnContext
from agent.conversation.confirmations import Confirmations
from agent.conversation.handoff import handoff_intent
from agent.conversation.session import Goal, PendingConfirmation, Speaker
from agent.domain.types import Classification, OutboundMessage
from agent.templates import names, render


class GoalNames:
    """A goal in words people use ("your laptop recommendation"), from its intent's `goal_name`
    templates: the first whose fields the goal's slots fill; else the generic `goal_default`."""

    def __init__(self, specs: dict[str, IntentSpec], messages: Messages):
        self.specs = specs
        self.default = messages.goal_default

    def __call__(self, goal: Goal) -> str:
        spec = self.specs.get(goal.intent_id)
        for template in spec.goal_name if spec else []:
            if all(goal.slots.get(name) is not None for name in names(template)):
                return render(template, goal.slots)
        return self.default


def resume(goal: Goal, interrupted_by: str, m: Messages, name: str) -> OutboundMessage | None:
    """Say the bot is back on an earlier request: always when it waits for an answer (the question
    comes with it), once otherwise, and not at all after a side question of the same agent."""
    if not goal.missing and (goal.resume_announced or goal.agent == interrupted_by):
        return None
    goal.resume_announced = True
    goal.asked_again = bool(goal.missing)
    text = render(m.resume, {"goal": name})
    if goal.next_question:
        text = f"{text} {goal.next_question}"
    return OutboundMessage(kind="question" if goal.missing else "notice", text=text)


def queued(names: list[str], m: Messages) -> OutboundMessage:
    """Later requests of the message wait behind the one that needs an answer first."""
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return OutboundMessage(kind="notice", text=render(m.queued, {"goals": listed}))


async def unknown(
    ctx: TurnContext,
    cls: Classification,
    pending: PendingConfirmation | None,
    m: Messages,
    confirmations: Confirmations,
) -> None:
    """No intent fits: a "no" declines the offer that was open, else the open confirmation is
    asked again, else the fallback with a person on offer."""
    t = ctx.t
    unknown = Classified(intent_id=None, unknown_intent=True, confidence=cls.confidence, reply=cls.reply)
    if cls.candidates:  # what the reading found nearest, for a review of the miss
        unknown.candidates = list(cls.candidates)
    t.classified(unknown)
    if cls.reply == "no" and pending is not None:
        await ctx.out.send(OutboundMessage(kind="answer", text=m.declined_offer))
        t.emit("response_generated", {"declined": pending.kind})
    elif not await confirmations.remind(ctx):
        message = fallback(ctx.me, handoff_intent(ctx.eligible), m, cls.out_of_scope, cls.outside)
        await ctx.out.send(message)
        t.outcome.fell_back, t.outcome.out_of_scope = True, cls.out_of_scope is not None or cls.outside
        outcome = {"message": message.text, "fallback": True, "unknown_intent": True}
        t.emit("response_generated", outcome | {"out_of_scope": t.outcome.out_of_scope})


def fallback(
    me: Speaker, handoff: str | None, m: Messages, out_of_scope: str | None = None, outside: bool = False
) -> OutboundMessage:
    """The answer to a message no intent fits (an out-of-scope topic's own honest answer, or the
    general one): the pending question again, and a person on offer (through `handoff`, the
    intent that asks for one, when there is one)."""
    goal = me.active_goal
    text = out_of_scope or (m.outside if outside and m.outside else m.fallback)
    if goal and goal.next_question:
        text = f"{text} {goal.next_question}"
    buttons: list = []
    if handoff is not None:
        me.pending_confirmation = PendingConfirmation(kind="offer", intent_id=handoff, prompt=m.human_offer)
        buttons = ["human"]
    text = f"{text} {m.human_offer}"
    return OutboundMessage(kind="fallback", text=text, buttons=buttons)
