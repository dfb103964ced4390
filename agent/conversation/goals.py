"""Goals and the goal stack: slot filling, scheduling by priority and recency, done -> resume.

A new request of equal or higher priority suspends the active goal (pushed on the stack); a lower
one replaces it. When a goal ends (done, failed, cancelled or abandoned) the suspended goal of
highest priority resumes, the most recent first among equals. A goal with `stays_open` (a
recommendation) stays active after its answer for follow-ups. Every function here is a pure
transition on one speaker's part of the conversation, so each is testable alone and the router
only decides when to call them.
"""

from __future__ import annotations

import uuid
from typing import Literal, Protocol

from pydantic import BaseModel

from agent.conversation.session import Goal, GoalStatus, Speaker
from agent.domain.types import Classification, Intent, utcnow
from agent.templates import render

# Finished goals kept in the state for context; older ones are dropped so the row stays small.
KEEP_FINISHED = 8
FINISHED = (GoalStatus.done, GoalStatus.failed, GoalStatus.cancelled, GoalStatus.abandoned)


class Asks(Protocol):
    """Who words the question for a missing slot (an intent's agent)."""

    def question(self, intent_id: str, slot: str) -> str: ...


Action = Literal["created", "updated", "interleaved", "replaced", "queued"]


class GoalUpdate(BaseModel):
    action: Action
    goal_id: str
    goal_type: str
    suspended: str | None = None  # goal id pushed on the stack
    replaced: str | None = None  # goal id cancelled in favour of the new one
    slots_filled: list[str] = []


def refresh(goal: Goal, intent: Intent, asks: Asks) -> None:
    """Recompute missing, next_question and status after the slots changed."""
    goal.missing = [p for p in intent.required_params if goal.slots.get(p) in (None, "")]
    if goal.missing:
        goal.status = GoalStatus.blocked
        # The question may name what is already known ("What should task 2 say instead?").
        goal.next_question = render(asks.question(intent.id, goal.missing[0]), goal.slots)
    else:
        goal.status = GoalStatus.active
        goal.next_question = ""
    goal.updated_at = utcnow()


def _new(me: Speaker, cls: Classification, intent: Intent, asks: Asks) -> Goal:
    params = {k: v for k, v in cls.params.items() if v not in (None, "")}
    goal = Goal(
        id=f"g-{uuid.uuid4().hex[:10]}",
        type=intent.goal_type,
        agent=intent.agent,
        intent_id=intent.id,
        priority=intent.priority,
        slots=params,
        touched_turn=me.turns,
        sure=cls.sure or cls.fills_slot,
    )
    refresh(goal, intent, asks)
    me.goals[goal.id] = goal
    return goal


def apply(me: Speaker, cls: Classification, intent: Intent, asks: Asks) -> GoalUpdate:
    """Fold a classified message into the goals: update the active goal or open a new one."""
    active = me.active_goal
    params = {k: v for k, v in cls.params.items() if v not in (None, "")}
    if active is not None and active.intent_id == intent.id:
        active.slots.update(params)
        active.touched_turn = me.turns
        active.asked_again = False
        refresh(active, intent, asks)
        return GoalUpdate(action="updated", goal_id=active.id, goal_type=active.type, slots_filled=list(params))

    goal = _new(me, cls, intent, asks)
    update = GoalUpdate(action="created", goal_id=goal.id, goal_type=goal.type, slots_filled=list(params))
    if active is not None and active.status not in FINISHED:
        if active.asked_again and not active.sure:
            # Opened on an unsure reading, asked again after a side request and passed over: most
            # likely never meant, so it goes instead of coming back after every answer.
            active.status = GoalStatus.abandoned
            active.updated_at = utcnow()
            update.action, update.replaced = "replaced", active.id
        elif intent.priority >= active.priority:
            active.status = GoalStatus.suspended
            active.updated_at = utcnow()
            me.goal_stack.append(active.id)
            update.action, update.suspended = "interleaved", active.id
        else:
            # A lower-priority request means the user moved on from the earlier one.
            active.status = GoalStatus.cancelled
            active.updated_at = utcnow()
            update.action, update.replaced = "replaced", active.id
    me.active_goal_id = goal.id
    _prune(me)
    return update


