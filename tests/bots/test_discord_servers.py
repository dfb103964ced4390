"""Discord as Discord sends it, in many servers: the real discord.py client against the stand-in.

Payloads follow Discord's documented shapes (Interaction, Application Command Data, Message
Component Data, Modal Submit Data, Guild Member Update), with the fields the documentation marks
optional left out where a test says so. Each test says what a person sees.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from adapters.storage.sql import SqlStore
from tests.bots.discord_harness import ALICE, DANA, MALLORY, running_bot
from tests.bots.test_slack_cli import PROXY, free_port, wait_until_listening
from tests.helpers import REPO
from tests.standins.discord_standin import (
    ADMIN_CHANNEL_ID,
    ADMIN_ROLE_ID,
    APP_ID,
    GENERAL_ID,
    GUILD_ID,
    MANAGE_GUILD,
    MEMBER_PERMISSIONS,
    OTHER_ADMIN_CHANNEL_ID,
    OTHER_GENERAL_ID,
    OTHER_GUILD_ID,
    StandInDiscord,
    user,
)

GONE = "This command is no longer available; try /ask."
OWNER = user("540000000000000005", "olga")  # a server admin (Manage Server) in the other server
BILAL = user("510000000000000002", "bilal")  # customer C-002
DM = "1400000000000000001"


@pytest.fixture
async def standin() -> AsyncIterator[StandInDiscord]:
    server = await StandInDiscord(two_guilds=True).start()
    yield server
    await server.aclose()


def texts(standin: StandInDiscord, channel: str) -> list[str]:
    return [m["content"] for m in standin.posted(channel)]


async def response_to(standin: StandInDiscord, iid: str) -> dict[str, Any]:
    """The interaction's one response (its callback body), checked to have come within Discord's 3 s."""
    call = (await standin.wait_until(lambda: standin.calls_to("POST", f"/interactions/{iid}/")))[0]
    assert call.at - standin.dispatched_at[iid] < 3.0
    return call.body  # type: ignore[no-any-return]


def alerts(standin: StandInDiscord, channel: str) -> list[dict[str, Any]]:
    """What everyone in an admin channel sees: the bot's messages there, without private answers."""
    return [m for m in standin.posted(channel) if not m["flags"] & 64]


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def stale(name: str, kind: int = 1, guild: str | None = None) -> dict[str, Any]:
    """A command as Discord lists it (Application Command Object), left by another run."""
    found = {
        "id": "1500000000000000001", "application_id": APP_ID, "version": "1500000000000000002", "type": kind,
        "name": name, "description": "" if kind != 1 else "an old command", "options": [],
        "default_member_permissions": None, "nsfw": False, "contexts": None, "integration_types": [0],
    }  # fmt: skip
    return {**found, "guild_id": guild} if guild else found


