"""Task-manager phrasings and storage: ordinary ways of saying it, rows in the database."""

from __future__ import annotations

import pytest

from agent.config.files import load_config
from agent.config.intents import IntentsRegistry
from agent.domain.types import IntentContext
from bots.app import build_app
from tests.helpers import REPO, classify, interaction, rules_classifier, say

CONFIG = load_config(REPO / "config")
CLASSIFIER = rules_classifier()
INTENTS = IntentsRegistry(CONFIG).get_eligible(IntentContext(channel="console"))


@pytest.mark.parametrize(
    ("text", "intent", "params"),
    [
        ("add a task to call the bank tomorrow", "task_add", {"task_title": "call the bank tomorrow"}),
        ("Add task: buy milk!", "task_add", {"task_title": "buy milk"}),
        ("please remind me to water the plants.", "task_add", {"task_title": "water the plants"}),
        ("add buy a mouse pad to my list", "task_add", {"task_title": "buy a mouse pad"}),
        ("can you add eggs to my shopping list please", "task_add", {"task_title": "eggs"}),
        ("Add Pick up dry cleaning to my to do list.", "task_add", {"task_title": "Pick up dry cleaning"}),
        ("what's on my list", "task_list", {}),
        ("Show me my todos", "task_list", {}),
        ("list my tasks please", "task_list", {}),
        ("mark 2 as done", "task_complete", {"task_number": "2"}),
        ("task 3 is done", "task_complete", {"task_number": "3"}),
        ("I finished task 1", "task_complete", {"task_number": "1"}),
        ("delete task 3", "task_delete", {"task_number": "3"}),
        ("Remove task #4 from my list", "task_delete", {"task_number": "4"}),
        ("change task 2 to call mom", "task_update", {"task_number": "2", "new_title": "call mom"}),
        ("I want a refund for O-23456", "refund_request", {"order_id": "O-23456"}),
        ("refund $15 on order 23456", "refund_request", {"order_id": "O-23456", "amount": "15"}),
    ],
)
async def test_task_and_refund_phrasings(text: str, intent: str, params: dict) -> None:
    cls = await classify(CLASSIFIER, CLASSIFIER, interaction(text), INTENTS)
    assert cls.intent_id == intent
    assert cls.params == params


