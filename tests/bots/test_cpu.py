"""One CPU per serving process: each claims its own, threads included, and `off` leaves it alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from agent.errors import ConfigError
from bots.cpu import pin_to_one_cpu

# A worker as the servers start one: a thread already running (the SQLite thread is started by
# build_app), then pinned; it reports its CPU and every thread's CPUs, and holds its claim until told.
# Workers get lock files of the test's own (TMPDIR), so agentbot processes elsewhere on the machine
# take no part.
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
    env = {"AGENTBOT_CPU": "auto", "TMPDIR": str(tmp_path), "TEST_CPUS": json.dumps(allowed)}
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
        proc, report = start_worker(TMPDIR=str(tmp_path))  # lock files of its own
        stop([proc])
    finally:
        busy.kill()
        busy.wait()
    assert report["cpu"] in allowed[1:]


@linux
def test_off_leaves_the_process_on_every_cpu(tmp_path: Path) -> None:
    proc, report = start_worker(AGENTBOT_CPU="off", TMPDIR=str(tmp_path))
    stop([proc])
    assert report["cpu"] is None
    assert all(a == sorted(os.sched_getaffinity(0)) for a in report["threads"].values())


@linux
def test_a_cpu_the_process_may_not_use_or_a_word_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="AGENTBOT_CPU: CPU 4096 is not one this process may use"):
        pin_to_one_cpu({"AGENTBOT_CPU": "4096"})
    with pytest.raises(ConfigError, match="AGENTBOT_CPU: `auto`, `off` or a CPU number, not 'fast'"):
        pin_to_one_cpu({"AGENTBOT_CPU": "fast"})
