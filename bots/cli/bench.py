"""`agentbot bench`: full turns through the real router, as shipped, to compare two setups.

Each conversation is two turns ("I want to check my order" -> "O-12345"), so every turn loads
state and history, classifies, updates goals, and commits state, messages and telemetry; the
second also runs the tool. Configurations, each in a fresh process on its own database, run in
`--rounds` interleaved rounds (shipped, tracing off, FULL, shipped, ...) and reported as the median
of the rounds, since two processes of the same build can differ by a quarter on a shared machine:

- shipped: the settings as they ship (tracing on, SQLite synchronous=NORMAL);
- tracing off: the shipped settings without traces, so the difference is what tracing costs;
- synchronous=FULL: the shipped app syncing every commit to disk (SQLite only).

To compare two setups (a database, a worker count, a store's config), run it once for each, or
alternate two checkouts in the same minutes: a shared machine moves between runs. Each process
settles its heap as the servers do (bots/serving.py). "conc p99" is the loaded p99: a turn's
latency with `--concurrency` sessions in flight on one event loop.

Beside the latencies it reports each process's memory (peak RSS, and PSS/USS, which count pages
the workers share, such as the model's memory-mapped arrays, once between them), how a fresh
process fares when `--concurrency` conversations meet it at once (its first 100 turns against the
warm loaded p50), and the start-up time of `agentbot chat -m` on one core, process start to answer.
With `--workers N`, the workers are forked from a parent that loaded what they share, as
`agentbot slack --workers N` runs them, and a one-worker run of the shipped settings is the measure
of one worker's memory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bots.cli.bench_run import COLD_TURNS, PHASES, Config, run_config, traces_bytes

ONE_WORKER = "shipped, one worker"
STARTUP_MESSAGE = "where is O-12345"


def configurations(args: argparse.Namespace, tmp: Path, round_no: int = 0) -> list[Config]:
    sqlite = not args.db_url or args.db_url.startswith("sqlite")
    runs = [("shipped", True, "normal", args.workers), ("tracing off", False, "normal", args.workers)]
    if sqlite:
        runs.append(("synchronous=FULL", True, "full", args.workers))
    if args.workers > 1:
        runs.append((ONE_WORKER, True, "normal", 1))
    out = []
    for label, tracing, synchronous, workers in runs:
        slug = label.replace(" ", "-").replace("=", "-") + f"-r{round_no}"
        out.append(
            Config(
                label=label,
                db_url=args.db_url or f"sqlite+aiosqlite:///{tmp / slug}.db",
                traces_dir=str(tmp / f"traces-{slug}"),
                tracing=tracing,
                synchronous=synchronous,
                conversations=args.conversations,
                concurrency=args.concurrency,
                workers=workers,
                config_dir=str(args.config_dir) if args.config_dir else None,
                data_dir=str(args.data_dir) if args.data_dir else None,
            )
        )
    return out


def measure(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    report: dict[str, Any] = {
        "conversations": args.conversations,
        "concurrency": args.concurrency,
        "workers": args.workers,
        "database": "sqlite" if not args.db_url or args.db_url.startswith("sqlite") else args.db_url.split(":")[0],
        "rounds": args.rounds,
        "configurations": {},
    }
    runs: dict[str, list[dict[str, Any]]] = {}
    for round_no in range(args.rounds):
        for config in configurations(args, tmp, round_no):
            result = run_config(config)
            result.update(tracing=config.tracing, synchronous=config.synchronous)
            result["trace_bytes_per_conversation"] = round(
                traces_bytes(config.traces_dir) / (2 * args.conversations + 50 * args.workers)
            )
            runs.setdefault(config.label, []).append(result)
    report["configurations"] = {label: median_of(results) for label, results in runs.items()}
    report["startup"] = startup(args, tmp)
    report["memory"] = memory_summary(report["configurations"])
    shipped, off = report["configurations"]["shipped"], report["configurations"]["tracing off"]
    on_rate, off_rate = shipped["concurrent"]["turns_per_s"], off["concurrent"]["turns_per_s"]
    report["ratios"] = {
        "tracing_cost_of_throughput": round(1 - on_rate / off_rate, 3),
        "tracing_cost_of_cpu": round(
            shipped["concurrent"]["cpu_ms_per_turn"] / off["concurrent"]["cpu_ms_per_turn"] - 1, 3
        ),
    }
    return report


def startup(args: argparse.Namespace, tmp: Path, runs: int = 3) -> dict[str, Any]:
    """`agentbot chat -m` in a new process pinned to one core, from start to its answer: the
    median of `runs` wall times, and of their CPU times (steadier on a shared machine)."""
    command = [sys.executable, "-m", "bots.cli", "chat", "-m", STARTUP_MESSAGE]
    command += ["--db-url", args.db_url or f"sqlite+aiosqlite:///{tmp / 'startup.db'}"]
    for flag, value in (("--config-dir", args.config_dir), ("--data-dir", args.data_dir)):
        if value:
            command += [flag, str(value)]
    core = min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    walls, cpus = [], []
    for _ in range(runs + 1):  # the first run may make the model's cache files: not counted
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        out = subprocess.run(
            command,
            capture_output=True,
            text=True,
            check=False,
            preexec_fn=(lambda: os.sched_setaffinity(0, {core})) if core is not None else None,  # noqa: PLW1509
        )
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if out.returncode != 0:
            raise RuntimeError(f"agentbot chat failed: {out.stderr[-2000:]}")
        walls.append(wall)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return {
        "command": f"agentbot chat -m {STARTUP_MESSAGE!r}, on one core",
        "wall_s": round(statistics.median(walls[1:]), 3),
        "cpu_s": round(statistics.median(cpus[1:]), 3),
    }


def memory_summary(configurations: dict[str, Any]) -> dict[str, Any]:
    """The shipped workers' PSS together, with their parent's when they were forked from one,
    against one worker's (the one-worker run with several): what they take of the machine."""
    shipped = configurations["shipped"]
    alone = configurations.get(ONE_WORKER, shipped)
    parent = shipped.get("parent_memory")
    parent_pss = parent["pss_mb"] if parent else 0.0
    total = round(sum(m["pss_mb"] for m in shipped["memory"]) + parent_pss, 1)
    one = max((m["pss_mb"] for m in alone["memory"]), default=0.0)
    return {
        "peak_rss_mb": shipped["peak_rss_mb"],
        "workers": len(shipped["memory"]),
        "forked": bool(shipped.get("forked")),
        "pss_mb_by_worker": [m["pss_mb"] for m in shipped["memory"]],
        "pss_anon_mb_by_worker": [m["pss_anon_mb"] for m in shipped["memory"]],
        "uss_mb_by_worker": [m["uss_mb"] for m in shipped["memory"]],
        "parent_pss_mb": parent_pss if parent else None,
        "pss_mb_total": total,
        "one_worker_pss_mb": one,
        "total_over_one": round(total / one, 2) if one else None,
    }


