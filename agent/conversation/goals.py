"""Goals and the goal stack: slot filling, scheduling by priority and recency, done -> resume.

A new request of equal or higher priority suspends the active goal (pushed on the stack); a lower
one replaces it. When a goal ends (done, failed, cancelled or abandoned) the suspended goal of
highest priority resumes, the most recent first among equals. A goal with `stays_open` (a
recommendation) stays active after its answer for follow-ups. Every function here is a pure
transition on SessionState, so each is testable alone and the router only decides when to call them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel

from agent.planners.render import render
from agent.session import Goal, GoalStatus, SessionState
from agent.types import Classification, Intent, utcnow

# The confidence at which understanding acts without asking (understanding/rules.py STRONG).
SURE = 0.75
# Finished goals kept in the state for context; older ones are dropped so the row stays small.
KEEP_FINISHED = 8
FINISHED = (GoalStatus.done, GoalStatus.failed, GoalStatus.cancelled, GoalStatus.abandoned)

Action = Literal["created", "updated", "interleaved", "replaced", "queued"]


class GoalUpdate(BaseModel):
    action: Action
    goal_id: str
    goal_type: str
    suspended: str | None = None  # goal id pushed on the stack
    replaced: str | None = None  # goal id cancelled in favour of the new one
    slots_filled: list[str] = []


def refresh(goal: Goal, intent: Intent, question: Callable[[str], str]) -> None:
    """Recompute missing, next_question and status after the slots changed."""
    goal.missing = [p for p in intent.required_params if goal.slots.get(p) in (None, "")]
    if goal.missing:
        goal.status = GoalStatus.blocked
        # The question may name what is already known ("What should task 2 say instead?").
        goal.next_question = render(question(goal.missing[0]), goal.slots)
    else:
        goal.status = GoalStatus.active
        goal.next_question = ""
    goal.updated_at = utcnow()


def _new(state: SessionState, cls: Classification, intent: Intent, question: Callable[[str], str]) -> Goal:
    params = {k: v for k, v in cls.params.items() if v not in (None, "")}
    goal = Goal(
        id=f"g-{uuid.uuid4().hex[:10]}",
        type=intent.goal_type,
        agent=intent.agent,
        intent_id=intent.id,
        priority=intent.priority,
        slots=params,
        touched_turn=state.turns,
        sure=cls.confidence >= SURE or cls.fills_slot,
    )
    refresh(goal, intent, question)
    state.goals[goal.id] = goal
    return goal


def apply(state: SessionState, cls: Classification, intent: Intent, question: Callable[[str], str]) -> GoalUpdate:
    """Fold a classified message into the goals: update the active goal or open a new one."""
    active = state.active_goal
    params = {k: v for k, v in cls.params.items() if v not in (None, "")}
    if active is not None and active.intent_id == intent.id:
        active.slots.update(params)
        active.touched_turn = state.turns
        active.asked_again = False
        refresh(active, intent, question)
        return GoalUpdate(action="updated", goal_id=active.id, goal_type=active.type, slots_filled=list(params))

    goal = _new(state, cls, intent, question)
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
            state.goal_stack.append(active.id)
            update.action, update.suspended = "interleaved", active.id
        else:
            # A lower-priority request means the user moved on from the earlier one.
            active.status = GoalStatus.cancelled
            active.updated_at = utcnow()
            update.action, update.replaced = "replaced", active.id
    state.active_goal_id = goal.id
    _prune(state)
    return update


def queue(
    state: SessionState,
    requests: list[Classification],
    intents: dict[str, Intent],
    question: Callable[[str, str], str],
) -> list[Goal]:
    """Later requests of one message wait behind the active goal, in the order they were made."""
    queued = []
    for cls in requests:
        intent = intents[cls.intent_id or ""]
        queued.append(_new(state, cls, intent, lambda slot, i=intent.id: question(i, slot)))  # type: ignore[misc]
    for goal in queued:
        goal.status, goal.queued = GoalStatus.suspended, True
    # The stack's top resumes first, so the first request goes on last.
    state.goal_stack.extend(g.id for g in reversed(queued))
    return queued


def transient(intent: Intent) -> Goal:
    """A goal for a chat intent: answered this turn, never stored, never on the stack."""
    return Goal(id="chat", type=intent.goal_type, agent=intent.agent, intent_id=intent.id, priority=intent.priority)


def settle(state: SessionState, goal: Goal, intent: Intent, status: GoalStatus) -> Goal | None:
    """A plan ended the goal. A goal that stays open (a recommendation) keeps listening for
    follow-ups after its answer; any other goal finishes and the next one resumes."""
    if status == GoalStatus.done and intent.stays_open:
        goal.answered = True
        goal.status = GoalStatus.active
        goal.updated_at = utcnow()
        return None
    return finish(state, goal, status) if state.active_goal_id == goal.id else None


def finish(state: SessionState, goal: Goal, status: GoalStatus = GoalStatus.done) -> Goal | None:
    """Mark the goal finished and resume the suspended goal that comes next, if any."""
    goal.status = status
    goal.updated_at = utcnow()
    state.active_goal_id = None
    resumed = _next(state)
    if resumed is not None:
        resumed.status = GoalStatus.blocked if resumed.missing else GoalStatus.active
        resumed.updated_at = utcnow()
        resumed.touched_turn = state.turns
        state.active_goal_id = resumed.id
    return resumed


def _next(state: SessionState) -> Goal | None:
    """The suspended goal of highest priority; among equals the most recent (the stack's top)."""
    live = [g for gid in state.goal_stack if (g := state.goals.get(gid)) and g.status == GoalStatus.suspended]
    if not live:
        state.goal_stack.clear()
        return None
    best = max(reversed(live), key=lambda g: g.priority)
    state.goal_stack = [g.id for g in live if g.id != best.id]
    return best


def cancel(state: SessionState) -> tuple[Goal | None, Goal | None]:
    """The user called off the active goal: (the cancelled goal, the goal that resumes)."""
    goal = state.active_goal
    if goal is None or goal.status in FINISHED:
        return None, None
    return goal, finish(state, goal, GoalStatus.cancelled)


def age(state: SessionState, limit: int) -> list[Goal]:
    """Count a user turn and abandon goals nobody worked on for more than `limit` turns."""
    state.turns += 1
    stale = [
        g
        for gid in [state.active_goal_id, *state.goal_stack]
        if gid and (g := state.goals.get(gid)) and g.status not in FINISHED and state.turns - g.touched_turn > limit
    ]
    active = state.active_goal
    for g in stale:
        if g is not active:
            g.status, g.updated_at = GoalStatus.abandoned, utcnow()
            state.goal_stack = [i for i in state.goal_stack if i != g.id]
    if active is not None and active in stale:
        finish(state, active, GoalStatus.abandoned)
    return stale


def memory(state: SessionState, history_count: int) -> dict:
    """What the turn starts from, for the `received` telemetry event."""
    active = state.active_goal
    return {
        "history_count": history_count,
        "params_keys": sorted(active.slots) if active else [],
        "waiting_for_param": active.missing[0] if active and active.missing else None,
    }


def stack_types(state: SessionState) -> list[str]:
    return [state.goals[g].type for g in state.goal_stack if g in state.goals]


def _prune(state: SessionState) -> None:
    live = {state.active_goal_id, *state.goal_stack}
    finished = sorted((g for g in state.goals.values() if g.id not in live), key=lambda g: g.updated_at)
    for g in finished[: max(0, len(finished) - KEEP_FINISHED)]:
        del state.goals[g.id]
