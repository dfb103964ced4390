"""Reloading a running bot's banks: build the understanding afresh from config, swap it in between turns.

Three things ask for it: the operator page's button (in the process serving it), SIGHUP, and the
stamp file `agentbot review apply` touches in the project's config folder (`.reload`), which every
bot process on that project watches. The fresh understanding is built on a worker thread (fitting
the models takes a second or two and must not stall the turns in flight); the swap itself waits for
the running turns to end and holds new ones for that moment only (`agent/turn/gate.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from agent.app import App
from agent.review.reload import BankFigures, ReloadReport

log = logging.getLogger("agentbot.reload")

STAMP = ".reload"  # in the config folder: touched by `agentbot review apply`
ANSWER = ".reloaded.json"  # beside it: the last reload's report, for `agentbot review apply` to print


def stamp_path(config_dir: str | Path) -> Path:
    return Path(config_dir) / STAMP


def answer_path(config_dir: str | Path) -> Path:
    return Path(config_dir) / ANSWER


class Reloader:
    """Builds the app's understanding again and swaps it into the router: once per apply in every
    process that answers (Slack, Discord, the console, the admin page).

    One path for all of them: the stamp file's time says which apply a process has read. A process
    reloads when the stamp is newer than what it read (its watcher, every second, and `catch_up`
    before a turn where no watcher runs between turns, the console), and the process that applies
    (the page's button) reloads itself and marks that stamp read, so it is not asked twice.

    Args:
        app: the running app; its router, and its closers (an LLM client built for the old
            understanding is closed once the new one is in).
        build: builds (classifier, rules, templates, planners, closers) from the project's config as
            it is on disk now; called on a worker thread.
        config_dir: the project's config folder, where the stamp file is watched.
    """

    def __init__(self, app: App, build: Callable[[], tuple], config_dir: str | Path):
        self.app = app
        self.build = build
        self.config_dir = Path(config_dir)
        self._one_at_a_time = asyncio.Lock()
        self._asked = asyncio.Event()
        self._why = ""
        self._closers = list(app.closers)  # the understanding's own, as built with the app
        self._seen = _mtime(stamp_path(self.config_dir))  # the banks on disk were read as the app was built

    def figures(self) -> BankFigures:
        return BankFigures.of(self.app.router.p.reader.reader.banks)

    async def reload(self, why: str = "") -> ReloadReport:
        async with self._one_at_a_time:
            before = self.figures()
            classifier, rules, templates, planners, closers = await asyncio.to_thread(self.build)
            await self.app.router.use_understanding(classifier, rules, templates, planners)
            old, self._closers = self._closers, list(closers)
            self.app.closers[:] = [c for c in self.app.closers if c not in old] + self._closers
            for close in old:
                await close()
            report = ReloadReport(before=before, after=self.figures(), why=why)
            log.info("agentbot: %s", report.summary())
            with contextlib.suppress(OSError):
                answer_path(self.config_dir).write_text(report.model_dump_json(), encoding="utf-8")
            return report

    async def apply(self, why: str) -> ReloadReport:
        """Reload here now, and ask every other process on the project through the stamp."""
        stamp = stamp_path(self.config_dir)
        stamp.touch()
        self._seen = _mtime(stamp)
        return await self.reload(why)

    async def catch_up(self) -> ReloadReport | None:
        """Reload when the stamp was touched since this process last read the banks; None when not."""
        now = _mtime(stamp_path(self.config_dir))
        if now == self._seen:
            return None
        self._seen = now
        try:
            return await self.reload("agentbot review apply")
        except Exception as e:  # a bank file broken by hand: the bot keeps the banks it has
            log.error("agentbot: banks not reloaded, the running ones stay: %s", e)
            return None

    def ask(self, why: str) -> None:
        """Ask the watcher for a reload (from a signal handler: no waiting here)."""
        self._why = why
        self._asked.set()

    async def watch(self, interval: float = 1.0) -> None:  # noqa: ASYNC109 (a poll period, not a timeout)
        """Reload when asked (SIGHUP) or when the stamp file changes; runs until cancelled."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._asked.wait(), interval)
            if not self._asked.is_set():
                await self.catch_up()
                continue
            self._asked.clear()
            try:
                await self.reload(self._why)
            except Exception as e:  # a bank file broken by hand: the bot keeps the banks it has
                log.error("agentbot: banks not reloaded, the running ones stay: %s", e)


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime_ns / 1e9
    except OSError:
        return None


@contextlib.asynccontextmanager
async def reloading(app: App) -> AsyncIterator[None]:
    """While a serving process runs: reload on SIGHUP and on `agentbot review apply`'s stamp."""
    reloader = app.reload
    if reloader is None:
        yield
        return
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # no signals off the main thread
        loop.add_signal_handler(signal.SIGHUP, reloader.ask, "SIGHUP")
    task = asyncio.create_task(reloader.watch(), name="agentbot-reload-watch")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signal.SIGHUP)
