"""`agentbot bench`: full turns through the real router on an SQLite file, against a raw sqlite3 floor.

Each conversation is two turns ("I want to check my order" -> "O-12345"), so every turn loads
state and history, classifies, updates goals, and commits state, messages and telemetry; the
second also runs the tool. The floor does one SELECT and one UPSERT of a JSON row per turn with
the stdlib sqlite3 module, in the same run on the same disk, so the ratio is what to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from agent.router import AgentRouter
from agent.types import ChannelContext, Interaction
from bots.app import build_app

TURNS = ("I want to check my order", "O-12345")
UPSERT = (
    "INSERT INTO state VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET version = excluded.version, data = excluded.data"
)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarize(latencies: list[float], wall: float) -> dict[str, float]:
    return {
        "turns": len(latencies),
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 3),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 3),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 3),
        "turns_per_s": round(len(latencies) / wall, 1),
    }


async def conversation(router: AgentRouter, session: str, latencies: list[float]) -> None:
    for n, text in enumerate(TURNS):
        interaction = Interaction(id=f"{session}:{n}", text=text, session_key=session, context=ChannelContext())
        started = time.perf_counter()
        response = await router.handle(interaction)
        latencies.append(time.perf_counter() - started)
        if n == 1 and "shipped" not in response.text:
            raise RuntimeError(f"bench conversation went wrong: {response.text!r}")


async def sequential(router: AgentRouter, count: int, prefix: str) -> dict[str, float]:
    latencies: list[float] = []
    started = time.perf_counter()
    for i in range(count):
        await conversation(router, f"{prefix}-{i}", latencies)
    return summarize(latencies, time.perf_counter() - started)


async def concurrent(router: AgentRouter, count: int, workers: int, prefix: str) -> dict[str, float]:
    latencies: list[float] = []
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(count):
        queue.put_nowait(i)

    async def worker() -> None:
        while not queue.empty():
            await conversation(router, f"{prefix}-{queue.get_nowait()}", latencies)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(workers)))
    return summarize(latencies, time.perf_counter() - started)


def floor(path: Path, turns: int) -> dict[str, float]:
    """Raw sqlite3: one SELECT and one UPSERT of a JSON state row per turn, committed."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE IF NOT EXISTS state (id TEXT PRIMARY KEY, version INTEGER, data TEXT)")
    db.commit()
    latencies: list[float] = []
    started = time.perf_counter()
    for i in range(turns):
        t0 = time.perf_counter()
        key = f"s-{i // 2}"
        row = db.execute("SELECT version, data FROM state WHERE id = ?", (key,)).fetchone()
        version = (row[0] if row else 0) + 1
        data = json.dumps({"session_id": key, "version": version, "goals": {"g": {"slots": {"order_id": "O-12345"}}}})
        db.execute(UPSERT, (key, version, data))
        db.commit()
        latencies.append(time.perf_counter() - t0)
    wall = time.perf_counter() - started
    db.close()
    return summarize(latencies, wall)


async def measure(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    url = args.db_url or f"sqlite+aiosqlite:///{tmp / 'bench.db'}"
    # OpenTelemetry export is measured only when asked: it is the one part whose cost depends on
    # where spans go (files, OTLP), so the turn pipeline itself is the default measurement.
    env = {**os.environ, "AGENTBOT_TRACING": "on" if args.tracing == "on" else "off"}
    async with build_app(args.config_dir, args.data_dir, url, env=env) as app:
        router = app.router
        await sequential(router, 50, "warmup")
        seq = await sequential(router, args.conversations, "seq")
        conc = await concurrent(router, args.conversations, args.concurrency, "conc")
    base = floor(tmp / "floor.db", args.conversations * 2)
    return {
        "conversations": args.conversations,
        "tracing": args.tracing,
        "concurrency": args.concurrency,
        "sequential": seq,
        "concurrent": conc,
        "floor_sqlite3": base,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "ratios": {
            "sequential_p50_vs_floor": round(seq["p50_ms"] / base["p50_ms"], 2),
            "concurrent_throughput_vs_floor": round(conc["turns_per_s"] / base["turns_per_s"], 3),
        },
    }


def run_bench(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="agentbot-bench-") as tmp:
        report = asyncio.run(measure(args, Path(tmp)))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"agentbot bench: {report['conversations']} two-turn order conversations per phase "
        f"(rules mode, SQLite file, all stages, telemetry and messages stored; OpenTelemetry {report['tracing']})"
    )
    print(f"{'phase':<34}{'p50 ms':>9}{'p99 ms':>9}{'turns/s':>10}")
    rows = [
        ("router, sequential", report["sequential"]),
        (f"router, {report['concurrency']} concurrent sessions", report["concurrent"]),
        ("floor: sqlite3 select+upsert", report["floor_sqlite3"]),
    ]
    for name, r in rows:
        print(f"{name:<34}{r['p50_ms']:>9.3f}{r['p99_ms']:>9.3f}{r['turns_per_s']:>10.1f}")
    print(f"peak RSS: {report['peak_rss_mb']} MB")
    ratios = report["ratios"]
    print(
        f"ratios: router p50 / floor p50 = {ratios['sequential_p50_vs_floor']}x; "
        f"concurrent throughput / floor throughput = {ratios['concurrent_throughput_vs_floor']}"
    )
    return 0
