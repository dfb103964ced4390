"""One CPU per serving process (Linux; `AGENTBOT_CPU`).

A process's threads (the event loop, the SQLite thread, the trace writer) take turns at CPython's
interpreter lock, so one process runs one CPU's worth of Python. Spread over several CPUs, every
hand-over of the lock wakes another CPU: on a 2-CPU VM, 50 concurrent sessions ran 1,260 turns/s
pinned to one CPU against 900 unpinned, at 0.79 ms of CPU per turn against 1.13 (in-process bench
turns, interleaved runs). More CPUs are put to work by more processes (`--workers`), and each
claims a CPU of its own: a lock file per CPU in the system's temporary folder, held while the
process lives, so two workers on one machine never share one. Of the free CPUs it takes the one
least busy over a tenth of a second, so processes that cannot see each other's lock files (one
container each) still spread over a machine's CPUs rather than all taking the first.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from agent.errors import ConfigError

log = logging.getLogger("agentbot")
FIELD = "AGENTBOT_CPU"
_claims: list[int] = []  # the claimed CPU's lock file, open for the life of the process
_pinned: list[int] = []


def pin_to_one_cpu(env: Mapping[str, str]) -> int | None:
    """Pin every thread of this process to one CPU and return it; None when left unpinned.

    `AGENTBOT_CPU`: `auto` (the default: the least busy CPU no other agentbot process here holds;
    none free, or only one CPU allowed, leaves the process as it is), `off`, or a CPU number.
    Blocks for a tenth of a second in `auto`: call it before the event loop runs, or in a thread.
    """
    setting = env.get("AGENTBOT_CPU", "auto").strip().lower() or "auto"
    if setting == "off" or not hasattr(os, "sched_setaffinity"):
        return None
    if _pinned:
        return _pinned[0]
    allowed = sorted(os.sched_getaffinity(0))
    if setting == "auto":
        if len(allowed) < 2:
            return None
        cpu = _claim(_least_busy_first(allowed))
        if cpu is None:
            log.info("agentbot: every CPU is held by another agentbot process; this one is not pinned")
            return None
    else:
        try:
            cpu = int(setting)
        except ValueError:
            raise ConfigError("environment", f"`auto`, `off` or a CPU number, not {setting!r}", field=FIELD) from None
        if cpu not in allowed:
            raise ConfigError("environment", f"CPU {cpu} is not one this process may use: {allowed}", field=FIELD)
    _pin_threads(cpu)
    _pinned.append(cpu)
    log.info("agentbot: pinned to CPU %d (AGENTBOT_CPU=%s)", cpu, setting)
    return cpu


def _claim(cpus: list[int]) -> int | None:
    import fcntl

    for cpu in cpus:
        path = Path(tempfile.gettempdir()) / f"agentbot-cpu-{cpu}.lock"
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)  # read-only: another user's file locks too
        except OSError:
            return None  # no shared folder to coordinate in: better unpinned than two on one CPU
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        _claims.append(fd)
        return cpu
    return None


def _least_busy_first(cpus: list[int], seconds: float = 0.1) -> list[int]:
    """The CPUs in order of the time they spent busy over `seconds` (/proc/stat); as given elsewhere."""
    before = _busy_ticks()
    if not before:
        return cpus
    time.sleep(seconds)
    after = _busy_ticks()
    return sorted(cpus, key=lambda cpu: (after.get(cpu, 0) - before.get(cpu, 0), cpu))


def _busy_ticks() -> dict[int, int]:
    try:
        lines = Path("/proc/stat").read_text().splitlines()
    except OSError:
        return {}
    out = {}
    for line in lines:
        name, *fields = line.split() or [""]
        if name.startswith("cpu") and name[3:].isdigit() and len(fields) >= 5:
            ticks = [int(f) for f in fields]
            out[int(name[3:])] = sum(ticks) - ticks[3] - ticks[4]  # all but idle and iowait
    return out


def _pin_threads(cpu: int) -> None:
    # Affinity is per thread on Linux: the threads already running are pinned one by one, and
    # those started later inherit it from the thread that starts them.
    os.sched_setaffinity(0, {cpu})
    with contextlib.suppress(OSError):
        for tid in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError):  # a thread that ended meanwhile
                os.sched_setaffinity(int(tid), {cpu})
