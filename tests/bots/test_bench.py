"""`agentbot bench` and `agentbot bench eval` run end to end and report what they measured.

Speed is never asserted here (these machines are shared); what is checked is that every figure the
docs promise is measured from real work: statements, rows and bytes written, trace files.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.bots.test_cli import agentbot
from tests.pg import postgres_server, unavailable_reason


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    """`agentbot bench ...`. A bench builds the app once per configuration and round (about six
    seconds each on a shared 2-core machine), so even a small one is a minute of CPU: the time
    limit only catches a hang."""
    return agentbot("bench", *args, timeout=300)


def test_the_bench_measures_the_shipped_app_beside_tracing_off_and_full_durability() -> None:
    out = bench("--conversations", "12", "--concurrency", "4", "--rounds", "2", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    configs = report["configurations"]
    assert report["rounds"] == 2 and all(len(c["turns_per_s_by_round"]) == 2 for c in configs.values())
    assert list(configs) == ["shipped", "tracing off", "synchronous=FULL"]
    assert (configs["shipped"]["tracing"], configs["shipped"]["synchronous"]) == (True, "normal")
    assert (configs["tracing off"]["tracing"], configs["synchronous=FULL"]["synchronous"]) == (False, "full")
    for config in configs.values():
        # A turn reads state and commits state, its messages and its telemetry row: at least a row each,
        # counted in a phase of their own; the timed phases run without the counting hook.
        counted = config["counted"]
        assert counted["turns"] == 100 and counted["statements_per_turn"] >= 3 and counted["rows_per_turn"] >= 4
        for phase in ("sequential", "concurrent"):
            measured = config[phase]
            assert measured["turns"] == 24
            assert measured["statements_per_turn"] is None and measured["rows_per_turn"] is None
            assert measured["bytes_per_conversation"] > 0 and measured["cpu_ms_per_turn"] > 0
        assert config["peak_rss_mb"] > 0
    assert configs["shipped"]["trace_bytes_per_conversation"] > 0  # a trace file per conversation
    assert configs["tracing off"]["trace_bytes_per_conversation"] == 0
    assert {"tracing_cost_of_throughput", "tracing_cost_of_cpu"} <= set(report["ratios"])
    for config in configs.values():
        # A fresh process's first turns, all 4 sessions at once, before any other phase warmed it.
        assert config["cold"]["turns"] == 100 and 0 < config["cold"]["p50_ms"] <= config["cold"]["max_ms"]
        assert config["ready_s"] > 0
        [memory] = config["memory"]  # read from /proc/self/smaps_rollup
        assert 0 < memory["uss_mb"] <= memory["pss_mb"] <= memory["rss_mb"] <= memory["peak_rss_mb"]
    summary = report["memory"]
    assert summary["workers"] == 1 and summary["total_over_one"] == 1.0
    assert summary["peak_rss_mb"] == configs["shipped"]["peak_rss_mb"]
    assert report["startup"]["wall_s"] >= report["startup"]["cpu_s"] * 0.5 > 0

    table = bench("--conversations", "5", "--concurrency", "2", "--rounds", "1")
    assert table.returncode == 0, table.stderr
    assert "agentbot, shipped (tracing on, NORMAL)" in table.stdout


def test_two_workers_forked_from_one_parent_share_one_database() -> None:
    out = bench("--conversations", "8", "--concurrency", "4", "--workers", "2", "--rounds", "1", "--json")
    assert out.returncode == 0, out.stderr
    configs = json.loads(out.stdout)["configurations"]
    shipped = configs["shipped"]
    assert shipped["workers"] == 2 and shipped["forked"]
    assert shipped["concurrent"]["turns"] == 16  # 8 conversations split over two processes
    # Each worker read its memory while both were alive, and so did their parent; one worker
    # alone is the measure of one.
    assert len(shipped["memory"]) == 2 and len(configs["shipped, one worker"]["memory"]) == 1
    summary = json.loads(out.stdout)["memory"]
    assert summary["forked"] and summary["parent_pss_mb"] > 0
    together = sum(summary["pss_mb_by_worker"]) + summary["parent_pss_mb"]
    assert summary["pss_mb_total"] == pytest.approx(together, abs=0.2)
    assert summary["total_over_one"] == pytest.approx(summary["pss_mb_total"] / summary["one_worker_pss_mb"], abs=0.01)
    # What the parent built is the workers' pages too: each holds less of its own than one worker alone.
    assert max(summary["uss_mb_by_worker"]) < configs["shipped, one worker"]["memory"][0]["uss_mb"]


def test_the_long_bench_reads_memory_at_each_tenth_of_the_run() -> None:
    out = bench("long", "--turns", "40", "--concurrency", "2", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    tenths = report["tenths"]
    assert report["turns"] == 40 and [t["turns"] for t in tenths] == list(range(4, 41, 4))
    assert all(0 < t["anon_mb"] < t["rss_mb"] <= report["peak_rss_mb"] and t["python_blocks"] > 0 for t in tenths)
    assert (report["first_tenth_rss_mb"], report["last_tenth_rss_mb"]) == (tenths[0]["rss_mb"], tenths[-1]["rss_mb"])
    assert report["rss_growth_mb"] == round(tenths[-1]["rss_mb"] - tenths[0]["rss_mb"], 1)
    assert report["database"] == "sqlite"

    table = bench("long", "--turns", "20", "--concurrency", "2")
    assert table.returncode == 0, table.stderr
    assert "RSS after the first tenth" in table.stdout


def test_the_eval_bench_runs_a_generated_suite_through_agentbot_eval() -> None:
    out = bench("eval", "--scenarios", "6", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert (report["scenarios"], report["turns"], report["passed"]) == (6, 12, 6)
    assert report["seconds_total"] > 0 and "ms_per_turn_beyond_startup" in report


@pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")
def test_the_bench_runs_against_postgresql() -> None:
    with postgres_server() as db_url:
        out = bench("--db-url", db_url, "--conversations", "6", "--concurrency", "3", "--rounds", "1", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["database"] == "postgresql+asyncpg"
    assert list(report["configurations"]) == ["shipped", "tracing off"]  # durability is the server's
    assert report["configurations"]["shipped"]["counted"]["statements_per_turn"] >= 3
