"""Pre-fork serving: one parent builds the app, then forks the workers that serve it.

A worker's largest part is read and never written: the modules, the config, the example banks and
the models fitted over them. The parent builds the whole app (nothing in it holds a connection or
a thread until its first use), does the first-time work that needs neither (`App.preload`: the
model's reads), moves what it made out of the cyclic collector's reach (`gc.freeze`, so that no
collection writes to those pages) and forks; each worker then opens its own connections, threads
and event loop. A page stays the parent's, counted once between all of them in their PSS, until a
worker writes to it.

The parent serves nothing. It restarts a worker that dies, gives up when workers keep dying right
after they start (a fault every restart would meet again), and on SIGTERM or SIGINT asks every
worker to stop the same way, killing those still running after a grace period. POSIX only: `fork`
is what shares the pages.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Callable

log = logging.getLogger("agentbot.workers")

# A worker that dies sooner than this after it started counts towards giving up.
MIN_UPTIME_S = 5.0
# That many such deaths in a row and the parent stops every worker and fails.
QUICK_DEATHS = 5
# How long a worker has to finish its turns after SIGTERM before it is killed.
GRACE_S = 30.0
POLL_S = 0.1


def can_fork() -> bool:
    return hasattr(os, "fork")


def fork_worker(index: int, work: Callable[[int], int]) -> int:
    """Fork a process that runs `work(index)` and exits with what it returns (1 on an exception);
    returns its pid. The child never returns into the caller's frames."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)  # the parent's handlers are the parent's
        code = work(index)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:  # noqa: BLE001 - a worker's failure is its exit code; the parent logs it
        log.exception("worker %d failed", index)
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        # Not sys.exit: the parent's own cleanup (atexit, open `finally` blocks) is not the child's.
        os._exit(code)
    return pid  # never reached


def _described(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exited with {os.waitstatus_to_exitcode(status)}"


class Supervisor:
    """Keeps `count` forked workers running until told to stop.

    Args:
        count: how many workers.
        work: what a worker runs, given its index (0 to count - 1, kept by a restarted worker so
            that a name derived from it, such as its leases', survives the restart); its return
            value is the worker's exit code.
        grace_s: seconds a worker has to stop after SIGTERM before it is killed.
        quick_deaths: how many workers in a row may die within MIN_UPTIME_S of starting before
            the parent gives up.
    """

    def __init__(
        self, count: int, work: Callable[[int], int], grace_s: float = GRACE_S, quick_deaths: int = QUICK_DEATHS
    ):
        self.count = count
        self.work = work
        self.grace_s = grace_s
        self.quick_deaths = quick_deaths
        self.workers: dict[int, tuple[int, float]] = {}  # pid -> (index, started)
        self._stopping: float | None = None  # when the stop began
        self._signalled: int | None = None  # set by the signal handler, acted on by the loop
        self._quick_deaths = 0  # in a row
        self._failed = False

    def _start(self, index: int) -> None:
        pid = fork_worker(index, self.work)
        self.workers[pid] = (index, time.monotonic())
        log.info("agentbot workers: worker %d started (pid %d)", index, pid)

    def _on_signal(self, signum: int, _frame: object) -> None:
        self._signalled = signum  # only noted here: the loop stops the workers within POLL_S

    def _stop(self, why: str) -> None:
        if self._stopping is None:
            self._stopping = time.monotonic()
            log.info("agentbot workers: %s, stopping %d workers", why, len(self.workers))
            self._signal_all(signal.SIGTERM)

    def _signal_all(self, sig: signal.Signals) -> None:
        for pid in self.workers:
            with contextlib.suppress(ProcessLookupError):  # it ended already: reaped on the next pass
                os.kill(pid, sig)

    def run(self) -> int:
        """Start the workers and supervise them; 0 once they stopped on a signal, 1 when they kept dying."""
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            for index in range(self.count):
                self._start(index)
            while self.workers:
                if self._signalled is not None:
                    self._stop(signal.Signals(self._signalled).name)
                pid, status = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    self._overdue()
                    time.sleep(POLL_S)
                elif pid in self.workers:
                    self._ended(pid, status)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return 1 if self._failed else 0

    def _overdue(self) -> None:
        """Stopping, and the grace period over: the workers still running are killed."""
        if self._stopping is not None and time.monotonic() - self._stopping > self.grace_s:
            log.warning("agentbot workers: %d still running after %.0f s: killed", len(self.workers), self.grace_s)
            self._signal_all(signal.SIGKILL)
            self._stopping = time.monotonic()

    def _ended(self, pid: int, status: int) -> None:
        """A worker ended: when not stopping, it is started again under its index."""
        index, started = self.workers.pop(pid)
        if self._stopping is not None:
            return
        lived = time.monotonic() - started
        log.warning("agentbot workers: worker %d (pid %d) %s after %.1f s", index, pid, _described(status), lived)
        self._quick_deaths = self._quick_deaths + 1 if lived < MIN_UPTIME_S else 0
        if self._quick_deaths >= self.quick_deaths:
            log.error("agentbot workers: %d workers died right after starting: stopping", self._quick_deaths)
            self._failed = True
            self._stop("workers keep dying")
            return
        if self._quick_deaths:
            time.sleep(min(float(self._quick_deaths), MIN_UPTIME_S))  # no busy loop of forks
        if self._signalled is None:  # a stop may have come during the pause
            self._start(index)
