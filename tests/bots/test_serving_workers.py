"""`agentbot slack --workers 2` as a real process tree: a parent that loaded the model, two forked
workers sharing its pages and its listening socket, a killed worker started again, SIGTERM ending all."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest

from tests.bots.test_slack_cli import free_port, slack_process, wait_until_listening
from tests.helpers import REPO
from tests.slack_harness import CHANNEL, SlackClient, in_thread
from tests.standins.slack_standin import SlackStandIn

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc; pre-fork workers need fork (POSIX)"
)


def children(pid: int) -> set[int]:
    """The processes whose parent is `pid` (from /proc/<pid>/task/*/children)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(c) for c in (task / "children").read_text().split()}
    return found


def rollup(pid: int) -> dict[str, int]:
    """/proc/<pid>/smaps_rollup in kB."""
    lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]
    return {parts[0].rstrip(":"): int(parts[1]) for parts in (line.split() for line in lines) if len(parts) >= 2}


def listening_inodes(pid: int) -> set[str]:
    """The socket inodes `pid` holds open."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


async def until(check: Callable[[], set[int] | bool], within: float = 60.0) -> set[int]:
    """The processes `check` finds, once it finds them: /proc tells no one when they change."""
    async with asyncio.timeout(within):
        while not (found := check()):  # noqa: ASYNC110 - polling /proc, which has nothing to wait on
            await asyncio.sleep(0.1)
        assert isinstance(found, set)
        return found


async def answered(client: SlackClient, slack: SlackStandIn, text: str, count: int) -> str:
    async with aiohttp.ClientSession() as client.session:
        root, sent = await client.mention(text)
    assert sent.status == 200
    await slack.wait_for("chat.postMessage", count, within=30)
    return str(in_thread(slack, CHANNEL, root)[-1]["text"])


async def test_forked_workers_share_the_parents_pages_and_a_killed_one_is_restarted(
    db_url: str, slack: SlackStandIn
) -> None:
    port = free_port()
    proc = await slack_process(db_url, slack, port, {"WEB_CONCURRENCY": "2", "AGENTBOT_TRACING": "off"})
    try:
        await wait_until_listening(port)
        workers = await until(lambda: len(children(proc.pid)) == 2 and children(proc.pid))
        # Every worker serves the parent's own listening socket.
        for worker in workers:
            assert listening_inodes(proc.pid) & listening_inodes(worker)
        client = SlackClient(f"http://127.0.0.1:{port}")  # one client: each event its own id
        assert "shipped" in await answered(client, slack, "where is O-12345", 2)

        # The parent's pages (the modules, the config, the banks and the model over them) are the
        # workers' too until one writes to them: each worker's share of its anonymous memory is
        # well below what it maps.
        for worker in workers:
            memory = rollup(worker)
            assert memory["Pss_Anon"] < 0.8 * memory["Anonymous"], memory

        killed = next(iter(workers))
        os.kill(killed, signal.SIGKILL)
        restarted = await until(lambda: len(now := children(proc.pid)) == 2 and killed not in now and now)
        assert restarted - workers  # a new process in the killed one's place
        assert "shipped" in await answered(client, slack, "where is O-12345", 4)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, stderr.decode()
    log = stderr.decode()
    assert "killed by SIGKILL" in log and log.count("started (pid") == 3
    assert b"xoxb-test" not in stderr


def test_workers_that_die_as_they_start_are_not_restarted_for_ever() -> None:
    script = (
        "import logging, sys\n"
        "from bots.workers import Supervisor\n"
        "logging.basicConfig(level=logging.INFO)\n"
        "sys.exit(Supervisor(2, lambda index: 3, quick_deaths=3).run())\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, out.stderr
    assert out.stderr.count("exited with 3") == 3 and "3 workers died right after starting: stopping" in out.stderr
