"""Pinning a serving process to one CPU, opt-in (Linux; `AGENTBOT_CPU`, default `off`).

A process's threads (the event loop, the SQLite thread, the trace writer) take turns at CPython's
interpreter lock, so one process runs one CPU's worth of Python. Spread over several CPUs, every
hand-over of the lock wakes another CPU: on a dedicated 2-CPU VM, 50 concurrent sessions ran 0.79
ms of CPU per turn pinned against 1.13 unpinned (in-process bench turns). That is about 0.3 ms a
turn, for a bot whose turns wait on chat platforms and LLMs, so it is off unless asked for: on a
shared host a pinned process can never move off a busy core, and every thread it starts (the
embedding model's too) inherits the mask.

`auto` is for a machine the bot has to itself: each process claims a CPU of its own through a lock
file per CPU in `AGENTBOT_CPU_LOCK_DIR` (a folder every worker on the machine shares; not the
temporary folder, which each container has its own of), taking the least busy over a tenth of a
second. Under a cgroup CPU quota (a Kubernetes CPU limit, `docker --cpus`) it never pins: a quota is
time on any CPU, not a set of cores, so binding to one would cut a 2-CPU limit to 1.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path

from agent.errors import ConfigError

log = logging.getLogger("agentbot")
FIELD = "AGENTBOT_CPU"
DEFAULT_LOCK_DIR = "var/cpu-locks"
DEFAULT_CGROUP_DIR = "/sys/fs/cgroup"
_claims: list[int] = []  # the claimed CPU's lock file, open for the life of the process
_pinned: list[int] = []


def pin_to_one_cpu(env: Mapping[str, str]) -> int | None:
    """Pin every thread of this process to one CPU and return it; None when left unpinned.

    `AGENTBOT_CPU`: `off` (the default), `auto` (the least busy CPU no other agentbot process here
    holds; none free, one CPU allowed, or a cgroup CPU quota leaves the process as it is), or a CPU
    number. `AGENTBOT_CPU_LOCK_DIR` holds the lock files (default `var/cpu-locks`);
    `AGENTBOT_CGROUP_DIR` is where the cgroup files are read (default `/sys/fs/cgroup`).
    Blocks for a tenth of a second in `auto`: call it before the event loop runs, or in a thread.
    """
    setting = env.get("AGENTBOT_CPU", "off").strip().lower() or "off"
    if setting == "off" or not hasattr(os, "sched_setaffinity"):
        return None
    if _pinned:
        return _pinned[0]
    allowed = sorted(os.sched_getaffinity(0))
    if setting == "auto":
        if len(allowed) < 2:
            return None
        quota = cpu_quota(Path(env.get("AGENTBOT_CGROUP_DIR") or DEFAULT_CGROUP_DIR))
        if quota is not None:
            log.info("agentbot: a cgroup CPU quota of %.2f CPUs is set; this process is not pinned", quota)
            return None
        lock_dir = Path(env.get("AGENTBOT_CPU_LOCK_DIR") or DEFAULT_LOCK_DIR)
        cpu = _claim(lock_dir, _least_busy_first(allowed))
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


def cpu_quota(cgroup_dir: Path) -> float | None:
    """The CPUs' worth of time the cgroup allows (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us`), None if unlimited.

    Looked for at the cgroup root (what a container sees) and at this process's own cgroup path.
    """
    for folder in _cgroup_folders(cgroup_dir):
        with contextlib.suppress(OSError, ValueError):
            quota, period = (folder / "cpu.max").read_text().split()[:2]
            if quota != "max":
                return int(quota) / int(period)
        for v1 in (folder / "cpu", folder / "cpu,cpuacct", folder):
            with contextlib.suppress(OSError, ValueError):
                quota_us = int((v1 / "cpu.cfs_quota_us").read_text())
                if quota_us > 0:
                    return quota_us / int((v1 / "cpu.cfs_period_us").read_text())
    return None


def _cgroup_folders(root: Path) -> list[Path]:
    folders = [root]
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            path = line.split(":", 2)[-1].strip("/")
            if path:
                folders.append(root / path)
    return folders


def _claim(lock_dir: Path, cpus: list[int]) -> int | None:
    import fcntl

    try:
        lock_dir.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # no shared folder to coordinate in: better unpinned than two on one CPU
    for cpu in cpus:
        path = lock_dir / f"agentbot-cpu-{cpu}.lock"
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)  # read-only: another user's file locks too
        except OSError:
            return None
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
