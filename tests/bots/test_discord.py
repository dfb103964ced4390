"""The Discord channel end to end: the real discord.py client against a stand-in Discord on loopback.

Each test says what a Discord user would see (what the stand-in received) and what was stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from adapters.data.json_source import JSONDataSource
from adapters.storage.bundle import sql_storage
from adapters.storage.inbox import SqlInbox
from adapters.storage.sql import SqlStore
from agent.domain.types import OutboundMessage
from bots.app import build_app
from bots.discord.delivery import ChannelTarget
from tests.bots.discord_harness import ALICE, DANA, MALLORY, running_bot, user
from tests.helpers import REPO
from tests.standins.discord_standin import ADMIN_CHANNEL_ID, ADMIN_ROLE_ID, BOT_ID, GENERAL_ID, GUILD_ID, StandInDiscord


@pytest.fixture
async def standin() -> AsyncIterator[StandInDiscord]:
    server = await StandInDiscord().start()
    yield server
    await server.aclose()


@pytest.fixture(params=[{}, {"shard_count": 2}], ids=["one connection", "two shards"])
def shards(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The exactly-once and authorization tests run once more with the bot over two gateway shards
    (the stand-in's guild is on shard 1, DMs on shard 0)."""
    return request.param  # type: ignore[no-any-return]


def texts(standin: StandInDiscord, channel: str) -> list[str]:
    return [m["content"] for m in standin.posted(channel)]


async def posted(standin: StandInDiscord, channel: str, count: int) -> list[str]:
    await standin.wait_until(lambda: len(standin.posted(channel)) >= count)
    await asyncio.sleep(0.05)  # anything more that would (wrongly) follow
    return texts(standin, channel)


async def ask_in_general(standin: StandInDiscord, question: str, **kw: object) -> tuple[str, str]:
    """/ask in #general; returns the interaction id and the thread the answer started."""
    iid = await standin.slash("ask", {"question": question}, ALICE, **kw)  # type: ignore[arg-type]
    threads = await standin.wait_until(lambda: standin.calls_to("POST", "/threads"))
    return iid, threads[0].path.split("/")[4]


async def test_ask_is_deferred_then_continues_in_a_thread_without_mentions(
    standin: StandInDiscord, db_url: str
) -> None:
    async with running_bot(standin, db_url) as run:
        sync = standin.calls_to("PUT", f"/guilds/{GUILD_ID}/commands")[0]
        assert {c["name"] for c in sync.body} == {"ask", "agentbot"}  # guild-scoped sync at startup

        iid, thread = await ask_in_general(standin, "I want to check my order")
        assert await posted(standin, thread, 1) == ["What's your order ID? Order IDs look like O-12345."]
        callback, anchor = (
            standin.calls_to("POST", f"/interactions/{iid}")[0],
            standin.calls_to("POST", "/webhooks/")[0],
        )
        assert callback.body == {"type": 5} and callback.query == {"with_response": "1"}
        assert callback.at < anchor.at  # deferred before any of the turn's work or replies
        assert texts(standin, GENERAL_ID) == ["**alice** asked: I want to check my order"]
        assert thread == standin.messages[GENERAL_ID][0]["id"]  # the thread hangs off the answer

        await standin.say(thread, ALICE, "o-12345 please")  # no mention needed in the bot's thread
        replies = await posted(standin, thread, 3)
        assert replies[1] == "Checking order O-12345..." and "has shipped" in replies[2]
        state, history = await run.app.store.load(f"discord:{GUILD_ID}:{thread}", 10)
    assert (
        state is not None
        and state.customer_id == "C-001"
        and all(p.active_goal is None for p in state.speakers.values())
    )
    assert [m.text for m in history if m.role == "user"] == ["I want to check my order", "o-12345 please"]
    bot_posts = [c for c in standin.calls if c.method == "POST" and c.path.startswith(("/channels", "/webhooks"))]
    assert all(c.body.get("allowed_mentions") == {"parse": []} for c in bot_posts if "content" in c.body)


async def test_a_duplicated_interaction_is_answered_once(
    standin: StandInDiscord, db_url: str, shards: dict[str, Any]
) -> None:
    async with running_bot(standin, db_url, **shards):
        iid = await standin.slash("ask", {"question": "where is O-12345"}, ALICE)
        await standin.slash("ask", {"question": "where is O-12345"}, ALICE, interaction_id=iid)  # redelivered
        thread = (await standin.wait_until(lambda: standin.calls_to("POST", "/threads")))[0].path.split("/")[4]
        await posted(standin, thread, 2)
    async with running_bot(standin, db_url, **shards):  # and once more after a restart: the inbox remembers it
        await standin.slash("ask", {"question": "where is O-12345"}, ALICE, interaction_id=iid)
        await asyncio.sleep(0.2)
    assert len(standin.calls_to("POST", "/webhooks/")) == 1
    assert len(standin.calls_to("POST", "/threads")) == 1
    assert (
        texts(standin, thread)
        == [
            "Checking order O-12345...",
            texts(standin, thread)[1],
        ]
        and "shipped" in texts(standin, thread)[1]
    )


