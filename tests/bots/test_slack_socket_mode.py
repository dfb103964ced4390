"""Socket Mode end to end: real bolt and slack_sdk's Socket Mode client against the stand-in WebSocket.

Events, a button and a slash command arrive as envelopes; each is acked once stored, a forced
`disconnect` mid-conversation makes the client reconnect, and an envelope the old connection left
unacked is delivered again on the new one. Every event is answered exactly once, in order.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bots.settings import DeploySettings
from bots.slack.channel import SlackChannel
from bots.slack.serve import SlackSettings, build_slack, serve_socket_mode
from tests.helpers import REPO, sigkill, terminate
from tests.slack_harness import ADMIN, ADMIN_CHANNEL, ALICE, CHANNEL, SlackClient, in_thread, rows
from tests.standins.slack_socket_mode import SocketModeStandIn
from tests.standins.slack_standin import SlackStandIn


@dataclass
class SocketApp:
    channel: SlackChannel
    socket: SocketModeStandIn
    payloads: SlackClient  # builds the same bodies Slack sends over HTTP


@pytest.fixture
async def socket(slack: SlackStandIn) -> AsyncIterator[SocketModeStandIn]:
    stand_in = SocketModeStandIn(slack)
    await stand_in.start()
    yield stand_in
    await stand_in.aclose()


@asynccontextmanager
async def socket_app(db_url: str, slack: SlackStandIn, socket: SocketModeStandIn) -> AsyncIterator[SocketApp]:
    settings = SlackSettings(
        bot_token="xoxb-test",
        app_token="xapp-test",
        admin_channel=ADMIN_CHANNEL,
        admins=[ADMIN],
        api_url=f"{slack.url}/api/",
    )
    channel = build_slack(settings, REPO / "config", REPO / "data", db_url, env={})
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(channel.app)
        await stack.enter_async_context(serve_socket_mode(channel, settings.app_token))
        await socket.connected()
        payloads = SlackClient("")
        payloads.stand_in_url = slack.url
        yield SocketApp(channel, socket, payloads)


def mention(payloads: SlackClient, text: str, ts: str) -> dict[str, Any]:
    event = {"type": "app_mention", "user": ALICE, "text": f"<@UBOTAGENT> {text}", "ts": ts, "channel": CHANNEL}
    return payloads.event_body(event)


def reply(payloads: SlackClient, text: str, ts: str, thread_ts: str) -> dict[str, Any]:
    event = {"type": "message", "channel_type": "channel", "user": ALICE, "text": text, "ts": ts, "channel": CHANNEL}
    return payloads.event_body({**event, "thread_ts": thread_ts})


async def test_a_conversation_a_button_and_a_command_over_socket_mode(
    db_url: str, slack: SlackStandIn, socket: SocketModeStandIn
) -> None:
    async with socket_app(db_url, slack, socket) as app:
        root = app.payloads.ts()
        await socket.deliver("events_api", mention(app.payloads, "I want to check my order", root))
        await slack.wait_for("chat.postMessage", 1)
        await socket.deliver("events_api", reply(app.payloads, "o-12345", app.payloads.ts(), root))
        await slack.wait_for("chat.postMessage", 3)

        refund_root = app.payloads.ts()
        await socket.deliver("events_api", mention(app.payloads, "please refund order O-23456", refund_root))
        question = (await slack.wait_for("chat.postMessage", 4))[-1]
        confirm = question["blocks"][-1]["elements"][0]
        clicked = {"ts": slack.threads[(CHANNEL, refund_root)][0]["ts"], "text": question["text"]}
        payload = app.payloads.click_payload("agentbot_confirm", confirm["value"], clicked, CHANNEL)
        await socket.deliver("interactive", payload)
        await slack.wait_for("chat.postMessage", 5)

        help_ack = await socket.deliver("slash_commands", app.payloads.command_form("help"))
        await socket.deliver("slash_commands", app.payloads.command_form("where is O-12345?"))
        await slack.wait_for("chat.postMessage", 8)  # the request's root, the pre-message, the answer
        await app.channel.dispatcher.drain()

    assert all(e.acked for e in socket.envelopes) and socket.connections == 1
    assert help_ack.ack_payload is not None and "/agentbot" in help_ack.ack_payload["text"]
    order = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    assert "order id" in order[0].lower() and "O-12345" in order[1] and "shipped" in order[2]
    refund = in_thread(slack, CHANNEL, refund_root)
    assert [p["text"].count("refunded ฿3,290") for p in refund] == [0, 1]
    assert [tuple(r) for r in await rows(db_url, "SELECT order_id FROM refunds")] == [("O-23456",)]
    (ask_root,) = [ts for (_, ts), thread in slack.threads.items() if "asked:" in thread[0]["text"]]
    asked = [p["text"] for p in in_thread(slack, CHANNEL, ask_root)]
    assert len(asked) == 2 and "O-12345" in asked[0] and "shipped" in asked[1]
    assert await rows(db_url, "SELECT key FROM inbox WHERE status != 'done'") == []


async def test_a_forced_reconnect_mid_conversation_answers_every_event_once_in_order(
    db_url: str, slack: SlackStandIn, socket: SocketModeStandIn
) -> None:
    texts = ["I want to check my order", "o-12345", "and where is O-23456", "thanks"]
    async with socket_app(db_url, slack, socket) as app:
        root = app.payloads.ts()
        await socket.deliver("events_api", mention(app.payloads, texts[0], root))
        await slack.wait_for("chat.postMessage", 1)
        await socket.deliver("events_api", reply(app.payloads, texts[1], app.payloads.ts(), root))

        await socket.disconnect("refresh_requested")
        await socket.connected(2)
        third = await socket.deliver("events_api", reply(app.payloads, texts[2], app.payloads.ts(), root))

        # Sent, then the connection drops before the ack: Slack sends it again on the next one.
        fourth = await socket.send("events_api", reply(app.payloads, texts[3], app.payloads.ts(), root))
        await socket.drop()
        await socket.connected(3)
        await socket.acked(fourth)
        await slack.wait_for("chat.postMessage", 6)
        await app.channel.dispatcher.drain()

    assert socket.connections == 3 and third.acked and fourth.acked and fourth.retry_attempt == 1
    assert socket.sent_to_socket.count(fourth.envelope_id) == 2  # delivered twice, answered once
    stored = await rows(db_url, "SELECT text FROM messages WHERE role = 'user' ORDER BY id")
    assert [r[0] for r in stored] == texts  # each event one turn, in the order sent
    assert len(in_thread(slack, CHANNEL, root)) == len(slack.to("chat.postMessage"))
    answers = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    assert len(answers) == len(set(answers))


class SocketWorker:
    """A real `agentbot slack` process in Socket Mode (SLACK_APP_TOKEN), killable and restartable."""

    def __init__(self, db_url: str, api_url: str, config: Path, logs: Path):
        self.db_url, self.api_url, self.config, self.logs = db_url, api_url, config, logs
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        env = {
            **os.environ,
            "SLACK_BOT_TOKEN": "xoxb-socket",
            "SLACK_APP_TOKEN": "xapp-socket",
            "SLACK_API_URL": self.api_url,
            "AGENTBOT_DB_URL": self.db_url,
        }
        env.pop("SLACK_SIGNING_SECRET", None)
        self.starts += 1
        code = "import sys; from bots.cli import main; sys.exit(main())"
        args = ["slack", "--config-dir", str(self.config), "--data-dir", str(REPO / "data")]
        with (self.logs / f"socket-{self.starts}.log").open("wb") as log:  # the child keeps its copy
            self.proc = subprocess.Popen([sys.executable, "-c", code, *args], env=env, stdout=log, stderr=log)

    def kill(self) -> None:
        sigkill(self.proc)

    def stop(self) -> None:
        terminate(self.proc)


async def test_a_socket_mode_process_killed_mid_turn_answers_every_event_once_in_order(
    tmp_path: Path, slack: SlackStandIn, socket: SocketModeStandIn
) -> None:
    # The killed process's conversations are taken over once their lease runs out: a short one here.
    config = tmp_path / "config"
    shutil.copytree(REPO / "config", config)
    with (config / "settings.yaml").open("a", encoding="utf-8") as f:
        f.write("lease_seconds: 1\n")
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'socket.db'}"
    worker = SocketWorker(db_url, f"{slack.url}/api/", config, tmp_path)
    payloads = SlackClient("")

    def kill_after_the_pre_message(method: str, params: dict[str, Any]) -> None:
        # Posted, but the bot never hears back: the restarted process must not post it again.
        if method == "chat.postMessage" and params.get("text", "").startswith("Checking order O-12345"):
            worker.kill()

    texts = ["I want to check my order", "o-12345", "thanks"]
    root = payloads.ts()
    worker.start()
    try:
        await socket.connected(1, within=60)
        await socket.deliver("events_api", mention(payloads, texts[0], root))
        await slack.wait_for("chat.postMessage", 1, within=30)
        slack.on_call.append(kill_after_the_pre_message)
        await socket.deliver("events_api", reply(payloads, texts[1], payloads.ts(), root))
        await slack.wait_for("chat.postMessage", 2, within=30)  # the pre-message; its hook killed the process
        assert worker.proc is not None and worker.proc.poll() == -signal.SIGKILL
        slack.on_call.clear()
        # Sent while no process is connected: Slack keeps it and sends it to the next connection.
        thanks = await socket.send("events_api", reply(payloads, texts[2], payloads.ts(), root))
        worker.start()
        await socket.acked(thanks, within=60)
        await slack.wait_for("chat.postMessage", 4, within=30)
        await asyncio.sleep(1.0)  # room for a duplicate to show up, if there were one
    finally:
        worker.stop()

    posted = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    print(
        f"\nsocket mode SIGKILL run: {socket.connections} connections, {len(socket.envelopes)} envelopes, "
        f"{len(socket.sent_to_socket)} sent, {len(posted)} messages posted"
    )
    # Sent on the dead connection (lost) and again on the new one, or held until it opened: either way acked once.
    assert socket.connections == 2 and thanks.acked and thanks.deliveries in (1, 2)
    assert len(posted) == 4 and len(set(posted)) == 4, posted  # question, pre-message, answer, thanks: once each
    assert "order id" in posted[0].lower() and posted[1].startswith("Checking order O-12345")
    assert "shipped" in posted[2]
    stored = await rows(db_url, "SELECT text FROM messages WHERE role = 'user' ORDER BY id")
    assert [r[0] for r in stored] == texts
    assert await rows(db_url, "SELECT key FROM inbox WHERE status != 'done'") == []


async def test_socket_mode_with_oauth_installs_over_http_and_answers_each_workspace_with_its_token(
    db_url: str, slack: SlackStandIn, socket: SocketModeStandIn
) -> None:
    import aiohttp

    from bots.slack.serve import serve_install_pages
    from tests.bots.test_slack_workspaces import install
    from tests.slack_harness import Running

    a, b = slack.add_workspace("T0AAAAAAA", "Acme"), slack.add_workspace("T0BBBBBBB", "Bolt Co")
    variables = {"SLACK_CLIENT_ID": "111.222", "SLACK_CLIENT_SECRET": "oauth-secret", "SLACK_APP_TOKEN": "xapp-test"}
    settings = SlackSettings.from_settings(DeploySettings.from_env(variables)).model_copy(
        update={"api_url": f"{slack.url}/api/"}
    )
    channel = build_slack(settings, REPO / "config", REPO / "data", db_url, env={})
    payloads = SlackClient("")
    payloads.stand_in_url = slack.url
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(channel.app)
        await stack.enter_async_context(serve_socket_mode(channel, settings.app_token))
        pages = await stack.enter_async_context(serve_install_pages(channel, "127.0.0.1", 0))
        await socket.connected()
        await install(Running(channel, slack, payloads, pages.url), a)
        await install(Running(channel, slack, payloads, pages.url), b)
        async with aiohttp.ClientSession() as web, web.post(f"{pages.url}/slack/events", json={}) as posted:
            unsigned_event = posted.status  # events come over the socket only: nothing unsigned is taken
        roots = {}
        for ws, channel_id in ((a, CHANNEL), (b, "C0BOLTCO")):
            roots[ws.team_id] = ts = payloads.ts()
            event = {"type": "app_mention", "user": ALICE, "text": f"<@{ws.bot_user_id}> where is O-12345"}
            event.update({"ts": ts, "channel": channel_id})
            body = payloads.event_body(event, team=ws.team_id)
            body["authorizations"] = [
                {"enterprise_id": None, "team_id": ws.team_id, "user_id": ws.bot_user_id, "is_bot": True}
            ]
            await socket.deliver("events_api", body)
        await slack.wait_for("chat.postMessage", 4)
        await channel.dispatcher.drain()

    assert unsigned_event in (404, 405)
    posts = [c for c in slack.calls if c.method == "chat.postMessage"]
    assert {c.params["channel"]: c.token for c in posts} == {CHANNEL: a.bot_token, "C0BOLTCO": b.bot_token}
    assert len(in_thread(slack, CHANNEL, roots[a.team_id])) == 2
    assert len(in_thread(slack, "C0BOLTCO", roots[b.team_id])) == 2
    assert all(e.acked for e in socket.envelopes)
