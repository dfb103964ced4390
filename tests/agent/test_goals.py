"""Goal-stack transitions, alone: create, fill, interleave, finish, resume."""

from __future__ import annotations

from agent.conversation import goals
from agent.conversation.session import GoalStatus, Speaker
from agent.domain.types import Classification, Intent
from tests.helpers import Asks

ORDER = Intent(id="order_status", agent="support", required_params=["order_id"], priority=20)
TICKET = Intent(id="create_ticket", agent="support", required_params=["summary"], priority=10)
HUMAN = Intent(id="human_handoff", agent="support", priority=30)


q = Asks()


def test_a_goal_missing_a_slot_is_blocked_with_a_question() -> None:
    state = Speaker()
    update = goals.apply(state, Classification(intent_id="order_status"), ORDER, q)
    goal = state.goals[update.goal_id]
    assert (update.action, goal.status, goal.missing, goal.next_question) == (
        "created",
        GoalStatus.blocked,
        ["order_id"],
        "What is your order_id?",
    )
    assert goal.type == "support.order_status"


def test_filling_the_slot_unblocks_the_same_goal() -> None:
    state = Speaker()
    first = goals.apply(state, Classification(intent_id="order_status"), ORDER, q)
    second = goals.apply(state, Classification(intent_id="order_status", params={"order_id": "O-1"}), ORDER, q)
    assert second.action == "updated" and second.goal_id == first.goal_id
    goal = state.goals[first.goal_id]
    assert goal.status == GoalStatus.active and goal.missing == [] and goal.next_question == ""


def test_higher_priority_suspends_and_done_resumes() -> None:
    state = Speaker()
    ticket = goals.apply(state, Classification(intent_id="create_ticket"), TICKET, q)
    order = goals.apply(state, Classification(intent_id="order_status", params={"order_id": "O-1"}), ORDER, q)
    assert order.action == "interleaved" and order.suspended == ticket.goal_id
    assert state.goal_stack == [ticket.goal_id]
    assert state.goals[ticket.goal_id].status == GoalStatus.suspended
    resumed = goals.finish(state, state.goals[order.goal_id])
    assert resumed is not None and resumed.id == ticket.goal_id
    assert resumed.status == GoalStatus.blocked  # still missing its summary
    assert state.active_goal_id == ticket.goal_id and state.goal_stack == []


def test_equal_or_lower_priority_replaces_the_active_goal() -> None:
    state = Speaker()
    order = goals.apply(state, Classification(intent_id="order_status"), ORDER, q)
    ticket = goals.apply(state, Classification(intent_id="create_ticket"), TICKET, q)
    assert ticket.action == "replaced" and ticket.replaced == order.goal_id
    assert state.goals[order.goal_id].status == GoalStatus.cancelled
    assert state.goal_stack == []


def test_nested_interruptions_unwind_in_order() -> None:
    state = Speaker()
    t = goals.apply(state, Classification(intent_id="create_ticket"), TICKET, q)
    o = goals.apply(state, Classification(intent_id="order_status"), ORDER, q)
    h = goals.apply(state, Classification(intent_id="human_handoff"), HUMAN, q)
    assert goals.stack_types(state) == ["support.create_ticket", "support.order_status"]
    assert goals.finish(state, state.goals[h.goal_id]).id == o.goal_id  # type: ignore[union-attr]
    assert goals.finish(state, state.goals[o.goal_id]).id == t.goal_id  # type: ignore[union-attr]
    assert goals.finish(state, state.goals[t.goal_id]) is None
    assert state.active_goal_id is None


def test_finished_goals_are_pruned() -> None:
    state = Speaker()
    for _ in range(goals.KEEP_FINISHED + 5):
        u = goals.apply(state, Classification(intent_id="order_status", params={"order_id": "O-1"}), ORDER, q)
        goals.finish(state, state.goals[u.goal_id])
    assert len(state.goals) <= goals.KEEP_FINISHED + 1
