"""Misses are kept for review with the turn that made them: what the bot did not understand, a
rephrase right after a fallback, a handoff; redacted, and nothing for a message it understood."""

from __future__ import annotations

from adapters.storage.review import SqlReview
from agent.app import App
from tests.helpers import say


async def waiting(app: App) -> list:
    assert app.storage.database is not None
    return await SqlReview(app.storage.database).items()


async def test_a_missed_message_is_kept_with_its_reading_and_masked(app: App) -> None:
    text = "my blender grinds and smokes, ring me on +1 (555) 201-3344 or bob.k@example.com"
    r, _ = await say(app.router, text, session="rv-1")
    assert "outside what I can help with" in r.text  # the bot did not take it for a request it serves
    [item] = await waiting(app)
    assert item.kind == "out_of_scope" and item.status == "waiting"
    assert item.channel == "console" and item.session_id == "rv-1"
    assert "blender grinds and smokes" in item.text
    assert "bob.k@example.com" not in item.text and "201-3344" not in item.text
    assert item.reading.intent is None


async def test_an_understood_message_leaves_nothing_to_review(app: App) -> None:
    r, _ = await say(app.router, "where has order O-12345 got to", session="rv-2")
    assert "O-12345" in r.text
    assert await waiting(app) == []


async def test_a_rephrase_right_after_a_fallback_marks_the_missed_message(app: App) -> None:
    missed = "the toaster I got sparks whenever I plug it in"
    await say(app.router, missed, session="rv-3")
    await say(app.router, "please file a complaint about a faulty toaster", session="rv-3")
    kinds = {i.kind: i for i in await waiting(app)}
    correction = kinds["correction"]
    assert correction.text == missed
    assert correction.followed_by == "please file a complaint about a faulty toaster"
    assert correction.reading.nearest == "create_ticket"


async def test_a_conversation_handed_to_a_person_is_kept(app: App) -> None:
    await say(app.router, "get me an actual human being please", session="rv-4")
    kinds = [i.kind for i in await waiting(app)]
    assert "handoff" in kinds
