"""Goals and the goal stack: slot filling, interleaving by priority, done -> resume previous.

Every function here is a pure transition on SessionState, so each is testable alone and the
router only decides when to call them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel

from agent.types import Classification, Goal, GoalStatus, Intent, SessionState, utcnow

# Finished goals kept in the state for context; older ones are dropped so the row stays small.
KEEP_FINISHED = 8

Action = Literal["created", "updated", "interleaved", "replaced"]


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
        goal.next_question = question(goal.missing[0])
    else:
        goal.status = GoalStatus.active
        goal.next_question = ""
    goal.updated_at = utcnow()


def apply(state: SessionState, cls: Classification, intent: Intent, question: Callable[[str], str]) -> GoalUpdate:
    """Fold a classified message into the goals: update the active goal or open a new one."""
    active = state.active_goal
    params = {k: v for k, v in cls.params.items() if v not in (None, "")}
    if active is not None and active.intent_id == intent.id:
        active.slots.update(params)
        refresh(active, intent, question)
        return GoalUpdate(action="updated", goal_id=active.id, goal_type=active.type, slots_filled=list(params))

    goal = Goal(
        id=f"g-{uuid.uuid4().hex[:10]}",
        type=intent.goal_type,
        agent=intent.agent,
        intent_id=intent.id,
        priority=intent.priority,
        slots=params,
    )
    refresh(goal, intent, question)
    state.goals[goal.id] = goal
    update = GoalUpdate(action="created", goal_id=goal.id, goal_type=goal.type, slots_filled=list(params))
    if active is not None:
        if intent.priority > active.priority:
            active.status = GoalStatus.suspended
            active.updated_at = utcnow()
            state.goal_stack.append(active.id)
            update.action, update.suspended = "interleaved", active.id
        else:
            # Equal or lower priority: the user moved on, so the earlier request is dropped.
            active.status = GoalStatus.cancelled
            active.updated_at = utcnow()
            update.action, update.replaced = "replaced", active.id
    state.active_goal_id = goal.id
    _prune(state)
    return update


def transient(intent: Intent) -> Goal:
    """A goal for a chat intent: answered this turn, never stored, never on the stack."""
    return Goal(id="chat", type=intent.goal_type, agent=intent.agent, intent_id=intent.id, priority=intent.priority)


def finish(state: SessionState, goal: Goal, status: GoalStatus = GoalStatus.done) -> Goal | None:
    """Mark the goal finished and resume the goal beneath it on the stack, if any."""
    goal.status = status
    goal.updated_at = utcnow()
    state.active_goal_id = None
    resumed = None
    while state.goal_stack and resumed is None:
        candidate = state.goals.get(state.goal_stack.pop())
        if candidate is not None and candidate.status == GoalStatus.suspended:
            resumed = candidate
    if resumed is not None:
        resumed.status = GoalStatus.blocked if resumed.missing else GoalStatus.active
        resumed.updated_at = utcnow()
        state.active_goal_id = resumed.id
    return resumed


def stack_types(state: SessionState) -> list[str]:
    return [state.goals[g].type for g in state.goal_stack if g in state.goals]


def _prune(state: SessionState) -> None:
    live = {state.active_goal_id, *state.goal_stack}
    finished = sorted((g for g in state.goals.values() if g.id not in live), key=lambda g: g.updated_at)
    for g in finished[: max(0, len(finished) - KEEP_FINISHED)]:
        del state.goals[g.id]
