"""The goal scheduler alone: priority and recency, queued requests, open goals, cancel, abandonment."""

from __future__ import annotations

from agent.conversation import goals
from agent.conversation.session import GoalStatus, Speaker
from agent.domain.types import Classification, Intent
from tests.helpers import Asks

ORDER = Intent(id="order_status", agent="support", required_params=["order_id"], priority=20)
FIX = Intent(id="troubleshoot", agent="support", required_params=["model", "symptom"], priority=20)
TICKET = Intent(id="create_ticket", agent="support", required_params=["summary"], priority=10)
SALE = Intent(id="recommend_item", agent="sales", required_params=["category", "budget"], priority=5, stays_open=True)
TASK = Intent(id="task_update", agent="tasks", required_params=["task_number", "new_title"], priority=15)
INTENTS = {i.id: i for i in (ORDER, FIX, TICKET, SALE, TASK)}


q = Asks()


def open_goal(state: Speaker, intent: Intent, **params: object) -> str:
    return goals.apply(state, Classification(intent_id=intent.id, params=params), intent, q).goal_id


def test_equal_priority_suspends_instead_of_dropping_the_earlier_goal() -> None:
    state = Speaker()
    fix = open_goal(state, FIX, symptom="freezes")  # waiting for the model
    update = goals.apply(state, Classification(intent_id="order_status", params={"order_id": "O-1"}), ORDER, q)
    assert update.action == "interleaved" and update.suspended == fix
    assert state.goals[fix].status == GoalStatus.suspended and state.goal_stack == [fix]
    resumed = goals.finish(state, state.goals[update.goal_id])
    assert resumed is not None and resumed.id == fix
    assert resumed.status == GoalStatus.blocked and resumed.next_question == "What is your model?"


def test_lower_priority_replaces_the_active_goal() -> None:
    state = Speaker()
    order = open_goal(state, ORDER)
    update = goals.apply(state, Classification(intent_id="create_ticket", params={"summary": "x"}), TICKET, q)
    assert update.action == "replaced" and update.replaced == order
    assert state.goals[order].status == GoalStatus.cancelled and state.goal_stack == []


def test_the_highest_priority_suspended_goal_resumes_first_then_the_most_recent() -> None:
    state = Speaker()
    ticket = open_goal(state, TICKET)
    fix = open_goal(state, FIX)  # suspends the ticket (higher)
    order = open_goal(state, ORDER)  # suspends the fix (equal)
    assert state.goal_stack == [ticket, fix]
    first = goals.finish(state, state.goals[order])
    assert first is not None and first.id == fix
    second = goals.finish(state, state.goals[fix])
    assert second is not None and second.id == ticket
    assert goals.finish(state, state.goals[ticket]) is None and state.active_goal_id is None


def test_queued_requests_run_in_the_order_they_were_made() -> None:
    state = Speaker()
    ticket = open_goal(state, TICKET)  # waits for the summary
    queued = goals.queue(
        state,
        [
            Classification(intent_id="order_status", params={"order_id": "O-1"}),
            Classification(intent_id="order_status", params={"order_id": "O-2"}),
        ],
        INTENTS,
        q,
    )
    assert [g.status for g in queued] == [GoalStatus.suspended] * 2 and all(g.queued for g in queued)
    assert state.active_goal_id == ticket
    first = goals.finish(state, state.goals[ticket])
    assert first is not None and first.slots == {"order_id": "O-1"}
    second = goals.finish(state, first)
    assert second is not None and second.slots == {"order_id": "O-2"}


def test_an_open_goal_stays_active_after_its_answer_and_others_finish() -> None:
    state = Speaker()
    sale = open_goal(state, SALE, category="mouse", budget=1500)
    assert goals.settle(state, state.goals[sale], SALE, GoalStatus.done) is None
    goal = state.goals[sale]
    assert goal.status == GoalStatus.active and goal.answered and state.active_goal_id == sale
    order = open_goal(state, ORDER, order_id="O-1")  # higher priority: the sale waits on the stack
    resumed = goals.settle(state, state.goals[order], ORDER, GoalStatus.done)
    assert resumed is not None and resumed.id == sale and state.goals[order].status == GoalStatus.done
    # A failure ends even an open goal.
    goals.settle(state, state.goals[sale], SALE, GoalStatus.failed)
    assert state.goals[sale].status == GoalStatus.failed and state.active_goal_id is None


def test_cancel_ends_the_active_goal_and_resumes_the_one_beneath() -> None:
    state = Speaker()
    ticket = open_goal(state, TICKET)
    order = open_goal(state, ORDER)
    cancelled, resumed = goals.cancel(state)
    assert cancelled is not None and cancelled.id == order and cancelled.status == GoalStatus.cancelled
    assert resumed is not None and resumed.id == ticket
    cancelled, resumed = goals.cancel(state)
    assert cancelled is not None and cancelled.id == ticket and resumed is None
    assert goals.cancel(state) == (None, None)


def test_goals_idle_for_too_many_turns_are_abandoned() -> None:
    state = Speaker()
    goals.age(state, 3)
    ticket = open_goal(state, TICKET)  # turn 1
    goals.age(state, 3)
    order = open_goal(state, ORDER)  # turn 2: the ticket waits on the stack
    for _ in range(2):  # turns 3-4: nobody works on either
        assert goals.age(state, 3) == []
    abandoned = goals.age(state, 3)  # turn 5: the ticket has been idle 4 turns, more than 3
    assert [g.id for g in abandoned] == [ticket] and state.goals[ticket].status == GoalStatus.abandoned
    assert state.active_goal_id == order and state.goal_stack == []
    assert [g.id for g in goals.age(state, 3)] == [order]  # turn 6
    assert state.goals[order].status == GoalStatus.abandoned
    assert state.active_goal_id is None and state.goal_stack == []


def test_working_on_a_goal_keeps_it_alive() -> None:
    state = Speaker()
    goals.age(state, 2)
    task = open_goal(state, TASK)
    for n in range(6):
        goals.age(state, 2)
        open_goal(state, TASK, task_number=str(n))  # the same goal, updated every turn
    assert state.goals[task].status == GoalStatus.blocked and state.active_goal_id == task


def test_a_question_names_what_is_already_known() -> None:
    state = Speaker()
    update = goals.apply(
        state,
        Classification(intent_id="task_update", params={"task_number": "2"}),
        TASK,
        Asks("What should task {task_number} say instead?"),
    )
    assert state.goals[update.goal_id].next_question == "What should task 2 say instead?"
