"""A reply to the bot's own yes/no question in Slack, end to end through slack-bolt against the
stand-in Web API: a typed yes with thanks runs the refund once, a typed "yes, but not now" runs
nothing and keeps the question open with its buttons, and the Confirm button still runs it.

Alice (U0ALICE01) is customer C-001.
"""

from __future__ import annotations

from tests.slack_harness import CHANNEL, in_thread, rows, running_app
from tests.standins.slack_standin import SlackStandIn


async def asked(app, slack: SlackStandIn) -> tuple[str, dict]:
    root, _ = await app.client.mention("please refund order O-23456")
    (question,) = await slack.wait_for("chat.postMessage", 1)
    assert "฿3,290" in question["text"] and "confirm or cancel" in question["text"]
    return root, question


async def test_a_typed_yes_with_thanks_runs_the_refund_once(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        root, _ = await asked(app, slack)
        await app.client.message("yep that's the one, thanks so much!", extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
    thread = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    assert "refunded ฿3,290" in thread[-1]
    refunds = await rows(db_url, "SELECT order_id, amount FROM refunds")
    assert [tuple(r) for r in refunds] == [("O-23456", 3290.0)]


async def test_a_typed_yes_but_not_now_runs_nothing_and_keeps_the_buttons(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        root, _ = await asked(app, slack)
        await app.client.message("sure, but not this week", extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
        held = in_thread(slack, CHANNEL, root)[-1]
        refunds_meanwhile = await rows(db_url, "SELECT order_id FROM refunds")
        # The question is still open: its Confirm button runs the refund afterwards.
        buttons = held["blocks"][-1]["elements"]
        clicked = {"ts": slack.threads[(CHANNEL, root)][-1]["ts"], "text": held["text"], "thread_ts": root}
        await app.client.click("agentbot_confirm", buttons[0]["value"], clicked, CHANNEL)
        await app.channel.dispatcher.drain()
    assert refunds_meanwhile == []
    assert "nothing happens until you say so" in held["text"] and "O-23456" in held["text"]
    assert [b["action_id"] for b in buttons] == ["agentbot_confirm", "agentbot_cancel"]
    assert "refunded ฿3,290" in in_thread(slack, CHANNEL, root)[-1]["text"]
    assert len(await rows(db_url, "SELECT order_id FROM refunds")) == 1


async def test_a_typed_no_in_other_words_cancels(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        root, _ = await asked(app, slack)
        await app.client.message("no, on second thought I'll hang on to it", extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
    assert "cancelled" in in_thread(slack, CHANNEL, root)[-1]["text"]
    assert await rows(db_url, "SELECT order_id FROM refunds") == []


async def test_a_go_ahead_in_own_words_runs_and_a_condition_first_holds(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        root, _ = await asked(app, slack)
        await app.client.message("ok, but look up O-24680 first", extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
        refunds_meanwhile = await rows(db_url, "SELECT order_id FROM refunds")
        await app.client.message("right, carry on and get it done", extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
    thread = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    assert refunds_meanwhile == []  # the condition is answered first; nothing runs on it
    assert "refunded ฿3,290" in thread[-1]
    assert [tuple(r) for r in await rows(db_url, "SELECT order_id, amount FROM refunds")] == [("O-23456", 3290.0)]


async def test_thanks_then_a_question_about_the_refund_runs_it_once(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        root, _ = await asked(app, slack)
        await app.client.message("cheers! how soon does it reach my card?", extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
        await app.client.message("cheers! how soon does it reach my card?", extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
    thread = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    assert any("refunded ฿3,290" in t for t in thread)
    # said twice: the second finds the refund done and runs nothing again
    assert [tuple(r) for r in await rows(db_url, "SELECT order_id, amount FROM refunds")] == [("O-23456", 3290.0)]


async def test_a_typed_change_is_asked_again_and_its_button_runs_that(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        root, _ = await asked(app, slack)
        await app.client.message("hmm, make it ฿2,500", extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
        changed = in_thread(slack, CHANNEL, root)[-1]
        refunds_meanwhile = await rows(db_url, "SELECT order_id FROM refunds")
        buttons = changed["blocks"][-1]["elements"]
        clicked = {"ts": slack.threads[(CHANNEL, root)][-1]["ts"], "text": changed["text"], "thread_ts": root}
        await app.client.click("agentbot_confirm", buttons[0]["value"], clicked, CHANNEL)
        await app.channel.dispatcher.drain()
    assert refunds_meanwhile == []
    assert "Refund ฿2,500 for order O-23456?" in changed["text"]  # the thousands separator is read
    assert "refunded ฿2,500" in in_thread(slack, CHANNEL, root)[-1]["text"]
    assert [tuple(r) for r in await rows(db_url, "SELECT order_id, amount FROM refunds")] == [("O-23456", 2500.0)]


async def test_an_unsure_reply_says_so_and_the_cancel_button_drops_it(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        root, _ = await asked(app, slack)
        await app.client.message("yes. no. I really can't decide", extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
        unsure = in_thread(slack, CHANNEL, root)[-1]
        buttons = unsure["blocks"][-1]["elements"]
        clicked = {"ts": slack.threads[(CHANNEL, root)][-1]["ts"], "text": unsure["text"], "thread_ts": root}
        await app.client.click("agentbot_cancel", buttons[1]["value"], clicked, CHANNEL)
        await app.channel.dispatcher.drain()
    assert "nothing has been done yet" in unsure["text"] and "Refund ฿3,290" in unsure["text"]
    assert [b["action_id"] for b in buttons] == ["agentbot_confirm", "agentbot_cancel"]
    assert "cancelled" in in_thread(slack, CHANNEL, root)[-1]["text"]
    assert await rows(db_url, "SELECT order_id FROM refunds") == []


async def test_a_thumbs_up_as_slack_writes_it_runs_and_a_thumbs_down_cancels(db_url: str, slack: SlackStandIn) -> None:
    """Slack sends emoji as codes (":+1::skin-tone-2:"): a thumbs up alone is a yes, a cross a no."""
    async with running_app(db_url, slack) as app:
        root, _ = await asked(app, slack)
        await app.client.message(":+1::skin-tone-2:", extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
        other, _ = await app.client.mention("please refund order O-24680")
        await slack.wait_for("chat.postMessage", 3)
        await app.client.message(":x:", extra={"thread_ts": other})
        await app.channel.dispatcher.drain()
    assert "refunded ฿3,290" in in_thread(slack, CHANNEL, root)[-1]["text"]
    assert "cancelled" in in_thread(slack, CHANNEL, other)[-1]["text"]
    assert [tuple(r) for r in await rows(db_url, "SELECT order_id FROM refunds")] == [("O-23456",)]