def queue(
    me: Speaker,
    requests: list[Classification],
    intents: dict[str, Intent],
    asks: Asks,
) -> list[Goal]:
    """Later requests of one message wait behind the active goal, in the order they were made."""
    queued = []
    for cls in requests:
        intent = intents[cls.intent_id or ""]
        queued.append(_new(me, cls, intent, asks))
    for goal in queued:
        goal.status, goal.queued = GoalStatus.suspended, True
    # The stack's top resumes first, so the first request goes on last.
    me.goal_stack.extend(g.id for g in reversed(queued))
    return queued


def transient(intent: Intent) -> Goal:
    """A goal for a chat intent: answered this turn, never stored, never on the stack."""
    return Goal(id="chat", type=intent.goal_type, agent=intent.agent, intent_id=intent.id, priority=intent.priority)


def settle(me: Speaker, goal: Goal, intent: Intent, status: GoalStatus) -> Goal | None:
    """A plan ended the goal. A goal that stays open (a recommendation) keeps listening for
    follow-ups after its answer; any other goal finishes and the next one resumes."""
    if status == GoalStatus.done and intent.stays_open:
        goal.answered = True
        goal.status = GoalStatus.active
        goal.updated_at = utcnow()
        return None
    return finish(me, goal, status) if me.active_goal_id == goal.id else None


def finish(me: Speaker, goal: Goal, status: GoalStatus = GoalStatus.done) -> Goal | None:
    """Mark the goal finished and resume the suspended goal that comes next, if any."""
    goal.status = status
    goal.updated_at = utcnow()
    me.active_goal_id = None
    resumed = _next(me)
    if resumed is not None:
        resumed.status = GoalStatus.blocked if resumed.missing else GoalStatus.active
        resumed.updated_at = utcnow()
        resumed.touched_turn = me.turns
        me.active_goal_id = resumed.id
    return resumed


def _next(me: Speaker) -> Goal | None:
    """The suspended goal of highest priority; among equals the most recent (the stack's top)."""
    live = [g for gid in me.goal_stack if (g := me.goals.get(gid)) and g.status == GoalStatus.suspended]
    if not live:
        me.goal_stack.clear()
        return None
    best = max(reversed(live), key=lambda g: g.priority)
    me.goal_stack = [g.id for g in live if g.id != best.id]
    return best


def cancel(me: Speaker) -> tuple[Goal | None, Goal | None]:
    """The user called off the active goal: (the cancelled goal, the goal that resumes)."""
    goal = me.active_goal
    if goal is None or goal.status in FINISHED:
        return None, None
    return goal, finish(me, goal, GoalStatus.cancelled)


def age(me: Speaker, limit: int) -> list[Goal]:
    """Count a user turn and abandon goals nobody worked on for more than `limit` turns."""
    me.turns += 1
    stale = [
        g
        for gid in [me.active_goal_id, *me.goal_stack]
        if gid and (g := me.goals.get(gid)) and g.status not in FINISHED and me.turns - g.touched_turn > limit
    ]
    active = me.active_goal
    for g in stale:
        if g is not active:
            g.status, g.updated_at = GoalStatus.abandoned, utcnow()
            me.goal_stack = [i for i in me.goal_stack if i != g.id]
    if active is not None and active in stale:
        finish(me, active, GoalStatus.abandoned)
    return stale


def memory(me: Speaker, history_count: int) -> dict:
    """What the turn starts from, for the `received` telemetry event."""
    active = me.active_goal
    return {
        "history_count": history_count,
        "params_keys": sorted(active.slots) if active else [],
        "waiting_for_param": active.missing[0] if active and active.missing else None,
    }


def stack_types(me: Speaker) -> list[str]:
    return [me.goals[g].type for g in me.goal_stack if g in me.goals]


def _prune(me: Speaker) -> None:
    live = {me.active_goal_id, *me.goal_stack}
    finished = sorted((g for g in me.goals.values() if g.id not in live), key=lambda g: g.updated_at)
    for g in finished[: max(0, len(finished) - KEEP_FINISHED)]:
        del me.goals[g.id]
