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


def test_a_clarification_is_kept_with_the_choices_offered_and_the_one_taken() -> None:
    from agent.conversation.session import SessionState
    from agent.domain.records import TelemetryEvent, TurnRecord
    from agent.domain.types import ChannelType, Message
    from agent.redaction import Redactor
    from agent.review.records import misses

    def turn(text: str, payload: dict) -> TurnRecord:
        state = SessionState(session_id="s-c", workspace_id="T0SHOP", channel_type=ChannelType.slack)
        event = TelemetryEvent(session_id="s-c", interaction_id="i-1", stage="intent_classified", payload=payload)
        user = Message(role="user", text=text, metadata={"interaction_id": "i-1"})
        return TurnRecord(state=state, expected_version=0, messages=[user], events=[event])

    asked = {
        "intent_id": None,
        "candidates": [["refund_request", 0.41], ["create_ticket", 0.39]],
        "clarify": ["refund_request", "create_ticket"],
    }
    [item] = misses(turn("the money for the cracked mug, call 555-201-3344", asked), [], Redactor())
    assert item.kind == "clarification" and item.workspace == "T0SHOP" and item.channel == "slack"
    assert item.reading.clarify == ["refund_request", "create_ticket"]
    assert item.reading.nearest == "refund_request" and "555-201-3344" not in item.text
    [chose] = misses(turn("the second one", {"intent_id": "create_ticket", "chosen": "create_ticket"}), [], Redactor())
    assert chose.reading.chosen == "create_ticket" and chose.reading.nearest == "create_ticket"
    [none] = misses(turn("none of those", {"intent_id": None, "chosen": "something_else"}), [], Redactor())
    assert none.reading.chosen == "something_else" and none.reading.nearest is None


async def test_a_refund_escalated_by_policy_is_an_item_of_its_own(app: App) -> None:
    r, _ = await say(app.router, "refund order O-67890 please", session="rv-5", customer="C-003")
    if "?" in r.text and "person" not in r.text:  # the refund's own confirmation first
        r, _ = await say(app.router, "yes", session="rv-5", customer="C-003")
    items = await waiting(app)
    assert [i.kind for i in items] == ["escalation"], (r.text, [(i.kind, i.text) for i in items])
    assert "O-67890" in items[0].text


def test_a_pick_completes_its_question_s_item() -> None:
    from agent.conversation.session import SessionState
    from agent.domain.records import TelemetryEvent, TurnRecord
    from agent.domain.types import ChannelType, Message
    from agent.redaction import Redactor
    from agent.review.records import misses

    state = SessionState(session_id="s-q", workspace_id="T0SHOP", channel_type=ChannelType.slack)
    question_text = "the money for the cracked mug"
    asked = TelemetryEvent(
        session_id="s-q",
        interaction_id="i-q",
        stage="intent_classified",
        payload={"intent_id": None, "clarify": ["refund_request", "create_ticket"]},
    )
    question_msg = Message(role="user", text=question_text, metadata={"interaction_id": "i-q"})
    [question] = misses(
        TurnRecord(state=state, expected_version=0, messages=[question_msg], events=[asked]), [], Redactor()
    )
    picked = TelemetryEvent(
        session_id="s-q",
        interaction_id="i-p",
        stage="intent_classified",
        payload={"intent_id": "create_ticket", "chosen": "create_ticket", "asked_about": question_text},
    )
    pick_msg = Message(role="user", text="the second one", metadata={"interaction_id": "i-p"})
    bot = Message(role="agent", text="Did you mean ...?", kind="question")
    record = TurnRecord(state=state, expected_version=1, messages=[pick_msg], events=[picked])
    [pick] = misses(record, [question_msg, bot], Redactor())
    assert pick.id == question.id and pick.text == question_text  # the same item, completed by the pick
    assert pick.reading.chosen == "create_ticket"


def test_the_inbox_keeps_one_item_per_question_with_what_was_offered_and_chosen(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from sqlalchemy import create_engine, select

    from adapters.storage.review import write_review
    from adapters.storage.schema import metadata, review_items
    from agent.review.items import ReviewItem, ReviewReading

    engine = create_engine(f"sqlite:///{tmp_path / 'inbox.db'}")
    metadata.create_all(engine, tables=[review_items])
    base = {"id": "q1", "kind": "clarification", "text": "the money for the cracked mug", "session_id": "s"}
    base |= {"interaction_id": "i-q", "channel": "slack"}
    offered = ReviewReading(candidates=[("refund_request", 0.41)], clarify=["refund_request", "create_ticket"])
    with engine.begin() as conn:
        write_review(conn, [ReviewItem(reading=offered, **base)])
    with engine.begin() as conn:
        write_review(conn, [ReviewItem(reading=ReviewReading(chosen="create_ticket"), **base)])
    with engine.connect() as conn:
        rows = conn.execute(select(review_items)).all()
    assert len(rows) == 1
    reading = ReviewReading.model_validate_json(rows[0].reading)
    assert reading.clarify == ["refund_request", "create_ticket"] and reading.chosen == "create_ticket"
    assert rows[0].nearest == "create_ticket"


async def test_a_no_right_after_an_answer_marks_the_message_it_answered(app: App) -> None:
    asked = "what is your return policy"
    r, _ = await say(app.router, asked, session="rv-6")
    assert "30 days" in r.text  # answered (and understood: nothing to review yet)
    assert await waiting(app) == []
    await say(app.router, "no, that's not what I meant", session="rv-6")
    [item] = await waiting(app)
    assert item.kind == "correction" and item.text == asked
    assert item.followed_by == "no, that's not what I meant"
    # A bare "no" with nothing answered before it marks nothing.
    await say(app.router, "no", session="rv-7")
    assert len(await waiting(app)) == 1
