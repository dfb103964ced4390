"""`agentbot bench`: full turns through the real router, as shipped, against a raw sqlite3 floor.

Each conversation is two turns ("I want to check my order" -> "O-12345"), so every turn loads
state and history, classifies, updates goals, and commits state, messages and telemetry; the
second also runs the tool. Configurations, each in a fresh process on its own database, run in
`--rounds` interleaved rounds (shipped, tracing off, FULL, shipped, ...) and reported as the median
of the rounds, since two processes of the same build can differ by a quarter on a shared machine:

- shipped: the settings as they ship (tracing on, SQLite synchronous=NORMAL);
- tracing off: the shipped settings without traces, so the difference is what tracing costs;
- synchronous=FULL: the shipped app syncing every commit to disk (SQLite only).

The floor does one SELECT and one UPSERT of a JSON row per turn with the stdlib sqlite3 module,
committed, at each durability, in the same run on the same disk: compare ratios across runs. A
second floor times what the trace writer asks of the disk per conversation (a new file), before
and after the rounds. Each process settles its heap as the servers do (bots/serving.py). "conc p99"
is the loaded p99: a turn's latency with `--concurrency` sessions in flight on one event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bots.cli.bench_run import PHASES, Config, percentile, run_config, traces_bytes

UPSERT = (
    "INSERT INTO state VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET version = excluded.version, data = excluded.data"
)


def floor(path: Path, conversations: int, synchronous: str) -> dict[str, Any]:
    """Raw sqlite3: one SELECT and one UPSERT of a JSON state row per turn, committed."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={synchronous.upper()}")
    db.execute("CREATE TABLE IF NOT EXISTS state (id TEXT PRIMARY KEY, version INTEGER, data TEXT)")
    db.commit()
    latencies: list[float] = []
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(conversations * 2):
        t0 = time.perf_counter()
        key = f"s-{i // 2}"
        row = db.execute("SELECT version, data FROM state WHERE id = ?", (key,)).fetchone()
        version = (row[0] if row else 0) + 1
        data = json.dumps({"session_id": key, "version": version, "goals": {"g": {"slots": {"order_id": "O-12345"}}}})
        db.execute(UPSERT, (key, version, data))
        db.commit()
        latencies.append(time.perf_counter() - t0)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = db.execute("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()").fetchone()[0]
    db.close()
    return {
        "turns": len(latencies),
        "p50_ms": round(percentile(latencies, 0.5) * 1000, 3),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 3),
        "turns_per_s": round(len(latencies) / wall, 1),
        "cpu_ms_per_turn": round(cpu * 1000 / len(latencies), 3),
        "statements_per_turn": 2.0,
        "bytes_per_conversation": round(size / conversations),
    }


SLOW_FILE_US = 100  # a new file usually costs 20-25 us here; 200-260 us in the slow spells


def trace_file_floor(directory: Path, files: int, size: int = 2048) -> dict[str, Any]:
    """What the trace writer asks of the file system for each new conversation: create a file,
    append to it, close it. Measured in the run, since the same disk can differ tenfold: here 20-25
    us per file in most runs, 200-260 us in some, with perf putting the time in ext4's inode
    allocator walking inodes freed shortly before (`recently_deleted`)."""
    directory.mkdir()
    body = b"x" * size
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(files):
        fd = os.open(directory / f"{i:032x}.jsonl", flags, 0o644)
        os.write(fd, body)
        os.close(fd)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {"files": files, "us_per_file": round(wall * 1e6 / files, 1), "cpu_us_per_file": round(cpu * 1e6 / files, 1)}


async def pg_floor(url: str, conversations: int) -> dict[str, Any]:
    """Raw asyncpg: the same SELECT + UPSERT per turn in one transaction, on the bench's PostgreSQL."""
    import asyncpg  # the postgres extra; the bench only gets here with a postgresql URL

    db = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    await db.execute("CREATE TABLE IF NOT EXISTS bench_floor (id TEXT PRIMARY KEY, version INTEGER, data TEXT)")
    upsert = (
        "INSERT INTO bench_floor VALUES ($1, $2, $3) "
        "ON CONFLICT (id) DO UPDATE SET version = excluded.version, data = excluded.data"
    )
    latencies: list[float] = []
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(conversations * 2):
        t0 = time.perf_counter()
        key = f"s-{i // 2}-{started}"
        async with db.transaction():
            row = await db.fetchrow("SELECT version, data FROM bench_floor WHERE id = $1", key)
            version = (row["version"] if row else 0) + 1
            data = json.dumps({"session_id": key, "version": version, "goals": {"g": {"slots": {"order_id": "O-1"}}}})
            await db.execute(upsert, key, version, data)
        latencies.append(time.perf_counter() - t0)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    await db.close()
    return {
        "turns": len(latencies),
        "p50_ms": round(percentile(latencies, 0.5) * 1000, 3),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 3),
        "turns_per_s": round(len(latencies) / wall, 1),
        "cpu_ms_per_turn": round(cpu * 1000 / len(latencies), 3),
        "statements_per_turn": 4.0,  # BEGIN, SELECT, UPSERT, COMMIT
        "bytes_per_conversation": None,
    }