def median_of(results: list[dict[str, Any]]) -> dict[str, Any]:
    """One configuration's rounds as one: each figure the median of the rounds, peak RSS the
    highest, and every round's throughput kept so the spread shows."""
    out = dict(results[0])
    for phase in PHASES:
        out[phase] = {
            key: statistics.median(r[phase][key] for r in results)
            if all(isinstance(r[phase][key], int | float) for r in results)
            else results[0][phase][key]
            for key in results[0][phase]
        }
    out["trace_bytes_per_conversation"] = statistics.median(r["trace_bytes_per_conversation"] for r in results)
    out["peak_rss_mb"] = max(r["peak_rss_mb"] for r in results)
    out["cold"] = {key: statistics.median(r["cold"][key] for r in results) for key in results[0]["cold"]}
    out["ready_s"] = statistics.median(r["ready_s"] or 0.0 for r in results)
    out["turns_per_s_by_round"] = [r["concurrent"]["turns_per_s"] for r in results]
    return out


def run_bench(args: argparse.Namespace) -> int:
    # On the disk the app keeps its database and traces on (var/, as shipped), not the system's
    # temporary folder, which may be another filesystem (a tmpfs, an overlay) with costs of its own.
    home = Path("var")
    home.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="agentbot-bench-", dir=home) as tmp:
        report = measure(args, Path(tmp))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print_report(report)
    return 0


COLUMNS: tuple[tuple[str, int, str], ...] = (
    ("p50 ms", 8, ".3f"),
    ("p99 ms", 8, ".2f"),
    ("turns/s", 9, ",.0f"),
    ("conc p50", 9, ",.1f"),
    ("conc p99", 9, ",.1f"),
    ("CPU ms", 8, ".3f"),
    ("stmts", 7, ".1f"),
    ("rows", 6, ".1f"),
    ("B/conv", 8, ",.0f"),
    ("trace B", 9, ",.0f"),
    ("RSS MB", 8, ".1f"),
)


