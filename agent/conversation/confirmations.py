"""Confirmations bound to the requester and the exact action: money-moving or destructive tools wait for a yes.

The pending action (tool, canonical params, their hash, expiry) lives in the requester's
`pending_confirmation` (one per speaker of the thread) until they answer or it expires. Only an
assent (a standalone yes, agent/conversation/moves.py) or the Confirm button from the requester
carries out exactly that action once; a standalone no or Cancel drops it. A yes or no from anyone else gets a private
notice and changes nothing. A message that changes the action ("just $15") re-plans it, so the
new exact action is asked again after the policy check; any other message is handled as a
request and the open question is restated after it. The hash is the action's idempotency key in
the tool ledger, so a second confirm (two clicks, a redelivered event) answers with the first
result instead of acting twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel

from agent.config.schema import Messages
from agent.context.turn import TurnContext
from agent.conversation import goals
from agent.conversation.session import ConfirmedAction, GoalStatus, PendingConfirmation, Speaker
from agent.domain.types import Classification, OutboundMessage, ToolCall, ToolResult, utcnow
from agent.storage import SessionStore
from agent.templates import render
from agent.text import Answer
from agent.understanding.levels import GIVEN
from agent.understanding.replies import YesNoAnswer

BUTTONS: list[Literal["confirm", "cancel", "human"]] = ["confirm", "cancel"]


class Resolution(BaseModel):
    """What an open confirmation made of this message.

    outcome: "run" (confirmed: the goal is active again and its action approved for this turn),
    "handled" (answered: cancelled, expired, or a repeated confirm answered from the ledger),
    "continue" (not an answer: the question stays open, the message is handled normally).
    """

    outcome: Literal["run", "handled", "continue"]
    results: list[ToolResult] = []
    cls: Classification | None = None  # for "run": the classification that resumes the goal


def action_hash(session_id: str, tool: str, params: dict[str, Any]) -> str:
    """The identity of one action in one conversation: same tool, same canonical params, same hash."""
    canonical = json.dumps({"tool": tool, "params": params}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(f"{session_id}|{canonical}".encode()).hexdigest()[:32]


class Confirmations:
    """
    Args:
        store: where the tool ledger is read, to answer a repeated confirm with the first result.
        ttl_seconds: how long a confirmation stays open.
        messages: what the bot says about its yes/no questions (`confirm_*`, `still_waiting`).
        clock: the current UTC time; tests pass their own.
    """

    def __init__(
        self,
        store: SessionStore,
        ttl_seconds: float,
        messages: Messages,
        clock: Callable[[], datetime] = utcnow,
    ):
        self.store = store
        self.messages = messages
        self.ttl = timedelta(seconds=ttl_seconds)
        self.clock = clock

    async def ask(self, ctx: TurnContext, goal_id: str, intent_id: str, call: ToolCall, prompt: str) -> None:
        """Hold the action and ask; a different action replaces an earlier open question."""
        me, t = ctx.me, ctx.t
        digest = action_hash(ctx.state.session_id, call.tool_name, call.params)
        m = self.messages
        text = f"{prompt or m.confirm_default} {m.confirm_suffix}"
        me.pending_confirmation = PendingConfirmation(
            kind="tool",
            intent_id=intent_id,
            goal_id=goal_id,
            tool=call.tool_name,
            params=call.params,
            action_hash=digest,
            prompt=text,
            expires_at=self.clock() + self.ttl,
        )
        t.emit("confirmation_requested", {"tool": call.tool_name, "params": call.params, "action_hash": digest})
        await ctx.out.send(OutboundMessage(kind="question", text=text, buttons=list(BUTTONS), action_hash=digest))

    async def resolve(self, ctx: TurnContext, answer: Answer | None, cls: Classification) -> Resolution:
        """Settle an open confirmation (or a repeated click) with the message's yes or no, if it is
        one, before the message is read as a request."""
        me, t, interaction = ctx.me, ctx.t, ctx.interaction
        pending = me.pending_confirmation
        if answer is not None and self._someone_elses(ctx):
            await ctx.out.send(OutboundMessage(kind="notice", text=self.messages.confirm_not_yours, private=True))
            t.emit("confirmation_refused", {"reason": "not_the_requester", "answer": answer})
            return Resolution(outcome="handled")
        if pending is None or pending.kind != "tool":
            if interaction.action == "confirm":
                return Resolution(outcome="handled", results=await self._replay(ctx))
            if interaction.action == "cancel":
                await self._say(ctx, self.messages.confirm_nothing, "none_open")
                return Resolution(outcome="handled")
            return Resolution(outcome="continue")
        if pending.expires_at is not None and pending.expires_at <= self.clock():
            me.pending_confirmation = None
            t.emit("confirmation_expired", {"tool": pending.tool, "action_hash": pending.action_hash})
            self._drop_goal(me, pending)
            if answer is None:
                return Resolution(outcome="continue")
            await self._say(ctx, self.messages.confirm_expired, "expired")
            return Resolution(outcome="handled")
        if answer == "no":
            me.pending_confirmation = None
            self._drop_goal(me, pending)
            t.emit("confirmation_cancelled", {"tool": pending.tool, "action_hash": pending.action_hash})
            await self._say(ctx, self.messages.confirm_cancelled, "cancelled")
            return Resolution(outcome="handled")
        if answer != "yes":
            return self._not_an_answer(me, pending, cls)
        # A goal the user moved away from (replaced by another request) still owns its open question.
        goal = me.goals.get(pending.goal_id or "")
        if goal is None or goal.status in (GoalStatus.done, GoalStatus.failed):
            me.pending_confirmation = None
            await self._say(ctx, self.messages.confirm_expired, "goal_gone")
            return Resolution(outcome="handled")
        self._reactivate(me, goal.id)
        t.decided.approved = pending.action_hash
        t.emit("confirmation_accepted", {"tool": pending.tool, "action_hash": pending.action_hash})
        return Resolution(
            outcome="run", cls=Classification(intent_id=goal.intent_id, reply="yes", confidence=GIVEN, fills_slot=True)
        )

    @staticmethod
    def _someone_elses(ctx: TurnContext) -> bool:
        """A click on, or a yes/no to, a question another person of the thread was asked."""
        interaction = ctx.interaction
        others = ctx.state.open_confirmations(interaction.speaker)
        own = ctx.me.pending_confirmation
        if interaction.action_hash is not None:
            mine = own is not None and own.action_hash == interaction.action_hash
            return not mine and any(p.action_hash == interaction.action_hash for p in others.values())
        if own is not None and (own.kind == "tool" or interaction.action is None):
            return False  # the speaker's own question (or offer) is the one answered
        return bool(others)

    def _not_an_answer(self, me: Speaker, pending: PendingConfirmation, cls: Classification) -> Resolution:
        """Not a yes or no. New values for the pending action ("just $15", "make that O-24680")
        re-plan it, so the changed action is asked again; anything else is handled as a request."""
        changes = {k: v for k, v in cls.params.items() if k in pending.params and v not in (None, "")}
        goal = me.goals.get(pending.goal_id or "")
        if changes and cls.intent_id in (None, pending.intent_id) and goal is not None:
            self._reactivate(me, goal.id)
            update = Classification(intent_id=goal.intent_id, params=changes, confidence=GIVEN, fills_slot=True)
            return Resolution(outcome="continue", cls=update)
        return Resolution(outcome="continue")

    @staticmethod
    def shelve(me: Speaker, intent_id: str) -> None:
        """A new request while an action waits: the waiting goal steps aside instead of being
        replaced, so the question is still open (and restated) after the new request is answered."""
        pending = me.pending_confirmation
        active = me.active_goal
        if pending is None or pending.kind != "tool" or active is None or active.id != pending.goal_id:
            return
        if active.intent_id == intent_id:
            return
        active.status = GoalStatus.suspended
        me.goal_stack.append(active.id)
        me.active_goal_id = None

    async def restate(self, ctx: TurnContext) -> None:
        """After answering something else, ask the open question again (once per turn)."""
        pending, t = ctx.me.pending_confirmation, ctx.t
        if pending is None or pending.kind != "tool" or any("confirm" in m.buttons for m in ctx.out.outbound):
            return
        text = render(self.messages.still_waiting, {"prompt": pending.prompt})
        await ctx.out.send(self._question(text, pending))
        t.emit("response_generated", {"confirmation": "restated"})

    @staticmethod
    def _question(text: str, pending: PendingConfirmation) -> OutboundMessage:
        return OutboundMessage(kind="question", text=text, buttons=list(BUTTONS), action_hash=pending.action_hash)

    @staticmethod
    async def offer(ctx: TurnContext, intent_id: str, text: str, cls: Classification) -> None:
        """Understanding is unsure a side-effecting request was meant: one yes/no question, no action."""
        t = ctx.t
        ctx.me.pending_confirmation = PendingConfirmation(
            kind="offer", intent_id=intent_id, params=cls.params, prompt=text
        )
        await ctx.out.send(OutboundMessage(kind="question", text=text))
        t.emit("response_generated", {"message": text, "offer": intent_id, "unsure": True})

    @staticmethod
    def take_offer(me: Speaker) -> PendingConfirmation | None:
        """Offers ("shall I loop in a human?") are one-shot; an action's confirmation stays open."""
        pending = me.pending_confirmation
        if pending is not None and pending.kind == "tool":
            return None
        me.pending_confirmation = None
        return pending

    @staticmethod
    def carried_out(me: Speaker, call: ToolCall, result: ToolResult) -> None:
        """The confirmed action ran: close the question and remember it for a repeated confirm."""
        pending = me.pending_confirmation
        if pending is not None and pending.action_hash == result.idempotency_key:
            me.pending_confirmation = None
        if result.success:
            me.confirmed_action = ConfirmedAction(hash=result.idempotency_key, tool=call.tool_name)

    @staticmethod
    def settle(me: Speaker, approved: str | None, answer: str) -> None:
        """End of an approved turn: keep the answer given, and close a question the policy refused."""
        done = me.confirmed_action
        if approved and done and done.hash == approved and not done.answer:
            done.answer = answer
        pending = me.pending_confirmation
        if approved and pending is not None and pending.action_hash == approved:
            me.pending_confirmation = None

    async def _say(self, ctx: TurnContext, text: str, what: str) -> None:
        await ctx.out.send(OutboundMessage(kind="answer", text=text))
        ctx.t.emit("response_generated", {"confirmation": what})

    async def remind(self, ctx: TurnContext, waiting: bool = False) -> bool:
        """An unclear message (or a "hold on") while a confirmation is open: ask it again rather than guess."""
        pending, t = ctx.me.pending_confirmation, ctx.t
        if pending is None or pending.kind != "tool":
            return False
        m = self.messages
        asked = ctx.answer is not None and ctx.answer.only_asks()  # "what's the address?": followed, not answerable
        said = m.holding if waiting else m.confirm_asked if asked else m.not_followed
        text = f"{said} {pending.prompt}"
        await ctx.out.send(self._question(text, pending))
        t.emit("response_generated", {"confirmation": "held" if waiting else "reminded"})
        return True

    async def unsure(self, ctx: TurnContext, answer: YesNoAnswer) -> bool:
        """A reply that neither plainly agrees nor refuses: say what was understood and ask again,
        with the buttons; nothing runs."""
        pending, t = ctx.me.pending_confirmation, ctx.t
        if pending is None or pending.kind != "tool":
            return False
        changes = answer.of_kind("change", "values")
        doubts = answer.of_kind("refusal", "doubt")
        if changes:
            said = render(self.messages.confirm_unsure_change, {"change": changes[0].strip(" .!,")})
        elif doubts and answer.of_kind("assent"):
            said = render(self.messages.confirm_unsure_both, {"part": doubts[0].strip(" .!,")})
        else:
            said = self.messages.confirm_unsure
        await ctx.out.send(self._question(f"{said} {pending.prompt}", pending))
        t.emit("response_generated", {"confirmation": "unsure", "answer": answer.kind})
        return True

    async def _replay(self, ctx: TurnContext) -> list[ToolResult]:
        t, done = ctx.t, ctx.me.confirmed_action
        previous = await self.store.ledger_get(done.hash or "") if done else None
        if previous is None:
            await self._say(ctx, self.messages.confirm_nothing, "none_open")
            return []
        replayed = previous.model_copy(update={"replayed": True})
        t.emit("tool_execute", {"tool": replayed.tool, "ok": replayed.success, "replayed": True, "time_ms": 0.0})
        await self._say(ctx, (done.answer if done else "") or "That's already done.", "replayed")
        return [replayed]

    @staticmethod
    def _reactivate(me: Speaker, goal_id: str) -> None:
        """Bring the confirmed goal back to the front; whatever the user moved on to waits on the stack."""
        active = me.active_goal
        if active is not None and active.id != goal_id and active.status in (GoalStatus.active, GoalStatus.blocked):
            active.status = GoalStatus.suspended
            me.goal_stack.append(active.id)
        me.goal_stack = [g for g in me.goal_stack if g != goal_id]
        me.goals[goal_id].status = GoalStatus.active
        me.active_goal_id = goal_id

    @staticmethod
    def _drop_goal(me: Speaker, pending: PendingConfirmation) -> None:
        goal = me.goals.get(pending.goal_id or "")
        if goal is None or goal.status in (GoalStatus.done, GoalStatus.failed, GoalStatus.cancelled):
            return
        if me.active_goal_id == goal.id:
            goals.finish(me, goal, GoalStatus.cancelled)
        else:
            goal.status = GoalStatus.cancelled
            me.goal_stack = [g for g in me.goal_stack if g != goal.id]