def configurations(args: argparse.Namespace, tmp: Path, round_no: int = 0) -> list[Config]:
    sqlite = not args.db_url or args.db_url.startswith("sqlite")
    runs = [("shipped", True, "normal"), ("tracing off", False, "normal")]
    if sqlite:
        runs.append(("synchronous=FULL", True, "full"))
    out = []
    for label, tracing, synchronous in runs:
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
                workers=args.workers,
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
    # Before and after the rounds: nothing the bench writes is deleted until it ends, but the disk
    # can change under it (a slow spell after files were deleted passes within minutes).
    before = trace_file_floor(tmp / "floor-traces-before", args.conversations)
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
    after = trace_file_floor(tmp / "floor-traces-after", args.conversations)
    report["trace_file_floor"] = {"before": before, "after": after}
    report["floor"] = {s: floor(tmp / f"floor-{s}.db", args.conversations, s) for s in ("normal", "full")}
    if report["database"] == "postgresql+asyncpg":
        report["floor"]["postgresql"] = asyncio.run(pg_floor(args.db_url, args.conversations))
    shipped, off = report["configurations"]["shipped"], report["configurations"]["tracing off"]
    normal = report["floor"]["normal"]
    on_rate, off_rate = shipped["concurrent"]["turns_per_s"], off["concurrent"]["turns_per_s"]
    report["ratios"] = {
        "shipped_p50_vs_floor": round(shipped["sequential"]["p50_ms"] / normal["p50_ms"], 2),
        "shipped_throughput_vs_floor": round(shipped["concurrent"]["turns_per_s"] / normal["turns_per_s"], 3),
        "tracing_cost_of_throughput": round(1 - on_rate / off_rate, 3),
        "tracing_cost_of_cpu": round(
            shipped["concurrent"]["cpu_ms_per_turn"] / off["concurrent"]["cpu_ms_per_turn"] - 1, 3
        ),
    }
    return report


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
    out["turns_per_s_by_round"] = [r["concurrent"]["turns_per_s"] for r in results]
    return out


def run_bench(args: argparse.Namespace) -> int:
    # On the disk the app keeps its database and traces on (var/, as shipped), not the system's
    # temporary folder: here creating a file in /tmp took 300-500 us against 20 us in var/.
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
    for sync, f in report["floor"].items():
        cells = [f["p50_ms"], f["p99_ms"], f["turns_per_s"], None, None, f.get("cpu_ms_per_turn")]
        cells += [f["statements_per_turn"], 1.0, f["bytes_per_conversation"], None, None]
        name = "floor: asyncpg, same server" if sync == "postgresql" else f"floor: sqlite3, synchronous={sync.upper()}"
        print(_row(name, cells))
    before, after = report["trace_file_floor"]["before"], report["trace_file_floor"]["after"]
    print(
        f"floor: a new trace file (create, append 2 KB, close): {before['us_per_file']:,.0f} us before the rounds, "
        f"{after['us_per_file']:,.0f} us after; tracing makes one per conversation"
    )
    if max(before["us_per_file"], after["us_per_file"]) > SLOW_FILE_US:
        print(
            "note: creating a file was slow in this run; on some disks it is for minutes after many files were "
            "deleted (a previous bench run's clean-up), and tracing's figures carry it: run again a few minutes later"
        )
    ratios = report["ratios"]
    print(
        f"shipped p50 / floor p50 = {ratios['shipped_p50_vs_floor']}x; shipped turns/s / floor turns/s = "
        f"{ratios['shipped_throughput_vs_floor']}; tracing costs {ratios['tracing_cost_of_throughput']:.0%} of "
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
    print(
        f"conc p50/p99: per-turn latency with {report['concurrency']} sessions in flight on one event loop; "
        "CPU ms: the process's CPU time (every thread) per turn in the concurrent phase, steadier than wall time"
    )


def _n(value: Any) -> str:
    return "-" if value is None else f"{value:,}"