def _row(name: str, cells: list[Any]) -> str:
    out = f"{name:<40}"
    for (_, width, fmt), cell in zip(COLUMNS, cells, strict=True):
        out += f"{'-' if cell is None else format(cell, fmt):>{width}}"
    return out


NOTES = {"shipped": " (tracing on, NORMAL)"}


def print_report(report: dict[str, Any]) -> None:
    workers = f", {report['workers']} worker processes" if report["workers"] > 1 else ""
    print(
        f"agentbot bench: {report['conversations']} two-turn order conversations per phase, "
        f"{report['concurrency']} concurrent sessions{workers}, {report['database']} (rules mode, every stage, "
        f"telemetry and messages stored); the median of {report['rounds']} interleaved rounds"
    )
    print(f"{'':<40}" + "".join(f"{title:>{width}}" for title, width, _ in COLUMNS))
    in_flight = f"({report['concurrency']} sessions in flight)"
    print(f"{'':<40}{'(sequential)':>16}{in_flight:>27}{'per turn':>15}")
    for label, r in report["configurations"].items():
        seq, conc = r["sequential"], r["concurrent"]
        name = f"agentbot, {label}" + NOTES.get(label, "")
        size = conc["bytes_per_conversation"] or seq["bytes_per_conversation"]
        cells = [seq["p50_ms"], seq["p99_ms"], conc["turns_per_s"], conc["p50_ms"], conc["p99_ms"]]
        cells.append(conc.get("cpu_ms_per_turn"))
        cells += [r["counted"]["statements_per_turn"], r["counted"]["rows_per_turn"], size]
        print(_row(name, [*cells, r["trace_bytes_per_conversation"] or None, r["peak_rss_mb"]]))
    ratios = report["ratios"]
    print(
        f"tracing costs {ratios['tracing_cost_of_throughput']:.0%} of "
        f"throughput and {ratios.get('tracing_cost_of_cpu', 0):.0%} more CPU per turn"
    )
    spread = "; ".join(
        f"{label} {', '.join(f'{v:,.0f}' for v in r['turns_per_s_by_round'])}"
        for label, r in report["configurations"].items()
    )
    print(f"turns/s by round: {spread}")
    loaded = "; ".join(
        f"{label} {r['concurrent']['p99_ms'] / r['concurrent']['p50_ms']:.1f}x"
        for label, r in report["configurations"].items()
        if r["concurrent"]["p50_ms"]
    )
    print(f"loaded p99 / loaded p50 (target <= 3x): {loaded}")
    cold = "; ".join(
        f"{label} {r['cold']['max_ms']:,.1f} ms = {r['cold']['max_ms'] / r['concurrent']['p50_ms']:.1f}x"
        for label, r in report["configurations"].items()
        if r["concurrent"]["p50_ms"]
    )
    sessions = report["concurrency"]
    print(f"a fresh process's first {COLD_TURNS} turns, {sessions} sessions: slowest / warm loaded p50 (<= 5x): {cold}")
    mem = report["memory"]
    parent = f" and their parent's {mem['parent_pss_mb']:.1f}" if mem["parent_pss_mb"] is not None else ""
    print(
        f"memory, shipped: peak RSS {mem['peak_rss_mb']:.1f} MiB; PSS by worker "
        f"{', '.join(f'{v:.1f}' for v in mem['pss_mb_by_worker'])} MiB (USS "
        f"{', '.join(f'{v:.1f}' for v in mem['uss_mb_by_worker'])}){parent}, together {mem['pss_mb_total']:.1f} "
        f"MiB = {mem['total_over_one']}x one worker's {mem['one_worker_pss_mb']:.1f} MiB (target <= 1.5x)"
    )
    up = report["startup"]
    ready = report["configurations"]["shipped"]["ready_s"]
    print(
        f"start-up: {up['command']}: {up['wall_s']:.2f} s wall, {up['cpu_s']:.2f} s CPU (median); "
        f"a bench worker was ready {ready:.2f} s after it started"
    )
    print(
        f"conc p50/p99: per-turn latency with {report['concurrency']} sessions in flight on one event loop; "
        "CPU ms: the process's CPU time (every thread) per turn in the concurrent phase, steadier than wall time"
    )