async def test_a_restart_and_a_gateway_reconnect_mid_thread_continue_the_session(
    standin: StandInDiscord, db_url: str
) -> None:
    async with running_bot(standin, db_url):
        _, thread = await ask_in_general(standin, "I want to open a ticket")
        assert "What's the problem" in (await posted(standin, thread, 1))[0]
    async with running_bot(standin, db_url):  # a new process: the session lives in the database
        await standin.reconnect()  # and Discord moves the gateway session
        await asyncio.wait_for(standin.identified.wait(), 10)
        await standin.say(thread, ALICE, "The mug arrived with a chipped handle")
        replies = await posted(standin, thread, 3)
    assert "opened ticket T-" in replies[-1] and "chipped handle" in replies[-1]


async def test_buttons_confirm_a_handoff_alert_admins_and_resume(
    standin: StandInDiscord, db_url: str, shards: dict[str, Any]
) -> None:
    async with running_bot(standin, db_url, **shards) as run:
        _, thread = await ask_in_general(standin, "purple monkey dishwasher")
        fallback = standin.posted(thread)[0] if await posted(standin, thread, 1) else {}
        button = fallback["components"][0]["components"][0]
        assert (button["label"], button["custom_id"]) == ("Talk to a human", f"agentbot:human:{ALICE['id']}")

        other = await standin.click(fallback, button["custom_id"], MALLORY)
        refusal = (await standin.wait_until(lambda: standin.calls_to("POST", f"/interactions/{other}")))[0]
        assert refusal.body["type"] == 4 and refusal.body["data"]["flags"] == 64  # ephemeral, only to Mallory
        click = await standin.click(fallback, button["custom_id"], ALICE)
        replies = await posted(standin, thread, 3)
        ack = standin.calls_to("POST", f"/interactions/{click}")[0]
        assert ack.body["type"] == 7 and ack.body["data"]["components"] == []  # buttons removed with the ack
        assert (
            replies[1:]
            == [
                "Connecting you with our support team...",
                replies[2],
            ]
            and "asked a human support agent" in replies[2]
        )

        alert = (await standin.wait_until(lambda: standin.posted(ADMIN_CHANNEL_ID)))[0]
        assert "Human handoff requested" in alert["content"] and f"<#{thread}>" in alert["content"]
        key = f"discord:{GUILD_ID}:{thread}"
        resume = alert["components"][0]["components"][0]
        assert (resume["label"], resume["custom_id"]) == ("Resume bot", f"agentbot:resume:{key}")

        await standin.say(thread, ALICE, "hello?")
        await standin.say(thread, ALICE, "anyone?")
        replies = await posted(standin, thread, 4)
        assert replies[3:] == ["A human support agent has been asked to join; they'll reply here."]  # then silence

        denied = await standin.click(alert, resume["custom_id"], MALLORY)
        await standin.wait_until(lambda: standin.calls_to("POST", f"/interactions/{denied}"))
        assert len(await posted(standin, thread, 4)) == 4
        await standin.click(alert, resume["custom_id"], DANA, roles=[ADMIN_ROLE_ID])
        replies = await posted(standin, thread, 5)
        assert replies[4] == "I'm back in this conversation. What else can I help you with?"
        await standin.say(thread, ALICE, "where is O-23456")
        replies = await posted(standin, thread, 7)
        assert "delivered" in replies[6]
        assert [a.kind for a in run.fanout.sent] == ["handoff"]
        user_rows = await run.app.store.fetch(  # type: ignore[attr-defined]
            f"SELECT text FROM messages WHERE session_id = '{key}' AND role = 'user' ORDER BY id"
        )
    assert [r.text for r in user_rows][:2] == ["purple monkey dishwasher", "I want to talk to a human"]


