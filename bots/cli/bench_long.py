"""`agentbot bench long`: is memory flat over a long run? RSS at each tenth of N turns.

One fresh process with the shipped settings (tracing on, SQLite synchronous=NORMAL unless
`--db-url` says otherwise) runs `--turns` turns of the bench's two-turn order conversations,
`--concurrency` sessions in flight, and reads its memory after each tenth. A server that holds
something per conversation (a cache keyed by session or text without a bound, rows kept after a
turn, a file per trace left open) shows it here as a last tenth higher than the first.

Beside RSS it reports the anonymous memory (the heap: RSS less the mapped model files, whose
pages come and go with the page cache) and the Python allocator's block count
(`sys.getallocatedblocks()`): anonymous memory that grows while the blocks stay flat is held
outside Python's objects (the database driver, the C allocator).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import resource
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bots.app import build_app
from bots.cli.bench_run import TURNS, Config, app_env, memory, prepare_schema, run_phase
from bots.serving import settle_heap

TENTHS = 10


class Tenth(BaseModel):
    turns: int  # run so far
    turns_per_s: float
    rss_mb: float
    anon_mb: float
    python_blocks: int


async def long_run(config: Config, turns: int) -> dict[str, Any]:
    per_tenth = max(1, turns // len(TURNS) // TENTHS)
    tenths: list[Tenth] = []
    async with build_app(config.config_dir, config.data_dir, config.db_url, env=app_env(config)) as app:
        settle_heap()  # as the Slack and Discord servers do
        for tenth in range(TENTHS):
            phase = await run_phase(app, None, f"long-{tenth}", per_tenth, config.concurrency)
            now = memory()
            if now is None:
                raise RuntimeError("agentbot bench long reads /proc/self/smaps_rollup, which this system lacks")
            tenths.append(
                Tenth(
                    turns=phase.turns * (tenth + 1),
                    turns_per_s=phase.turns_per_s,
                    rss_mb=now.rss_mb,
                    anon_mb=now.pss_anon_mb,
                    python_blocks=sys.getallocatedblocks(),
                )
            )
    first, last = tenths[0], tenths[-1]
    return {
        "turns": last.turns,
        "concurrency": config.concurrency,
        "tenths": [t.model_dump() for t in tenths],
        "first_tenth_rss_mb": first.rss_mb,
        "last_tenth_rss_mb": last.rss_mb,
        "rss_growth_mb": round(last.rss_mb - first.rss_mb, 1),
        "anon_growth_mb": round(last.anon_mb - first.anon_mb, 1),
        "python_blocks_growth": last.python_blocks - first.python_blocks,
        # The kernel updates its high-water mark lazily: it can trail the RSS just read.
        "peak_rss_mb": max(
            round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1), *(t.rss_mb for t in tenths)
        ),
    }


def _child(config: Config, turns: int) -> dict[str, Any]:
    return asyncio.run(long_run(config, turns))


def measure(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    config = Config(
        label="shipped",
        db_url=args.db_url or f"sqlite+aiosqlite:///{tmp / 'long.db'}",
        traces_dir=str(tmp / "traces"),
        tracing=True,
        synchronous="normal",
        conversations=args.turns // len(TURNS),
        concurrency=args.concurrency,
        config_dir=str(args.config_dir) if args.config_dir else None,
        data_dir=str(args.data_dir) if args.data_dir else None,
    )
    asyncio.run(prepare_schema(config.db_url))
    started = time.perf_counter()
    # A fresh process, as the other bench configurations run: its memory is the run's alone.
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        report = pool.submit(_child, config, args.turns).result()
    report["database"] = "sqlite" if config.db_url.startswith("sqlite") else config.db_url.split(":")[0]
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


def run_long_bench(args: argparse.Namespace) -> int:
    home = Path("var")  # as `agentbot bench`: the disk the app keeps its database on
    home.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="agentbot-bench-long-", dir=home) as tmp:
        report = measure(args, Path(tmp))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"agentbot bench long: {report['turns']:,} turns of two-turn order conversations, "
        f"{report['concurrency']} sessions in flight, {report['database']}, shipped settings "
        f"(tracing on), in {report['seconds']:,.0f} s"
    )
    print(f"{'after turns':>12}{'turns/s':>9}{'RSS MiB':>9}{'anon MiB':>10}{'Python blocks':>15}")
    for t in report["tenths"]:
        print(
            f"{t['turns']:>12,}{t['turns_per_s']:>9,.0f}{t['rss_mb']:>9.1f}{t['anon_mb']:>10.1f}{t['python_blocks']:>15,}"
        )
    print(
        f"RSS after the first tenth {report['first_tenth_rss_mb']} MiB, after the last "
        f"{report['last_tenth_rss_mb']} MiB: {report['rss_growth_mb']:+} MiB (anonymous "
        f"{report['anon_growth_mb']:+} MiB, Python blocks {report['python_blocks_growth']:+,}); "
        f"peak RSS {report['peak_rss_mb']} MiB"
    )
    return 0
