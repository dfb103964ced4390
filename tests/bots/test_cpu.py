"""Pinning to one CPU is opt-in: `auto` claims a CPU per process, threads included, unless a cgroup
quota is set; `off`, the default, leaves the process alone."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from agent.errors import ConfigError
from bots.cpu import cpu_quota, pin_to_one_cpu
from bots.testing.slack_standin import SlackStandIn
from tests.bots.test_slack_cli import PROXY, free_port, wait_until_listening
from tests.helpers import REPO
from tests.slack_harness import SECRET

# A worker as the servers start one: a thread already running (the SQLite thread is started by
# build_app), then pinned; it reports its CPU and every thread's CPUs, and holds its claim until told.
# Workers get lock files of the test's own (AGENTBOT_CPU_LOCK_DIR), so agentbot processes elsewhere
# on the machine take no part, and an empty cgroup folder, so the host's own CPU quota (if any) does not.
WORKER = textwrap.dedent(
    """
    import json, os, sys, threading
    from bots.cpu import pin_to_one_cpu
    if os.environ.get("TEST_CPUS"):  # the CPUs this worker may use, as a container's cpuset would
        os.sched_setaffinity(0, set(json.loads(os.environ["TEST_CPUS"])))
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
    cpu = pin_to_one_cpu(dict(os.environ))
    threads = {tid: sorted(os.sched_getaffinity(int(tid))) for tid in os.listdir("/proc/self/task")}
    print(json.dumps({"cpu": cpu, "threads": threads}), flush=True)
    sys.stdin.readline()
    """
)

linux = pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is a Linux call")


def auto(tmp_path: Path) -> dict[str, str]:
    """`auto` with lock files and a cgroup folder (no quota) of the test's own."""
    (tmp_path / "cgroup").mkdir(exist_ok=True)
    locks, cgroup = str(tmp_path / "locks"), str(tmp_path / "cgroup")
    return {"AGENTBOT_CPU": "auto", "AGENTBOT_CPU_LOCK_DIR": locks, "AGENTBOT_CGROUP_DIR": cgroup}


def start_worker(**env: str) -> tuple[subprocess.Popen[str], dict]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WORKER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )
    assert proc.stdout is not None
    return proc, json.loads(proc.stdout.readline())


def stop(procs: list[subprocess.Popen[str]]) -> None:
    for proc in procs:
        proc.communicate("\n", timeout=30)


@linux
def test_each_worker_claims_a_cpu_of_its_own_with_all_its_threads_and_extra_ones_stay_unpinned(
    tmp_path: Path,
) -> None:
    allowed = sorted(os.sched_getaffinity(0))[:2]  # two CPUs, however many the machine has
    if len(allowed) < 2:
        pytest.skip("one CPU: nothing to pin")
    env = {**auto(tmp_path), "TEST_CPUS": json.dumps(allowed)}
    procs, cpus = [], []
    try:
        for _ in allowed:
            proc, report = start_worker(**env)
            procs.append(proc)
            cpus.append(report["cpu"])
            assert all(affinity == [report["cpu"]] for affinity in report["threads"].values())
        assert sorted(cpus) == allowed  # no two workers on one CPU
        proc, report = start_worker(**env)  # more workers than CPUs
        procs.append(proc)
        assert report["cpu"] is None and all(a == allowed for a in report["threads"].values())
    finally:
        stop(procs)
    proc, report = start_worker(**env)  # the claims ended with their processes
    stop([proc])
    assert report["cpu"] in allowed


@linux
def test_a_worker_that_cannot_see_the_others_claims_takes_the_least_busy_cpu(tmp_path: Path) -> None:
    """One container per worker: no shared lock files, so the load decides. A process keeps the
    first CPU busy; the worker takes another."""
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("one CPU: nothing to choose")
    spin = f"import os\nos.sched_setaffinity(0, {{{allowed[0]}}})\nwhile True: pass"
    busy = subprocess.Popen([sys.executable, "-c", spin])
    try:
        time.sleep(0.3)
        idle = idle_share(allowed[1:])
        proc, report = start_worker(**auto(tmp_path))  # lock files of its own
        stop([proc])
    finally:
        busy.kill()
        busy.wait()
    if idle < 0.2:  # other jobs fill every CPU: the load cannot tell them apart (seen on shared CI)
        pytest.skip(f"the machine's other CPUs are busy too ({idle:.0%} idle): nothing to choose by")
    assert report["cpu"] in allowed[1:]