async def test_confirm_and_cancel_buttons_survive_a_restart_and_only_their_user_can_press_them(
    standin: StandInDiscord, db_url: str, shards: dict[str, Any]
) -> None:
    async with running_bot(standin, db_url, **shards) as run:
        _, thread = await ask_in_general(standin, "I want to check my order")
        await posted(standin, thread, 1)
        prompt = OutboundMessage(kind="question", text="Refund $20 for O-12345?", buttons=["confirm", "cancel"])
        await ChannelTarget(run.bot.get_partial_messageable(int(thread)), int(ALICE["id"])).send(prompt)
        message = (await standin.wait_until(lambda: len(standin.posted(thread)) >= 2 and standin.posted(thread)))[1]
    labels = [(b["label"], b["custom_id"]) for b in message["components"][0]["components"]]
    assert labels == [("Confirm", f"agentbot:confirm:{ALICE['id']}"), ("Cancel", f"agentbot:cancel:{ALICE['id']}")]
    async with running_bot(standin, db_url, **shards) as run:  # a new process: no view was stored anywhere
        other = await standin.click(message, f"agentbot:cancel:{ALICE['id']}", MALLORY)
        await standin.wait_until(lambda: standin.calls_to("POST", f"/interactions/{other}"))
        click = await standin.click(message, f"agentbot:cancel:{ALICE['id']}", ALICE)
        await standin.click(message, f"agentbot:cancel:{ALICE['id']}", ALICE, interaction_id=click)  # redelivered
        await posted(standin, thread, 3)
        rows = await run.app.store.fetch(  # type: ignore[attr-defined]
            "SELECT text, interaction_id FROM messages WHERE role = 'user' ORDER BY id"
        )
    assert [r.text for r in rows] == ["I want to check my order", "no"]  # Mallory's click changed nothing
    assert rows[-1].interaction_id == click
    assert len(standin.calls_to("POST", f"/interactions/{click}")) == 1


async def test_a_mention_starts_a_thread_and_dms_work(
    standin: StandInDiscord, db_url: str, shards: dict[str, Any]
) -> None:
    async with running_bot(standin, db_url, **shards):
        await standin.say(GENERAL_ID, ALICE, "just chatting, no bot here")
        mention = await standin.say(GENERAL_ID, ALICE, "where is O-12345?", mention_bot=True)
        await standin.say(GENERAL_ID, ALICE, "where is O-12345?", mention_bot=True, message_id=mention["id"])
        replies = await posted(standin, mention["id"], 2)  # the thread has the message's id
        assert "shipped" in replies[1]
        assert len(standin.calls_to("POST", "/threads")) == 1
        dm = "1400000000000000001"
        await standin.say(dm, ALICE, "track o-12345")
        assert "shipped" in (await posted(standin, dm, 2))[1]
        iid = await standin.slash("ask", {"question": "where is O-23456"}, ALICE, channel_id=dm)
        await standin.wait_until(lambda: len(standin.calls_to("POST", "/webhooks/")) >= 2)
        follow_ups = [c.body["content"] for c in standin.calls_to("POST", "/webhooks/") if iid in c.path]
        unsure = await standin.slash("ask", {"question": "purple monkey dishwasher"}, ALICE, channel_id=dm)
        offer = await standin.wait_until(
            lambda: [c.body for c in standin.calls_to("POST", "/webhooks/") if unsure in c.path]
        )
    assert follow_ups[0] == "Checking order O-23456..." and "delivered" in follow_ups[1]  # no thread in a DM
    assert offer[0]["components"][0]["components"][0]["custom_id"] == f"agentbot:human:{ALICE['id']}"
    assert len(standin.calls_to("POST", "/threads")) == 1


async def test_a_mention_in_someone_elses_thread_starts_from_its_history(standin: StandInDiscord, db_url: str) -> None:
    thread = standin.thread("order trouble")
    async with running_bot(standin, db_url) as run:
        await standin.say(thread, ALICE, "my parcel O-34567 is late")
        await asyncio.sleep(0.1)
        assert texts(standin, thread) == []  # not the bot's thread and nobody called it
        await standin.say(thread, MALLORY, "same for me", mention_bot=True)
        await posted(standin, thread, 1)
        rows = await run.app.store.fetch(  # type: ignore[attr-defined]
            f"SELECT role, text FROM messages WHERE session_id = 'discord:{GUILD_ID}:{thread}' ORDER BY id"
        )
    assert [(r.role, r.text) for r in rows][:2] == [("user", "my parcel O-34567 is late"), ("user", "same for me")]


