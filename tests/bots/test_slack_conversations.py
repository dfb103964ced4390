"""The Slack app end to end: real bolt over real HTTP, the stand-in Web API records what it got."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from adapters.data.json_source import JSONDataSource
from tests.helpers import REPO
from tests.slack_harness import ADMIN, ADMIN_CHANNEL, ALICE, CHANNEL, in_thread, rows, running_app
from tests.standins.slack_standin import TEAM_ID, SlackStandIn


async def test_the_order_conversation_runs_in_one_thread(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        root, sent = await app.client.mention("I want to check my order")
        assert sent.status == 200
        await slack.wait_for("chat.postMessage", 1)
        await app.client.message("o-12345", extra={"thread_ts": root})  # a reply, no mention needed
        await slack.wait_for("chat.postMessage", 3)
        await app.channel.dispatcher.drain()
    posted = in_thread(slack, CHANNEL, root)
    assert len(posted) == 3 == len(slack.to("chat.postMessage"))
    assert "order id" in posted[0]["text"].lower()  # the question
    assert "O-12345" in posted[1]["text"]  # the pre-message
    assert "shipped" in posted[2]["text"]  # the answer
    session = f"slack:{TEAM_ID}:{CHANNEL}:{root}"
    state = await rows(db_url, "SELECT customer_id, channel_type FROM sessions WHERE id = :s", s=session)
    assert [tuple(r) for r in state] == [("C-001", "slack")]
    kinds = await rows(db_url, "SELECT role, kind FROM messages WHERE session_id = :s ORDER BY id", s=session)
    assert [tuple(r) for r in kinds] == [
        ("user", "user"),
        ("agent", "question"),
        ("user", "user"),
        ("agent", "pre"),
        ("agent", "answer"),
    ]
    assert await rows(db_url, "SELECT key FROM inbox WHERE status != 'done'") == []


async def test_a_dm_is_answered_flat_and_unknown_users_are_guests(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        await app.client.message("where is O-23456", user="U0STRANGER", channel="D0DM1", channel_type="im")
        posted = await slack.wait_for("chat.postMessage", 2)
    assert all(p["channel"] == "D0DM1" and "thread_ts" not in p for p in posted)
    state = await rows(db_url, "SELECT customer_id FROM sessions WHERE id = :s", s=f"slack:{TEAM_ID}:D0DM1:dm")
    assert [tuple(r) for r in state] == [(None,)]


async def test_channel_chatter_and_bots_are_ignored(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        await app.client.message("where is O-12345")  # top level, no mention: not for the bot
        await app.client.message("where is O-12345", extra={"thread_ts": "1699999999.000001"})  # foreign thread
        root, _ = await app.client.mention("where is O-12345")
        await slack.wait_for("chat.postMessage", 2)
        await app.client.message("beep", user="U0OTHERBOT", extra={"thread_ts": root, "bot_id": "B0OTHER"})
        await app.client.message("x", extra={"thread_ts": root, "subtype": "message_changed"})
        await app.client.message("mine", user="UBOTAGENT", extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
    assert len(slack.to("chat.postMessage")) == 2
    assert len(await rows(db_url, "SELECT key FROM inbox")) == 1


async def test_a_mention_mid_thread_rebuilds_the_thread(db_url: str, slack: SlackStandIn) -> None:
    root = "1699990000.000100"
    slack.seed_thread(
        CHANNEL,
        [
            {"ts": root, "user": "U0BILAL02", "text": "my order O-12345 hasn't arrived"},
            {"ts": "1699990000.000200", "user": "UBOTAGENT", "bot_id": "BBOTAGENT", "text": "earlier bot reply"},
            {"ts": "1699990000.000300", "user": ALICE, "text": "same here"},
        ],
    )
    async with running_app(db_url, slack) as app:
        await app.client.mention("where is O-12345", thread_ts=root, ts="1699990000.000400")
        await slack.wait_for("chat.postMessage", 2)
    assert slack.to("conversations.replies")[0]["ts"] == root
    history = await rows(
        db_url,
        "SELECT role, text FROM messages WHERE session_id = :s ORDER BY id",
        s=f"slack:{TEAM_ID}:{CHANNEL}:{root}",
    )
    assert [tuple(r) for r in history[:4]] == [
        ("user", "my order O-12345 hasn't arrived"),
        ("agent", "earlier bot reply"),
        ("user", "same here"),
        ("user", "where is O-12345"),
    ]


async def test_slash_command_posts_the_request_and_answers_in_its_thread(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        sent = await app.client.command("<!channel> where is O-12345")
        assert sent.status == 200 and sent.text == ""
        posted = await slack.wait_for("chat.postMessage", 3)
    root = posted[0]
    assert root["text"] == f"<@{ALICE}> asked: &lt;!channel&gt; where is O-12345" and "thread_ts" not in root
    ts = (await rows(db_url, "SELECT id FROM sessions"))[0][0].rsplit(":", 1)[1]
    assert [p.get("thread_ts") for p in posted[1:]] == [ts, ts]
    assert "shipped" in posted[2]["text"]


async def test_help_and_admin_only_status(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        help_ = await app.client.command("help")
        assert help_.status == 200 and "/agentbot status" in help_.text
        await app.client.mention("where is O-12345")
        await slack.wait_for("chat.postMessage", 2)
        await app.client.command("status")  # Alice is no admin
        await app.client.command("status", user=ADMIN)
        answers = await slack.wait_for("response_url", 2)
    assert "for agentbot admins" in answers[0]["text"]
    status = answers[1]["text"]
    assert "provider: rules" in status and "database: sqlite" in status
    assert "1 active sessions, 1 new, 0 handoffs" in status


async def test_human_button_hands_off_alerts_admins_and_resume_brings_the_bot_back(
    db_url: str, slack: SlackStandIn
) -> None:
    async with running_app(db_url, slack) as app:
        root, _ = await app.client.mention("the flux capacitor hums oddly")
        (question,) = await slack.wait_for("chat.postMessage", 1)
        buttons = question["blocks"][1]["elements"]
        assert [b["action_id"] for b in buttons] == ["agentbot_human"]
        clicked = {"ts": slack.threads[(CHANNEL, root)][0]["ts"], "text": question["text"], "thread_ts": root}
        assert (await app.client.click("agentbot_human", buttons[0]["value"], clicked, CHANNEL)).status == 200
        await app.client.click("agentbot_human", buttons[0]["value"], clicked, CHANNEL)  # a double click
        alert = [p for p in await slack.wait_for("chat.postMessage", 4) if p["channel"] == ADMIN_CHANNEL][0]
        await app.channel.dispatcher.drain()
        assert len(in_thread(slack, CHANNEL, root)) == 3  # question, pre-message, handoff answer: once
        assert "asked a human support agent" in in_thread(slack, CHANNEL, root)[2]["text"]
        (update,) = slack.to("chat.update")
        assert update["ts"] == clicked["ts"] and "Asked for a human by" in str(update["blocks"])

        alert_text = str(alert["blocks"])
        assert "C-001" in alert_text and f"/archives/{CHANNEL}/p{root.replace('.', '')}" in alert_text
        assert "flux capacitor" in alert_text  # the last messages
        resume = alert["blocks"][-1]["elements"][1]
        assert resume["text"]["text"] == "Resume bot"

        await app.client.message("hello? anyone?", extra={"thread_ts": root})
        await app.client.message("still there?", extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
        thread = in_thread(slack, CHANNEL, root)
        assert len(thread) == 4 and "asked to join" in thread[3]["text"]  # one acknowledgement, then silence

        alert_message = {"ts": "1700009999.000001", "text": alert["text"]}
        await app.client.click("agentbot_resume", resume["value"], alert_message, ADMIN_CHANNEL, user=ALICE)
        await app.client.click("agentbot_resume", resume["value"], alert_message, ADMIN_CHANNEL, user=ADMIN)
        await app.channel.dispatcher.drain()
        assert "I'm back" in in_thread(slack, CHANNEL, root)[4]["text"]
        assert "Bot resumed by" in str(slack.to("chat.update")[-1]["blocks"])
        refusals = slack.to("response_url")
        assert len(refusals) == 1 and "Only agentbot admins" in refusals[0]["text"]

        await app.client.message("where is O-12345", extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
    assert "shipped" in in_thread(slack, CHANNEL, root)[-1]["text"]
    handoffs = await rows(db_url, "SELECT customer_id, status FROM handoffs")
    assert [tuple(r) for r in handoffs] == [("C-001", "requested")]


async def test_an_admin_resumes_by_command_with_the_thread_link(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        root, _ = await app.client.mention("talk to a human")
        await slack.wait_for("chat.postMessage", 2)  # the handoff answer and the admin alert
        await app.channel.dispatcher.drain()
        link = f"https://agentbot-test.slack.com/archives/{CHANNEL}/p{root.replace('.', '')}"
        await app.client.command(f"resume {link}", user=ADMIN)
        await app.channel.dispatcher.drain()
        await app.client.command(f"resume {link}", user=ADMIN)  # nothing left to resume
        await app.channel.dispatcher.drain()
        told = await slack.wait_for("response_url", 2)
    assert "I'm back" in in_thread(slack, CHANNEL, root)[-1]["text"]
    assert "I'm back" in told[0]["text"] and "no open handoff" in told[1]["text"]


class GatedData(JSONDataSource):
    """Customer lookups wait for a gate: a turn that is slow for as long as the test wants."""

    def __init__(self, data_dir: Path, gate: asyncio.Event):
        super().__init__(data_dir)
        self.gate = gate

    async def find_customer(self, platform: str, user_id: str) -> dict[str, Any] | None:
        await self.gate.wait()
        return await super().find_customer(platform, user_id)


async def test_slack_is_acked_while_the_turn_still_runs_and_queued_messages_keep_order(
    db_url: str, slack: SlackStandIn
) -> None:
    gate = asyncio.Event()
    async with running_app(db_url, slack, data_source=GatedData(REPO / "data", gate)) as app:
        root, first = await app.client.mention("I want to check my order")
        _, second = await app.client.message("O-12345", extra={"thread_ts": root})
        assert (first.status, second.status) == (200, 200)
        assert slack.to("chat.postMessage") == []  # both acked; the first turn has not answered yet
        gate.set()
        await slack.wait_for("chat.postMessage", 3)
        await app.channel.dispatcher.drain()
    texts = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    assert "order id" in texts[0].lower() and "shipped" in texts[2]


async def test_a_rate_limited_post_is_retried(db_url: str, slack: SlackStandIn) -> None:
    slack.fail_next("chat.postMessage", 429)
    async with running_app(db_url, slack) as app:
        root, _ = await app.client.mention("where is O-12345")
        await slack.wait_for("chat.postMessage", 2)
    assert len(in_thread(slack, CHANNEL, root)) == 2
    assert [c.ok for c in slack.calls if c.method == "chat.postMessage"] == [False, True, True]


async def test_an_admin_resumes_by_mentioning_the_bot_in_the_thread(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        root, _ = await app.client.mention("talk to a human")
        await slack.wait_for("chat.postMessage", 3)
        await app.channel.dispatcher.drain()
        await app.client.mention("resume", user=ALICE, thread_ts=root)  # not an admin: a customer message
        await app.client.mention("resume", user=ADMIN, thread_ts=root)
        await app.channel.dispatcher.drain()
    texts = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    assert "asked to join" in texts[-2] and "I'm back" in texts[-1]


async def test_other_alerts_reach_the_admin_channel_escaped_and_without_buttons(slack: SlackStandIn) -> None:
    from slack_sdk.web.async_client import AsyncWebClient

    from agent.domain.types import Alert
    from bots.slack.alerts import SlackAlertNotifier
    from bots.slack.workspaces import SingleWorkspace

    client = AsyncWebClient(token="xoxb-test", base_url=f"{slack.url}/api/")
    notifier = SlackAlertNotifier(SingleWorkspace(client, ADMIN_CHANNEL))
    await notifier.notify(
        Alert(
            kind="provider_outage",
            title="LLM provider outage",
            icon=":rotating_light:",
            session_id="console:ops",
            summary="openai down <!here>",
            details={},
        )
    )
    (posted,) = slack.to("chat.postMessage")
    assert posted["channel"] == ADMIN_CHANNEL and ":rotating_light: LLM provider outage:" in posted["text"]
    assert "<!here>" not in str(posted) and "&lt;!here&gt;" in posted["text"]
    assert all(b["type"] != "actions" for b in posted["blocks"])


async def test_a_long_answer_is_split_in_the_thread_with_buttons_on_the_last_part(slack: SlackStandIn) -> None:
    from slack_sdk.web.async_client import AsyncWebClient

    from agent.domain.types import OutboundMessage
    from bots.slack.delivery import ThreadReply

    reply = ThreadReply(
        AsyncWebClient(token="xoxb-test", base_url=f"{slack.url}/api/"), CHANNEL, "1.5", "slack:T:C:1.5"
    )
    await reply(OutboundMessage(kind="answer", text="line of text\n" * 600, buttons=["confirm", "cancel"]))
    posted = slack.to("chat.postMessage")
    assert len(posted) == 3 and all(p["thread_ts"] == "1.5" and len(p["text"]) <= 3000 for p in posted)
    assert ["blocks" in p for p in posted] == [False, False, True]
    assert "".join(p["text"] for p in posted).count("line of text") == 600


async def test_a_refund_is_confirmed_by_button_and_runs_once(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        root, _ = await app.client.mention("please refund order O-23456")
        (question,) = await slack.wait_for("chat.postMessage", 1)
        assert "฿3,290" in question["text"] and "O-23456" in question["text"]
        buttons = question["blocks"][-1]["elements"]
        assert [b["action_id"] for b in buttons] == ["agentbot_confirm", "agentbot_cancel"]
        clicked = {"ts": slack.threads[(CHANNEL, root)][0]["ts"], "text": question["text"], "thread_ts": root}
        assert (await app.client.click("agentbot_confirm", buttons[0]["value"], clicked, CHANNEL)).status == 200
        await app.client.click("agentbot_confirm", buttons[0]["value"], clicked, CHANNEL)  # a double click
        await app.channel.dispatcher.drain()
    thread = in_thread(slack, CHANNEL, root)
    assert "refunded ฿3,290" in thread[-1]["text"]
    assert sum("refunded ฿3,290" in p["text"] for p in thread) == 1
    refunds = await rows(db_url, "SELECT order_id, amount, customer_id FROM refunds")
    assert [tuple(r) for r in refunds] == [("O-23456", 3290.0, "C-001")]
