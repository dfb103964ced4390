"""The operator page as a person uses it, in a real headless Chromium (Debian's `chromium`, driven by
Playwright through its executable path; no browser is downloaded).

A customer's message goes through the Slack app (bolt, against the stand-in Web API) and is not
understood. The operator signs in, opens that conversation, finds the message in the review inbox,
labels it as a ticket, applies the label to the running bot; the customer says it again, and the
bot opens a ticket goal. Skipped, with the reason, where Chromium or Playwright is missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import aiohttp
import pytest
from pydantic import SecretStr

from bots.admin.settings import AdminSettings
from bots.slack.serve import SlackSettings, build_slack, serve_http
from tests.bots.review_project import MISSED, review_project
from tests.helpers import REPO
from tests.slack_harness import ADMIN, ADMIN_CHANNEL, SECRET, SlackClient
from tests.standins.slack_standin import SlackStandIn

CHROMIUM = Path("/usr/bin/chromium")
LABELLING_MS = 600_000
TOKEN = "browser-test-token-5Kd9"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def browser_missing() -> str | None:
    if not CHROMIUM.exists() and not shutil.which("chromium"):
        return "Chromium is not installed (apt-get install chromium); .ci/run installs it where it can"
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install playwright; no browser download needed)"
    return None


pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")


@asynccontextmanager
async def slack_bot_with_page(db_url: str, slack: SlackStandIn, config: Path, corpus: Path) -> AsyncIterator[tuple]:
    settings = SlackSettings(
        bot_token="xoxb-test",
        signing_secret=SECRET,
        admin_channel=ADMIN_CHANNEL,
        admins=[ADMIN],
        api_url=f"{slack.url}/api/",
    )
    admin = AdminSettings(
        token=SecretStr(TOKEN), config_dir=str(config), data_dir=str(REPO / "data"), corpora=[str(corpus)]
    )
    channel = build_slack(settings, config, REPO / "data", db_url, env={})
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(channel.app)
        server = await stack.enter_async_context(serve_http(channel, "127.0.0.1", 0, admin))
        client = SlackClient(server.url)
        client.stand_in_url = slack.url
        client.session = await stack.enter_async_context(aiohttp.ClientSession())
        yield channel, client, server.url


def not_blank(png: Path) -> None:
    """A screenshot with something drawn on it: many colours, and no single colour covering it."""
    from PIL import Image

    with Image.open(png) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20) or []
        width, height = image.size
    assert len(colours) > 20, f"{png} is nearly one colour"
    assert max(n for n, _ in colours) < 0.97 * width * height, f"{png} is blank"


async def goal_types(channel, session: str) -> list[str]:  # type: ignore[no-untyped-def]
    events = await channel.app.store.telemetry(session)
    return [e.payload["goal_type"] for e in events if e.stage == "goal_updated"]


async def test_an_operator_labels_a_missed_message_and_the_bot_then_understands_it(
    tmp_path: Path, db_url: str, slack: SlackStandIn
) -> None:
    from playwright.async_api import async_playwright

    config, corpus = review_project(tmp_path)
    shots = tmp_path / "shots"
    async with slack_bot_with_page(db_url, slack, config, corpus) as (channel, client, url), async_playwright() as pw:
        root, sent = await client.mention(MISSED)
        assert sent.status == 200
        await slack.wait_for("chat.postMessage", 1, within=60)
        await channel.dispatcher.drain()
        session = next(s for s in await _sessions(channel) if s.endswith(root))
        assert await goal_types(channel, session) == []  # not understood

        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        page = await browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(30_000)
        try:
            response = await page.goto(f"{url}/admin")
            assert response is not None and response.status == 401
            await page.fill("input[name=token]", TOKEN)
            await page.click("button[type=submit]")
            await page.wait_for_selector("text=turns today")

            await page.click("text=Conversations")
            await page.click(f"a[href*='{root}']")
            await page.wait_for_selector(f"text={MISSED}")
            assert "Customer" in await page.inner_text("main")
            await page.screenshot(path=str(shots / "conversation.png"), full_page=True)

            await page.click("header >> text=Review")
            item = page.locator(".item", has_text=MISSED).first
            await item.wait_for()
            await page.screenshot(path=str(shots / "review-inbox.png"), full_page=True)
            await item.locator("select[name=label]").select_option("create_ticket")
            async with page.expect_navigation(timeout=LABELLING_MS):
                await item.locator("button[name=other]").click(no_wait_after=True)
            outcome = await page.inner_text("main")
            # The label is local: the page says so and lists each corpus sentence it flips (a table per corpus).
            assert "create_ticket" in outcome and "No level moved" in outcome, outcome
            assert "sentences read otherwise" in outcome, outcome
            await page.screenshot(path=str(shots / "labelled.png"), full_page=True)
            with console_running(config, db_url) as console:
                clicked = time.monotonic()
                async with page.expect_navigation(timeout=LABELLING_MS):
                    await page.click("text=Apply labels to the running bot", no_wait_after=True)
                await page.wait_for_selector("text=banks reloaded")
                await page.screenshot(path=str(shots / "applied.png"), full_page=True)

                # The Slack bot (this process) and the running console both answer it the new way.
                before = len(slack.to("chat.postMessage"))
                again, sent = await client.mention(MISSED)
                assert sent.status == 200
                await slack.wait_for("chat.postMessage", before + 1, within=60)
                await channel.dispatcher.drain()
                slack_took = time.monotonic() - clicked
                console.ask(MISSED)
                said = await asyncio.to_thread(console.answer, 60)
                console_took = time.monotonic() - clicked
        finally:
            await browser.close()

        for png in shots.glob("*.png"):
            not_blank(png)
        later = next(s for s in await _sessions(channel) if s.endswith(again))
        assert any(g.endswith("create_ticket") for g in await goal_types(channel, later))
        assert any("opened ticket" in line.lower() for line in said), said
        print(
            f"from the apply click: Slack stand-in answered in {slack_took:.1f} s, the console in {console_took:.1f} s"
        )
        assert slack_took < 30 and console_took < 30  # on a busy shared test machine; the docs give quiet figures
    assert MISSED in (config / "banks/reviewed.yaml").read_text(encoding="utf-8")


class RunningConsole:
    """`agentbot chat` in a process of its own on the same project, spoken to line by line."""

    def __init__(self, process: subprocess.Popen[str]):
        self.process = process
        self.lines: queue.Queue[str] = queue.Queue()
        out = process.stdout
        assert out is not None
        self.reader = threading.Thread(target=lambda: [self.lines.put(line) for line in out], daemon=True)
        self.reader.start()

    def ask(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()

    def answer(self, seconds: float) -> list[str]:
        got: list[str] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                got.append(self.lines.get(timeout=1.5 if got else max(0.1, deadline - time.monotonic())))
            except queue.Empty:
                if got:
                    break
        return got


@contextlib.contextmanager
def console_running(config: Path, db_url: str) -> Iterator[RunningConsole]:
    command = [sys.executable, "-m", "bots.cli", "chat", "--config-dir", str(config), "--data-dir", str(REPO / "data")]
    command += ["--db-url", db_url, "--session", "console:browser-test"]
    with subprocess.Popen(
        command, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    ) as process:
        console = RunningConsole(process)
        try:
            console.ask("hello")  # started, its banks read, before the apply
            assert console.answer(120), "the console answered nothing"
            yield console
        finally:
            assert process.stdin is not None
            process.stdin.close()
            process.wait(timeout=60)
            console.reader.join(timeout=10)


async def _sessions(channel) -> list[str]:  # type: ignore[no-untyped-def]
    rows = await channel.app.store.fetch("SELECT id FROM sessions")
    return [r.id for r in rows]