async def test_admin_commands_are_for_admins(standin: StandInDiscord, db_url: str, shards: dict[str, Any]) -> None:
    async with running_bot(standin, db_url, **shards):
        _, thread = await ask_in_general(standin, "get me a real person")
        await posted(standin, thread, 2)
        nope = await standin.subcommand("agentbot", "status", MALLORY, thread)
        refusal = (await standin.wait_until(lambda: standin.calls_to("POST", f"/interactions/{nope}")))[0]
        assert refusal.body["data"]["content"] == "Only agentbot admins can use this command."
        status = await standin.subcommand("agentbot", "status", DANA, thread, roles=[ADMIN_ROLE_ID])
        report = await standin.wait_until(
            lambda: [c for c in standin.calls_to("POST", "/webhooks/") if status in c.path]
        )
        assert "handoff: requested" in report[0].body["content"] and report[0].body["flags"] == 64
        await standin.subcommand("agentbot", "resume", DANA, thread, roles=[ADMIN_ROLE_ID])
        replies = await posted(standin, thread, 3)
    assert replies[-1] == "I'm back in this conversation. What else can I help you with?"
    assert BOT_ID not in [c.path for c in standin.calls_to("PUT", "/commands")]


class BrokenDirectory(JSONDataSource):
    """A customer directory that is down."""

    async def find_customer(self, platform: str, user_id: str) -> dict[str, Any] | None:
        raise ConnectionError("directory unreachable")


async def test_a_failing_turn_tells_the_user_and_is_not_retried_forever(standin: StandInDiscord, db_url: str) -> None:
    store = SqlStore(db_url)
    app = build_app(
        REPO / "config", REPO / "data", db_url, storage=sql_storage(store), data_source=BrokenDirectory(REPO / "data")
    )
    async with running_bot(standin, db_url, app=app):
        _, thread = await ask_in_general(standin, "where is O-12345")
        assert await posted(standin, thread, 1) == ["Something went wrong. Please try again."]
    after = SqlStore(db_url)
    assert await SqlInbox(after).unfinished(0) == []
    await after.aclose()


async def test_a_refund_is_confirmed_by_button_and_a_second_click_replays_the_result(
    standin: StandInDiscord, db_url: str, shards: dict[str, Any]
) -> None:
    async with running_bot(standin, db_url, **shards) as run:
        _, thread = await ask_in_general(standin, "please refund order O-23456")
        await posted(standin, thread, 1)
        question = standin.posted(thread)[0]
        assert "฿3,290" in question["content"]
        custom_ids = [b["custom_id"] for b in question["components"][0]["components"]]
        assert custom_ids == [f"agentbot:confirm:{ALICE['id']}", f"agentbot:cancel:{ALICE['id']}"]
        await standin.click(question, custom_ids[0], ALICE)
        await posted(standin, thread, 2)
        await standin.click(question, custom_ids[0], ALICE)  # a second click: its own interaction id
        replies = await posted(standin, thread, 3)
        refunds = await run.app.store.fetch("SELECT order_id, amount FROM refunds")  # type: ignore[attr-defined]
    assert "refunded ฿3,290" in replies[1] and "refunded ฿3,290" in replies[2]  # the original result, again
    assert [tuple(r) for r in refunds] == [("O-23456", 3290.0)]


CHEN = user("510000000000000003", "chen")  # customer C-003 (basic tier) in data/customers.json


async def test_an_escalated_refund_is_approved_once_by_an_admins_button(standin: StandInDiscord, db_url: str) -> None:
    async with running_bot(standin, db_url) as run:
        await standin.slash("ask", {"question": "I need a refund for order O-67890"}, CHEN)
        threads = await standin.wait_until(lambda: standin.calls_to("POST", "/threads"))
        thread = threads[0].path.split("/")[4]
        alert = (await standin.wait_until(lambda: standin.posted(ADMIN_CHANNEL_ID)))[0]
        approve, deny, resume = alert["components"][0]["components"]
        assert [approve["label"], deny["label"], resume["label"]] == ["Approve", "Deny", "Resume bot"]
        before = len(await posted(standin, thread, 1))
        refused = await standin.click(alert, approve["custom_id"], MALLORY)
        await standin.wait_until(lambda: standin.calls_to("POST", f"/interactions/{refused}"))
        for _ in range(2):  # a double click by the admin
            await standin.click(alert, approve["custom_id"], DANA, roles=[ADMIN_ROLE_ID])
        replies = await posted(standin, thread, before + 1)
        assert sum("approved your request" in r for r in replies) == 1 and "refunded" in replies[-1]
        refunds = await run.app.store.fetch("SELECT order_id FROM refunds")  # type: ignore[attr-defined]
        audit = await run.app.store.fetch("SELECT text FROM messages WHERE kind = 'admin'")  # type: ignore[attr-defined]
    assert [r.order_id for r in refunds] == ["O-67890"]
    assert [r.text for r in audit] == [
        f"dana (<@{DANA['id']}>): approve issue_refund ({approve['custom_id'].split(':')[2]})"
    ]
