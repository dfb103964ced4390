"""The Procfile is the deploy contract: `honcho start` runs every entry, the web one on $PORT, until told to stop."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from adapters.storage.migrate import head_revision
from tests.bots.test_slack_cli import PROXY, free_port, wait_until_listening
from tests.helpers import REPO
from tests.slack_harness import CHANNEL, SECRET, SlackClient, in_thread
from tests.standins.discord_standin import StandInDiscord
from tests.standins.slack_standin import SlackStandIn


def test_the_procfile_has_no_interactive_entry() -> None:
    entries = dict(line.split(": ", 1) for line in (REPO / "Procfile").read_text().splitlines() if line.strip())
    assert entries == {"web": "agentbot slack", "discord": "agentbot discord"}


async def test_honcho_start_serves_slack_on_port_and_is_ready(tmp_path: Path, slack: SlackStandIn) -> None:
    discord = await StandInDiscord().start()
    port, metrics_port = free_port(), free_port()
    keep = {
        k: v for k, v in os.environ.items() if k not in PROXY and not k.startswith(("AGENTBOT_", "SLACK_", "DISCORD_"))
    }
    env = keep | {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{keep.get('PATH', '')}",
        "AGENTBOT_DB_URL": f"sqlite+aiosqlite:///{tmp_path / 'var' / 'agentbot.db'}",
        "SLACK_BOT_TOKEN": "xoxb-standin",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": f"{slack.url}/api/",
        "DISCORD_BOT_TOKEN": "standin-token",
        "DISCORD_API_BASE": discord.api_base,
        "DISCORD_GATEWAY_URL": discord.gateway_url,
        "AGENTBOT_METRICS_PORT": str(metrics_port),
        "PYTHONUNBUFFERED": "1",
    }
    honcho = await asyncio.create_subprocess_exec(
        Path(sys.executable).parent / "honcho", "-f", REPO / "Procfile", "-d", tmp_path, "start", "-p", str(port),
        cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    try:
        await wait_until_listening(port)
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/healthz") as health:
                assert health.status == 200 and (await health.json())["status"] == "ok"
            async with http.get(f"http://127.0.0.1:{port}/readyz") as ready:
                body = await ready.json()
                assert ready.status == 200 and body["current"] == head_revision() and not body["behind"]
            client = SlackClient(f"http://127.0.0.1:{port}")
            client.session = http
            root, sent = await client.mention("where is O-12345")
        assert sent.status == 200
        await slack.wait_for("chat.postMessage", 2, within=20)
        assert "shipped" in in_thread(slack, CHANNEL, root)[1]["text"]
        await asyncio.wait_for(discord.identified.wait(), 20)  # the discord entry is up beside it
        await wait_until_listening(metrics_port)
        async with aiohttp.ClientSession() as http:
            for base in (f"http://127.0.0.1:{port}", f"http://127.0.0.1:{metrics_port}"):  # slack's port, discord's own
                async with http.get(f"{base}/metrics") as scraped:
                    names = {f.name for f in text_string_to_metric_families(await scraped.text())}
                assert scraped.status == 200 and {"agentbot_turns", "agentbot_outbox_unsent_messages"} <= names
            async with http.get(f"http://127.0.0.1:{metrics_port}/readyz") as ready:
                assert ready.status == 200
        assert honcho.returncode is None  # nothing stopped the formation
    finally:
        if honcho.returncode is None:
            honcho.send_signal(signal.SIGTERM)
        output, _ = await asyncio.wait_for(honcho.communicate(), 30)
        await discord.aclose()
    log = output.decode()
    # Which interface it bound, and why, is in the startup line (0.0.0.0 when this test runs in a container).
    assert f":{port}/slack/events (port from $PORT; " in log and "listening on http://" in log, log
    assert "xoxb-standin" not in log and "standin-token" not in log