async def test_tasks_belong_to_their_owner_and_live_in_the_database(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        router = app.router
        await say(router, "add a task to call the bank", session="a", customer="C-001")
        await say(router, "add a task to file taxes", session="b", customer="C-001")  # same user, other thread
        theirs, _ = await say(router, "what's on my list", session="c", customer="C-002")
        mine, _ = await say(router, "what's on my list", session="d", customer="C-001")
        await say(router, "delete task 1", session="d", customer="C-001")
        await say(router, "yes", session="d", customer="C-001")
        await say(router, "yes", session="d", customer="C-001")  # a repeated yes is not a second delete
        rows = await app.store.fetch(  # type: ignore[attr-defined]
            "SELECT owner, number, title, status FROM tasks ORDER BY number"
        )
    assert "empty" in theirs.text
    assert "1. call the bank" in mine.text and "2. file taxes" in mine.text
    assert [tuple(r) for r in rows] == [("C-001", 1, "call the bank", "deleted"), ("C-001", 2, "file taxes", "open")]


async def test_greeting_and_off_topic_use_no_tools(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        router = app.router
        for text in ("hello there", "what's the capital of France?"):
            response, _ = await say(router, text)
            assert response.tool_results == []
            assert not any(name in response.text for name in ("add_task", "list_tasks", "delete_task"))


async def test_added_in_ordinary_words_goes_on_the_list_and_a_question_about_it_adds_nothing(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        added, _ = await say(app.router, "add buy a mouse pad to my list")
        asked, _ = await say(app.router, "have I told you to add washing dishes to my todo list?")
        rows = await app.store.fetch("SELECT title, status FROM tasks ORDER BY number")  # type: ignore[attr-defined]
    assert "task 1: buy a mouse pad" in added.text
    assert "Added" not in asked.text and "washing dishes" not in asked.text
    assert [tuple(r) for r in rows] == [("buy a mouse pad", "open")]


async def test_a_task_named_by_its_words_is_that_task_and_an_unclear_one_is_asked_about(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        for title in ("buy milk", "call the plumber", "buy bread"):
            await say(app.router, f"add {title} to my list")
        done, _ = await say(app.router, "mark buy milk as done")
        asked, _ = await say(app.router, "I finished the shopping")  # no task says so: its number is asked
        await say(app.router, "never mind")
        deleting, _ = await say(app.router, "delete the plumber one")
        rows_before_yes = await app.store.fetch("SELECT number, status FROM tasks ORDER BY number")  # type: ignore[attr-defined]
        deleted, _ = await say(app.router, "yes")
        rows = await app.store.fetch("SELECT number, title, status FROM tasks ORDER BY number")  # type: ignore[attr-defined]
    assert "Task 1 (buy milk) is marked as done" in done.text
    assert "Tell me its number" in asked.text
    assert "Delete task 2 (call the plumber)?" in deleting.text
    assert [tuple(r) for r in rows_before_yes] == [(1, "done"), (2, "open"), (3, "open")]  # asked, nothing deleted
    assert "Deleted task 2" in deleted.text
    assert [tuple(r) for r in rows] == [
        (1, "buy milk", "done"),
        (2, "call the plumber", "deleted"),
        (3, "buy bread", "open"),
    ]


async def test_a_task_named_in_words_in_reply_to_the_number_question_is_that_task(db_url: str) -> None:
    """ "Which task is done? Tell me its number." -> "the headphones one" marks that task done; it
    is not a search for headphones. A reply naming no task asks the number again and changes nothing."""
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        for title in ("buy headphones", "call the plumber"):
            await say(app.router, f"add {title} to my list")
        asked, _ = await say(app.router, "I finished a task")
        done, _ = await say(app.router, "the headphones one")
        await say(app.router, "delete a task")
        again, _ = await say(app.router, "the one about the dentist")
        rows = await app.store.fetch("SELECT number, title, status FROM tasks ORDER BY number")  # type: ignore[attr-defined]
    assert "Tell me its number" in asked.text
    assert "Open: 1. buy headphones; 2. call the plumber." in asked.text  # the ones to pick from
    assert "Task 1 (buy headphones) is marked as done" in done.text and "budget" not in done.text
    assert "Tell me its number" in again.text and not again.confirmation
    assert [tuple(r) for r in rows] == [(1, "buy headphones", "done"), (2, "call the plumber", "open")]


async def test_a_task_named_on_an_empty_list_is_answered_without_asking_for_a_number(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        r, delivered = await say(app.router, "I paid the rent, tick it off")
        rows = await app.store.fetch("SELECT number FROM tasks")  # type: ignore[attr-defined]
    assert r.intent_id == "task_complete" and [t.tool for t in r.tool_results] == ["list_tasks"]
    assert delivered[-1].text.startswith("Your list is empty") and "number" not in delivered[-1].text
    assert list(rows) == []


async def test_a_task_goal_taken_up_again_does_not_read_another_request_as_naming_a_task(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        await say(app.router, "add order new headphones to my list", customer="C-001")
        asked, _ = await say(app.router, "mark a task as done", customer="C-001")
        other, _ = await say(app.router, "where is my order O-12345?", customer="C-001")
        rows = await app.store.fetch("SELECT title, status FROM tasks")  # type: ignore[attr-defined]
    assert "Tell me its number" in asked.text
    # The order question is answered and the task question asked again; "order" names no task here.
    assert "O-12345" in other.text and "marked as done" not in other.text
    assert [tuple(r) for r in rows] == [("order new headphones", "open")]


async def test_what_the_customer_wrote_is_never_read_as_a_template(db_url: str) -> None:
    # A task's title goes into the delete confirmation's template as text, however it is written.
    title = "pay {amount|money} on {order_id} { 7 * 7 }"
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        await say(app.router, f"add a task: {title}", customer="C-001")
        asked, _ = await say(app.router, "delete task 1", customer="C-001")
    assert asked.confirmation
    assert title in asked.text  # not "49", not an amount, not the template returned whole


async def test_which_task_lists_the_open_ones_as_choices_picked_by_place_or_words(db_url: str) -> None:
    """ "I finished a task" names none: the question lists the open ones as choices, and a
    reply picks by place ("the second") or by its words, or clicks one."""
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        for title in ("call mom", "pay rent", "walk the dog"):
            await say(app.router, f"add {title} to my list")
        asked, delivered = await say(app.router, "I finished a task")
        by_place, _ = await say(app.router, "the second")
        await say(app.router, "delete a task")
        by_words, _ = await say(app.router, "the dog one")
        rows = await app.store.fetch("SELECT number, status FROM tasks ORDER BY number")  # type: ignore[attr-defined]
    [question] = [m for m in delivered if m.kind == "question"]
    assert [(o.value, o.label) for o in question.choices] == [
        ("1", "call mom (1)"),
        ("2", "pay rent (2)"),
        ("3", "walk the dog (3)"),
    ]
    assert "Task 2 (pay rent) is marked as done" in by_place.text
    assert "Delete task 3 (walk the dog)?" in by_words.text and by_words.confirmation
    assert [tuple(r) for r in rows] == [(1, "open"), (2, "done"), (3, "open")]  # the delete waits for its yes