async def test_commands_buttons_and_forms_the_bot_does_not_have_are_answered_privately(
    standin: StandInDiscord, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    standin.commands[""] = [stale("help"), stale("Report user", kind=2)]  # from a run without DISCORD_GUILD_ID
    standin.commands[OTHER_GUILD_ID] = [stale("ask", guild=OTHER_GUILD_ID)]  # a run aimed at the other server
    async with running_bot(standin, db_url):
        # Startup: the served guild gets this process's commands; stale registrations elsewhere go.
        assert {c["name"] for c in standin.commands[GUILD_ID]} == {"ask", "agentbot"}
        assert standin.commands[""] == []
        await standin.wait_until(lambda: standin.commands[OTHER_GUILD_ID] == [])

        answered: dict[str, str] = {}
        # A slash command Discord still shows (CHAT_INPUT, data.type 1), with no options field at all.
        answered["slash"] = await standin.interact({"id": "1500000000000000001", "name": "help", "type": 1}, ALICE)
        # An older shape of /ask (another option name) and a subcommand this version dropped.
        answered["old ask"] = await standin.slash("ask", {"query": "where is O-12345"}, ALICE)
        answered["subcommand"] = await standin.subcommand("agentbot", "purge", ALICE, GENERAL_ID)
        # A user command (data.type 2): target_id and the resolved user and member.
        target = {"users": {MALLORY["id"]: MALLORY}, "members": {MALLORY["id"]: {"roles": [], "joined_at": None,
                  "deaf": False, "mute": False, "flags": 0, "permissions": MEMBER_PERMISSIONS}}}  # fmt: skip
        answered["user"] = await standin.interact(
            {"id": "1500000000000000003", "name": "Report user", "type": 2, "target_id": MALLORY["id"],
             "resolved": target}, ALICE,
        )  # fmt: skip
        # A message command (data.type 3) on a message in #general.
        said = await standin.say(GENERAL_ID, MALLORY, "buy cheap followers")
        answered["message"] = await standin.interact(
            {"id": "1500000000000000004", "name": "Bookmark", "type": 3, "target_id": said["id"],
             "resolved": {"messages": {said["id"]: said}}}, ALICE,
        )  # fmt: skip
        # A button and a select menu on a message an older version posted (Message Component Data).
        old = standin._post(GENERAL_ID, {"content": "Was this helpful?", "components": []})
        answered["button"] = await standin.click(old, "v1:feedback:yes", ALICE)
        # One of this version's custom_ids on a message that does not carry it (discord.py drops those).
        answered["unattached"] = await standin.click(old, f"agentbot:confirm:{ALICE['id']}", ALICE)
        answered["select"] = await standin.interact(
            {"custom_id": "v1:topic", "component_type": 3, "values": ["billing"]}, ALICE, kind=3, message=old
        )
        # A modal submit (type 5) for a form this version never opens, from a DM (no guild, no member).
        answered["modal"] = await standin.interact(
            {"custom_id": "v1:feedback-form", "components": [
                {"type": 1, "components": [{"type": 4, "custom_id": "comment", "value": "great"}]}]},
            ALICE, DM, kind=5,
        )  # fmt: skip
        responses = {kind: await response_to(standin, iid) for kind, iid in answered.items()}
        # Autocomplete for an option of a command this process lacks: an empty list is its answer.
        auto = await standin.interact(
            {"id": "1500000000000000005", "name": "lookup", "type": 1,
             "options": [{"name": "order", "type": 3, "value": "O-1", "focused": True}]}, ALICE, kind=4,
        )  # fmt: skip
        suggestions = await response_to(standin, auto)
        await asyncio.sleep(0.1)
    for kind, body in responses.items():
        assert (body["type"], body["data"]["content"], body["data"]["flags"]) == (4, GONE, 64), kind  # private
    assert (suggestions["type"], suggestions["data"]["choices"]) == (8, [])
    assert texts(standin, GENERAL_ID) == ["Was this helpful?"]  # nothing said in public
    assert errors(caplog) == []
    logged = caplog.text
    assert "removed stale global commands: Report user, help" in logged
    assert f"removed stale commands in guild {OTHER_GUILD_ID}: ask" in logged


async def test_commands_are_left_alone_when_asked_and_global_without_a_guild(
    standin: StandInDiscord, db_url: str, tmp_path: Path
) -> None:
    standin.commands[""] = [stale("help")]
    async with running_bot(standin, db_url, reconcile_commands=False):
        assert standin.commands[""] == [stale("help")] and {c["name"] for c in standin.commands[GUILD_ID]} == {
            "ask",
            "agentbot",
        }
    standin.commands[GUILD_ID] = [stale("ask", guild=GUILD_ID)]
    async with running_bot(standin, f"sqlite+aiosqlite:///{tmp_path / 'other.db'}", guild_id=None):
        assert {c["name"] for c in standin.commands[""]} == {"ask", "agentbot"}  # global commands
        await standin.wait_until(lambda: standin.commands[GUILD_ID] == [])  # the guild copy was stale


async def test_an_interaction_without_a_channel_object_is_answered_in_its_channel(
    standin: StandInDiscord, db_url: str
) -> None:
    async with running_bot(standin, db_url) as run:
        # /ask in #general: the documentation marks `channel` optional; `channel_id` is what is there.
        await standin.slash("ask", {"question": "I want to check my order"}, ALICE, without=("channel",))
        start = (await standin.wait_until(lambda: standin.calls_to("POST", "/threads")))[0]
        assert start.path.startswith(f"/channels/{GENERAL_ID}/messages/")
        thread = start.path.split("/")[4]
        await standin.wait_until(lambda: standin.posted(thread))
        assert texts(standin, GENERAL_ID) == ["**alice** asked: I want to check my order"]
        # In the thread: /ask without a channel object continues that thread's conversation.
        await standin.slash(
            "ask", {"question": "o-12345"}, ALICE, thread, without=("channel", "guild_locale", "context", "locale")
        )
        await standin.wait_until(lambda: len(standin.posted(thread)) >= 3)
        # A Cancel button on a question there, clicked without a channel object.
        question = await standin.say(thread, ALICE, "please refund order O-23456")
        await standin.wait_until(lambda: len(standin.posted(thread)) >= 4)
        prompt = standin.posted(thread)[-1]
        assert question and prompt["components"]
        await standin.click(prompt, f"agentbot:cancel:{ALICE['id']}", ALICE, without=("channel",))
        await standin.wait_until(lambda: len(standin.posted(thread)) >= 5)
        # In a DM: keyed by the DM channel, answered by follow-ups.
        dm_ask = await standin.slash("ask", {"question": "where is O-23456"}, ALICE, DM, without=("channel",))
        follow_ups = await standin.wait_until(
            lambda: [c.body["content"] for c in standin.calls_to("POST", "/webhooks/") if dm_ask in c.path][1:]
        )
        # Neither `channel` nor `channel_id`: no conversation to file it under, so a private refusal.
        lost = await standin.slash("ask", {"question": "where is O-12345"}, ALICE, without=("channel", "channel_id"))
        refusal = await response_to(standin, lost)
        await run.bot.dispatcher.drain()
        sessions = await run.app.store.fetch(  # type: ignore[attr-defined]
            "SELECT DISTINCT session_id FROM messages ORDER BY session_id"
        )
    assert {r.session_id for r in sessions} == {f"discord:{GUILD_ID}:{thread}", f"discord:dm:{DM}"}
    replies = texts(standin, thread)
    assert "has shipped" in replies[2] and replies[4] == "Okay, I've cancelled that; nothing was changed."
    assert "delivered" in follow_ups[0]
    assert refusal["data"]["flags"] == 64 and "can't tell which channel" in refusal["data"]["content"]
    assert not [c.path for c in standin.calls if "/channels/0" in c.path or c.path.startswith("/channels/None")]


async def test_a_malformed_gateway_event_is_one_skipped_event(
    standin: StandInDiscord, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with running_bot(standin, db_url) as run:
        mention = await standin.say(GENERAL_ID, ALICE, "where is O-12345?", mention_bot=True)
        await standin.wait_until(lambda: len(standin.posted(mention["id"])) >= 2)
        # GUILD_MEMBER_UPDATE with an empty user object, twice, and a MESSAGE_CREATE without an author.
        bad_member = {"guild_id": GUILD_ID, "roles": [], "user": {}, "nick": None, "avatar": None,
                      "joined_at": None, "deaf": False, "mute": False, "flags": 0}  # fmt: skip
        await standin.dispatch("GUILD_MEMBER_UPDATE", bad_member)
        await standin.dispatch("GUILD_MEMBER_UPDATE", bad_member)
        await standin.dispatch("MESSAGE_CREATE", {"id": standin.new_id(), "channel_id": mention["id"]})
        # The next message, in the conversation already going and in a new one, is answered.
        await standin.say(mention["id"], ALICE, "and O-23456?")
        replies = await standin.wait_until(
            lambda: len(standin.posted(mention["id"])) >= 4 and texts(standin, mention["id"])
        )
        dm = await standin.say(DM, ALICE, "track o-34567")
        await standin.wait_until(lambda: len(standin.posted(DM)) >= 2)
        exposition, _ = await run.metrics.exposition()
        assert not run.bot.is_closed()
    assert "delivered" in replies[3] and dm
    metrics = exposition.decode()
    assert 'agentbot_gateway_events_skipped_total{channel="discord",event="GUILD_MEMBER_UPDATE"} 2.0' in metrics
    assert 'agentbot_gateway_events_skipped_total{channel="discord",event="MESSAGE_CREATE"} 1.0' in metrics
    skipped = [r.getMessage() for r in caplog.records if "could not read" in r.getMessage()]
    assert len(skipped) == 2 and "GUILD_MEMBER_UPDATE" in skipped[0] and "MESSAGE_CREATE" in skipped[1]
    assert errors(caplog) == []


async def handoff(standin: StandInDiscord, channel: str, who: dict[str, Any]) -> str:
    """Someone in `channel` asks for a person; returns the thread the conversation went to."""

    def started() -> list[str]:
        return [c.path.split("/")[4] for c in standin.calls_to("POST", "/threads") if f"/channels/{channel}/" in c.path]

    before = len(started())
    await standin.slash("ask", {"question": "get me a real person"}, who, channel)
    thread = (await standin.wait_until(lambda: started()[before:]))[0]
    await standin.wait_until(lambda: len(standin.posted(thread)) >= 2)
    return thread


async def test_two_servers_each_with_their_own_admin_channel(standin: StandInDiscord, db_url: str) -> None:
    admin = str(int(MEMBER_PERMISSIONS) | MANAGE_GUILD)
    async with running_bot(standin, db_url, guild_id=None) as run:  # global commands, in every server
        # Before the other server chose a channel, its handoff goes to no server's channel.
        early = await handoff(standin, OTHER_GENERAL_ID, ALICE)
        await run.bot.dispatcher.drain()
        await asyncio.sleep(0.1)
        assert alerts(standin, ADMIN_CHANNEL_ID) == alerts(standin, OTHER_ADMIN_CHANNEL_ID) == []

        refused = await standin.subcommand("agentbot", "admin-channel", MALLORY, OTHER_ADMIN_CHANNEL_ID)
        in_dm = await standin.subcommand("agentbot", "admin-channel", OWNER, DM)
        chosen = await standin.subcommand(
            "agentbot", "admin-channel", OWNER, OTHER_ADMIN_CHANNEL_ID, permissions=admin, without=("channel",)
        )
        confirmation = await standin.wait_until(
            lambda: [c.body for c in standin.calls_to("POST", "/webhooks/") if chosen in c.path]
        )
        ours = await handoff(standin, GENERAL_ID, ALICE)
        theirs = await handoff(standin, OTHER_GENERAL_ID, ALICE)
        await standin.wait_until(lambda: alerts(standin, ADMIN_CHANNEL_ID) and alerts(standin, OTHER_ADMIN_CHANNEL_ID))
        await run.bot.dispatcher.drain()
        await asyncio.sleep(0.1)
        home, other = alerts(standin, ADMIN_CHANNEL_ID), alerts(standin, OTHER_ADMIN_CHANNEL_ID)
        # The other server's admin resumes its conversation from its alert; this server's role can't.
        resume = other[0]["components"][0]["components"][0]["custom_id"]
        await standin.click(other[0], resume, DANA, roles=[ADMIN_ROLE_ID])
        await standin.wait_until(lambda: len(standin.posted(theirs)) >= 3)
        # A DM belongs to no server: its alert goes to the default channel.
        await standin.slash("ask", {"question": "get me a real person"}, ALICE, DM)
        from_dm = (await standin.wait_until(lambda: alerts(standin, ADMIN_CHANNEL_ID)[1:]))[0]
        stored = await SqlStore(db_url).fetch("SELECT guild_id, admin_channel_id, set_by FROM discord_guilds")
    assert (await response_to(standin, refused))["data"]["content"].startswith("Only members with the Manage Server")
    assert (await response_to(standin, in_dm))["data"]["content"].startswith("Admin channels belong to servers")
    assert confirmation[0]["content"] == f"This server's admin alerts now go to <#{OTHER_ADMIN_CHANNEL_ID}>."
    assert confirmation[0]["flags"] == 64
    assert [tuple(r) for r in stored] == [(OTHER_GUILD_ID, OTHER_ADMIN_CHANNEL_ID, OWNER["id"])]
    assert len(home) == 1 and f"<#{ours}>" in home[0]["content"]  # this server's handoff, here only
    assert len(other) == 1 and f"<#{theirs}>" in other[0]["content"] and f"<#{early}>" not in other[0]["content"]
    assert texts(standin, theirs)[-1] == "I'm back in this conversation. What else can I help you with?"
    assert f"Session: `discord:dm:{DM}`" in from_dm["content"] and len(alerts(standin, OTHER_ADMIN_CHANNEL_ID)) == 1
    # One person, two servers: two conversations, never one.
    assert len({ours, theirs, early}) == 3


async def test_a_server_role_cannot_resume_another_servers_conversation(standin: StandInDiscord, db_url: str) -> None:
    async with running_bot(standin, db_url, guild_id=None):
        thread = await handoff(standin, OTHER_GENERAL_ID, ALICE)
        key = f"discord:{OTHER_GUILD_ID}:{thread}"
        # The other server's alert, as if it had been posted here (before each server had its own channel).
        button = {"type": 2, "style": 1, "label": "Resume bot", "custom_id": f"agentbot:resume:{key}"}
        alert = standin._post(
            ADMIN_CHANNEL_ID, {"content": "handoff", "components": [{"type": 1, "components": [button]}]}
        )
        click = await standin.click(alert, f"agentbot:resume:{key}", DANA, roles=[ADMIN_ROLE_ID])
        answer = await response_to(standin, click)
        await asyncio.sleep(0.1)
    assert answer["data"]["content"] == "That conversation belongs to another server; its own admins can resume it."
    assert len(standin.posted(thread)) == 2  # still with the humans


async def test_two_shards_answer_every_event_once_and_keep_authorization_and_secrets(
    standin: StandInDiscord, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    # Alice in the first server (shard 1 of 2), Bilal in the second (shard 0), each refunding an order.
    asked = {GENERAL_ID: (ALICE, "O-23456"), OTHER_GENERAL_ID: (BILAL, "O-35791")}
    shards: dict[str, Any] = {"guild_id": None, "shard_count": 2}
    async with (
        running_bot(standin, db_url, shard_ids=[0], **shards),
        running_bot(standin, db_url, shard_ids=[1], **shards) as one,
    ):
        assert sorted(standin.identifies) == [[0, 2], [1, 2]]
        # Each /ask delivered on both shards (a session moving between processes): one answer each.
        asks = {
            channel: await standin.slash(
                "ask", {"question": f"please refund order {order}"}, who, channel, every_shard=True
            )
            for channel, (who, order) in asked.items()
        }
        threads = {channel: await thread_from(standin, channel) for channel in asks}
        questions = {c: (await standin.wait_until(lambda t=t: standin.posted(t)))[0] for c, t in threads.items()}  # type: ignore[misc]
        # Mallory presses Bilal's Confirm: a private refusal, no refund.
        nope = await standin.click(questions[OTHER_GENERAL_ID], f"agentbot:confirm:{BILAL['id']}", MALLORY)
        refusal = await response_to(standin, nope)
        # Each asker confirms, the click delivered on both shards.
        for channel, question in questions.items():
            who = asked[channel][0]
            await standin.interact(
                {"custom_id": f"agentbot:confirm:{who['id']}", "component_type": 2}, who, question["channel_id"],
                kind=3, message=question, every_shard=True,
            )  # fmt: skip
        for thread in threads.values():
            await standin.wait_until(lambda t=thread: len(standin.posted(t)) >= 2)  # type: ignore[misc]
        await asyncio.sleep(0.2)
        await one.bot.dispatcher.drain()
        refunds = await one.app.store.fetch("SELECT order_id, session_id FROM refunds")  # type: ignore[attr-defined]
        database = await one.app.store.fetch("SELECT payload FROM inbox")  # type: ignore[attr-defined]
    assert refusal["data"]["flags"] == 64 and "Only the person who asked" in refusal["data"]["content"]
    for channel, iid in asks.items():
        assert len([c for c in standin.calls_to("POST", "/webhooks/") if iid in c.path]) == 1  # the anchor, once
        assert len([c for c in standin.calls_to("POST", "/threads") if f"/channels/{channel}/" in c.path]) == 1
    for thread in threads.values():
        assert len(standin.posted(thread)) == 2 and "refunded" in texts(standin, thread)[1]
    assert sorted((r.order_id, r.session_id) for r in refunds) == [
        ("O-23456", f"discord:{GUILD_ID}:{threads[GENERAL_ID]}"),
        ("O-35791", f"discord:{OTHER_GUILD_ID}:{threads[OTHER_GENERAL_ID]}"),
    ]
    # The bot token is in no log line and in no stored event.
    assert "test-token" not in caplog.text
    assert not [r for r in database if "test-token" in r.payload]
    assert errors(caplog) == []


async def thread_from(standin: StandInDiscord, channel: str) -> str:
    start = await standin.wait_until(
        lambda: [c for c in standin.calls_to("POST", "/threads") if f"/channels/{channel}/" in c.path]
    )
    return start[0].path.split("/")[4]  # type: ignore[no-any-return]


async def test_agentbot_discord_survives_a_bad_event_and_answers_unknown_commands_without_an_error(
    standin: StandInDiscord, tmp_path: Path
) -> None:
    """The real `agentbot discord` process, two shards in it: the bad event used to end it with code 1."""
    metrics_port = free_port()
    keep = {k: v for k, v in os.environ.items() if k not in PROXY and not k.startswith(("AGENTBOT_", "DISCORD_"))}
    env = keep | {
        "AGENTBOT_DB_URL": f"sqlite+aiosqlite:///{tmp_path / 'agentbot.db'}",
        "DISCORD_BOT_TOKEN": "standin-token-49",
        "DISCORD_API_BASE": standin.api_base,
        "DISCORD_GATEWAY_URL": standin.gateway_url,
        "DISCORD_ADMIN_CHANNEL_ID": ADMIN_CHANNEL_ID,
        "DISCORD_SHARD_COUNT": "2",
        "AGENTBOT_METRICS_PORT": str(metrics_port),
        "PYTHONUNBUFFERED": "1",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bots.cli", "discord", "--config-dir", str(REPO / "config"),
        "--data-dir", str(REPO / "data"), cwd=REPO, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:
        # Shards identify five seconds apart, as Discord asks.
        await standin.wait_until(lambda: len(standin.identifies) == 2 and standin.commands.get(""), within=40)
        bad_member = {"guild_id": GUILD_ID, "roles": [], "user": {}, "joined_at": None, "deaf": False, "mute": False}
        await standin.dispatch("GUILD_MEMBER_UPDATE", bad_member)
        stale_command = await standin.interact({"id": "1500000000000000001", "name": "help", "type": 1}, ALICE)
        gone_answer = await response_to(standin, stale_command)
        mention = await standin.say(GENERAL_ID, ALICE, "where is O-12345?", mention_bot=True)
        replies = await standin.wait_until(
            lambda: len(standin.posted(mention["id"])) >= 2 and texts(standin, mention["id"]), within=20
        )
        await wait_until_listening(metrics_port)
        async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{metrics_port}/metrics") as scraped:
            families = {f.name: f for f in text_string_to_metric_families(await scraped.text())}
        assert proc.returncode is None  # still running
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        output, _ = await asyncio.wait_for(proc.communicate(), 30)
    log = output.decode()
    assert gone_answer["data"] == {"content": GONE, "flags": 64, "tts": False, "allowed_mentions": {"parse": []}}
    assert "shipped" in replies[1]
    skipped = [
        (s.labels, s.value) for s in families["agentbot_gateway_events_skipped"].samples if s.name.endswith("_total")
    ]
    assert skipped == [({"channel": "discord", "event": "GUILD_MEMBER_UPDATE"}, 1.0)]
    assert log.count("skipped a GUILD_MEMBER_UPDATE gateway event") == 1
    assert " ERROR " not in log and "Traceback" not in log, log
    assert "standin-token-49" not in log