def idle_share(cpus: list[int], seconds: float = 0.3) -> float:
    """How idle the least busy of `cpus` was over `seconds` (/proc/stat), 0 to 1."""

    def ticks() -> dict[int, tuple[int, int]]:
        out = {}
        for line in Path("/proc/stat").read_text().splitlines():
            name, *fields = line.split() or [""]
            if name.startswith("cpu") and name[3:].isdigit():
                values = [int(f) for f in fields]
                out[int(name[3:])] = (sum(values), values[3] + values[4])
        return out

    before = ticks()
    time.sleep(seconds)
    after = ticks()
    shares = [
        (after[c][1] - before[c][1]) / max(1, after[c][0] - before[c][0]) for c in cpus if c in before and c in after
    ]
    return max(shares, default=1.0)


@linux
def test_off_and_the_default_leave_the_process_on_every_cpu(tmp_path: Path) -> None:
    for env in ({"AGENTBOT_CPU": "off"}, {}):
        proc, report = start_worker(**env, AGENTBOT_CPU_LOCK_DIR=str(tmp_path))
        stop([proc])
        assert report["cpu"] is None
        assert all(a == sorted(os.sched_getaffinity(0)) for a in report["threads"].values())


@linux
@pytest.mark.parametrize(
    ("files", "quota"),
    [
        ({"cpu.max": "200000 100000\n"}, 2.0),
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "150000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1.5),
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({}, None),
    ],
)
def test_a_cgroup_quota_is_read_from_cgroup_files(tmp_path: Path, files: dict[str, str], quota: float | None) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cpu_quota(tmp_path) == quota


@linux
def test_a_cpu_the_process_may_not_use_or_a_word_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="AGENTBOT_CPU: CPU 4096 is not one this process may use"):
        pin_to_one_cpu({"AGENTBOT_CPU": "4096"})
    with pytest.raises(ConfigError, match="AGENTBOT_CPU: `auto`, `off` or a CPU number, not 'fast'"):
        pin_to_one_cpu({"AGENTBOT_CPU": "fast"})


def thread_affinities(pid: int) -> list[list[int]]:
    return [sorted(os.sched_getaffinity(int(tid))) for tid in os.listdir(f"/proc/{pid}/task")]


@linux
@pytest.mark.parametrize(
    ("cpu", "quota", "pinned"),
    [(None, None, False), ("auto", "200000 100000", False), ("auto", None, True)],
    ids=["shipped-defaults", "auto-under-a-cgroup-quota", "auto-on-a-dedicated-machine"],
)
async def test_agentbot_slack_leaves_its_affinity_alone_unless_asked_and_never_under_a_quota(
    tmp_path: Path, db_url: str, slack: SlackStandIn, cpu: str | None, quota: str | None, pinned: bool
) -> None:
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("one CPU: nothing to pin")
    cgroup = tmp_path / "cgroup"
    cgroup.mkdir()
    if quota:
        (cgroup / "cpu.max").write_text(quota + "\n")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in PROXY and not k.startswith(("AGENTBOT_", "SLACK_"))}
    env |= {"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": f"{slack.url}/api/"}
    env |= {"AGENTBOT_CPU_LOCK_DIR": str(tmp_path / "locks"), "AGENTBOT_CGROUP_DIR": str(cgroup)}
    if cpu:
        env["AGENTBOT_CPU"] = cpu
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bots.cli", "slack", "--port", str(port), "--db-url", db_url, cwd=REPO, env=env
    )
    try:
        await wait_until_listening(port)
        affinities = thread_affinities(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 30)
    assert len(affinities) > 1  # the event loop's thread and the database's, at least
    if pinned:
        assert all(len(a) == 1 for a in affinities) and len({a[0] for a in affinities}) == 1
    else:
        assert all(a == allowed for a in affinities)
