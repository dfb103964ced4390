"""`agentbot slack` as an operator runs it: a real process, configured from the environment only."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys

import aiohttp

from tests.bots.test_cli import agentbot
from tests.helpers import REPO
from tests.slack_harness import CHANNEL, SECRET, SlackClient, in_thread
from tests.standins.slack_standin import SlackStandIn

PROXY = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}


def test_a_missing_token_or_secret_stops_startup_naming_it(db_url: str) -> None:
    out = agentbot("slack", "--db-url", db_url)
    assert out.returncode == 2
    assert "Slack needs SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET, which are not set" in out.stderr
    assert out.stderr.count("SLACK_BOT_TOKEN") == 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def slack_process(
    db_url: str, slack: SlackStandIn, port: int, extra: dict[str, str] | None = None
) -> asyncio.subprocess.Process:
    """`agentbot slack` in HTTP mode on `port`, against the stand-in Web API, with only the
    variables a test sets (no proxy, none of the developer's own)."""
    env = {k: v for k, v in os.environ.items() if k not in PROXY and not k.startswith(("AGENTBOT_", "SLACK_"))}
    env |= {"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": f"{slack.url}/api/"}
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bots.cli", "slack", "--port", str(port), "--db-url", db_url,
        cwd=REPO, env=env | (extra or {}), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def wait_until_listening(port: int) -> None:
    # Generous: a process starting beside others on a loaded 2-core machine (honcho starts three)
    # takes seconds; how long start-up takes is measured by `agentbot bench`, not here.
    async with asyncio.timeout(60):
        while True:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.1)
                continue
            writer.close()
            await writer.wait_closed()
            return


async def test_the_slack_process_answers_in_the_thread_and_stops_on_sigterm(db_url: str, slack: SlackStandIn) -> None:
    port = free_port()
    proc = await slack_process(db_url, slack, port)
    try:
        await wait_until_listening(port)
        client = SlackClient(f"http://127.0.0.1:{port}")
        async with aiohttp.ClientSession() as client.session:
            root, sent = await client.mention("where is O-12345")
        assert sent.status == 200
        await slack.wait_for("chat.postMessage", 2, within=20)
        assert "shipped" in in_thread(slack, CHANNEL, root)[1]["text"]
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 0, stderr.decode()
    assert b"xoxb-test" not in stderr  # the token is never logged


def test_the_ack_benchmark_runs_from_a_checkout() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tests.bench_slack", "--events", "10", "--turn-seconds", "0.05", "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr  # every thread answered, once
    report = json.loads(out.stdout)
    assert report["answers"] == 10 and report["duplicate_answers"] == 0
    assert set(report["ack"]) == {"p50_ms", "p99_ms", "max_ms"}
