"""Every process that answers reads an apply once: a running console picks a label up before its
next turn, and the process whose page applied reloads once, not again on its own stamp."""

from __future__ import annotations

import asyncio
import logging
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent.review.banks import ReviewedBank, include_reviewed
from bots.app import build_app
from bots.cli.review import apply
from bots.reload import reloading
from tests.bots.review_project import MISSED, review_project
from tests.helpers import REPO


def learn(config: Path, sentence: str, label: str) -> None:
    """What a label writes (bots/learning.py), without reading a corpus."""
    bank = ReviewedBank.open(config)
    assert bank.add(sentence, label, "review test, console, 2026-11-29")
    bank.save()
    include_reviewed(config / "nlu.yaml")


def answers(out: queue.Queue[str], seconds: float) -> list[str]:
    """The lines the console printed, until it has been quiet a moment after the first."""
    lines: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            lines.append(out.get(timeout=1.5 if lines else max(0.1, deadline - time.monotonic())))
        except queue.Empty:
            if lines:
                break
    return lines


def test_a_running_console_answers_a_label_applied_while_it_runs(tmp_path: Path) -> None:
    config, _ = review_project(tmp_path)
    command = [sys.executable, "-m", "bots.cli", "chat", "--config-dir", str(config), "--data-dir", str(REPO / "data")]
    command += ["--db-url", f"sqlite:///{tmp_path / 'chat.db'}", "--session", "console:reload"]
    out: queue.Queue[str] = queue.Queue()
    with subprocess.Popen(
        command, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    ) as console:
        assert console.stdin is not None and console.stdout is not None
        lines = console.stdout
        reader = threading.Thread(target=lambda: [out.put(line) for line in lines], daemon=True)
        reader.start()
        try:
            console.stdin.write(MISSED + "\n")
            before = answers(out, 120)
            assert before and "opened ticket" not in " ".join(before).lower(), before

            learn(config, MISSED, "create_ticket")
            started = time.monotonic()
            assert apply(str(config), 0.0) == 0  # touches the stamp; the console has no answer to wait for
            console.stdin.write(MISSED + "\n")
            after = answers(out, 120)
            took = time.monotonic() - started
            assert any("opened ticket" in line.lower() for line in after), after
            assert took < 60, took  # on a busy test machine
        finally:
            console.stdin.close()
            console.wait(timeout=60)
            reader.join(timeout=10)
    assert console.returncode == 0


async def test_the_process_that_applies_reloads_once(
    tmp_path: Path, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    config, _ = review_project(tmp_path)
    caplog.set_level(logging.INFO, logger="agentbot.reload")
    async with build_app(config, REPO / "data", db_url, env={}) as app, reloading(app):
        assert app.reload is not None
        learn(config, MISSED, "create_ticket")
        report = await app.reload.apply("the operator page")
        assert report.after.sentences == report.before.sentences + 1
        await asyncio.sleep(3)  # three turns of the watcher, which sees the stamp this process touched
    reloads = [r for r in caplog.records if "banks reloaded" in r.getMessage()]
    assert len(reloads) == 1, [r.getMessage() for r in reloads]
