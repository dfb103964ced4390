"""One bench configuration, run in a process of its own: the app as configured, measured.

A configuration is the shipped app with a few settings changed (tracing, durability). It runs in
a fresh process so peak RSS and start-up state belong to it alone; with `workers > 1` that many
workers, forked from a fresh parent that loaded what they share as `agentbot slack --workers`
does, share one database and run the concurrent phase together.
"""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
import os
import resource
import statistics
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from sqlalchemy import event

from adapters.storage.sql import SqlStore
from agent.app import App
from agent.domain.types import ChannelContext, Interaction
from agent.turn.router import AgentRouter
from bots.app import build_app
from bots.serving import settle_heap
from bots.workers import can_fork, fork_worker

TURNS = ("I want to check my order", "O-12345")
PHASES = ("counted", "sequential", "concurrent")  # statements and rows are counted in the first only
# A fresh process meeting this many conversations at once (a restart under traffic) is timed on
# its first COLD_TURNS turns, before any other phase has warmed it.
COLD_TURNS = 100


class Config(BaseModel):
    label: str
    db_url: str
    traces_dir: str
    tracing: bool
    synchronous: str
    conversations: int
    concurrency: int
    workers: int = 1
    config_dir: str | None = None
    data_dir: str | None = None


class Phase(BaseModel):
    turns: int
    p50_ms: float
    p99_ms: float
    mean_ms: float
    turns_per_s: float
    cpu_ms_per_turn: float  # the process's CPU (all threads), steadier than wall time on a shared machine
    # Counted in a phase of their own: the hook that counts statements adds to each turn's time.
    statements_per_turn: float | None = None
    rows_per_turn: float | None = None
    bytes_per_conversation: float | None = None


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Memory(BaseModel):
    """A process's memory (/proc/<pid>/smaps_rollup), in MiB. PSS divides each shared page by the
    processes that map it (the model's memory-mapped arrays, libraries), so several workers' PSS
    adds up to what they take together; USS is what the process alone holds."""

    rss_mb: float
    pss_mb: float
    pss_anon_mb: float
    pss_file_mb: float
    uss_mb: float
    peak_rss_mb: float


def memory() -> Memory | None:
    """This process's memory now, or None where the system has no smaps_rollup."""
    try:
        lines = Path("/proc/self/smaps_rollup").read_text().splitlines()
    except OSError:
        return None
    kb = {p[0].rstrip(":"): int(p[1]) for p in (line.split() for line in lines[1:]) if len(p) >= 2}
    mb = {k: round(v / 1024, 1) for k, v in kb.items()}
    return Memory(
        rss_mb=mb["Rss"],
        pss_mb=mb["Pss"],
        pss_anon_mb=mb.get("Pss_Anon", 0.0),
        pss_file_mb=mb.get("Pss_File", 0.0),
        uss_mb=round((kb["Private_Clean"] + kb["Private_Dirty"]) / 1024, 1),
        # The kernel updates its high-water mark lazily: it can trail the RSS just read.
        peak_rss_mb=max(mb["Rss"], round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)),
    )


def seconds_since_start() -> float | None:
    """How long ago the kernel started this process (from /proc), or None without /proc."""
    try:
        started = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, IndexError, ValueError):
        return None
    return round(uptime - started / os.sysconf("SC_CLK_TCK"), 3)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Counter:
    """Statements the database runs for the store (a multi-row insert runs once per row) and rows written.

    On SQLite every turn's statements run on the driver's cursor (adapters/storage/prepared.py), so
    they are counted there, by SQLite's trace hook, with rows from its change counter; elsewhere by
    SQLAlchemy's cursor events. Either runs Python for every statement, so the bench counts in a
    phase of its own and detaches the counter before the timed phases (sequential p50 was ~40 us
    higher with it attached).
    """

    def __init__(self) -> None:
        self.statements = self._rows = 0
        self._store: Any = None  # SQLite: counted by the trace hook on the store's connection
        self._engine: Any = None  # elsewhere: counted by the engine's cursor events

    async def attach(self, app: App) -> None:
        database = app.storage.database
        if database is None:
            return
        engine = await database.run(_engine, what="find the database engine")
        if engine.dialect.name == "sqlite":
            self._store = database
            await database.run(self._trace, what="count statements")
        else:
            self._engine = engine
            event.listen(engine, "after_cursor_execute", self._count)

    async def detach(self) -> None:
        if self._store is not None:
            await self._store.run(self._untrace, what="stop counting statements")
        elif self._engine is not None:
            event.remove(self._engine, "after_cursor_execute", self._count)

    def _trace(self, conn: Any) -> None:
        conn.connection.driver_connection.set_trace_callback(self._statement)

    def _untrace(self, conn: Any) -> None:
        conn.connection.driver_connection.set_trace_callback(None)

    def _statement(self, sql: str) -> None:
        if not sql.lstrip()[:8].upper().startswith(("BEGIN", "COMMIT", "ROLLBACK")):
            self.statements += 1

    def _count(self, conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool) -> None:
        self.statements += len(params) if many else 1
        if not statement.lstrip().upper().startswith("SELECT") and cursor.rowcount > 0:
            self._rows += cursor.rowcount

    async def rows(self) -> int:
        if self._store is None:
            return self._rows
        return int(await self._store.run(_total_changes, what="count rows"))


def _total_changes(conn: Any) -> int:
    """SQLite's count of rows changed on this connection since it opened."""
    return conn.connection.driver_connection.total_changes


def _engine(conn: Any) -> Any:
    """The (synchronous) engine under the store's connection: SQLite's trace hook or the cursor events attach there."""
    return conn.engine


async def conversation(router: AgentRouter, session: str, latencies: list[float]) -> None:
    for n, text in enumerate(TURNS):
        # Alice (C-001) asks about her own order: order details are only for their customer.
        interaction = Interaction(
            id=f"{session}:{n}", text=text, session_key=session, customer_id="C-001", context=ChannelContext()
        )
        started = time.perf_counter()
        response = await router.handle(interaction)
        latencies.append(time.perf_counter() - started)
        if n == 1 and "shipped" not in response.text:
            raise RuntimeError(f"bench conversation went wrong: {response.text!r}")


async def db_bytes(app: App) -> int | None:
    """The database's size: SQLite pages after a checkpoint, or PostgreSQL's database size."""
    database = app.storage.database
    if database is None:
        return None
    if database.url.startswith("sqlite"):
        await database.fetch("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = await database.fetch("SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()")
    else:
        rows = await database.fetch("SELECT pg_database_size(current_database()) AS n")
    return int(rows[0].n)


async def run_phase(
    app: App, counter: Counter | None, prefix: str, count: int, concurrency: int, latencies: list[float] | None = None
) -> Phase:
    """`count` conversations, `concurrency` at a time; statements and rows only with a counter.
    Each turn's latency is appended to `latencies` (given) in the order the turns ended."""
    latencies = [] if latencies is None else latencies
    todo = list(range(count))
    before = await db_bytes(app)
    statements, rows = (counter.statements, await counter.rows()) if counter is not None else (0, 0)

    async def worker() -> None:
        while todo:
            await conversation(app.router, f"{prefix}-{todo.pop()}", latencies)

    started, cpu = time.perf_counter(), _cpu()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    if app.tracer is not None:
        await asyncio.to_thread(app.tracer.flush)  # the traces this phase wrote are part of its cost
    wall, cpu = time.perf_counter() - started, _cpu() - cpu
    turns = len(latencies)
    if counter is not None:
        statements, rows = counter.statements - statements, await counter.rows() - rows
    after = await db_bytes(app)
    return Phase(
        turns=turns,
        p50_ms=round(percentile(latencies, 0.50) * 1000, 3),
        p99_ms=round(percentile(latencies, 0.99) * 1000, 3),
        mean_ms=round(statistics.fmean(latencies) * 1000, 3),
        turns_per_s=round(turns / wall, 1),
        cpu_ms_per_turn=round(cpu * 1000 / turns, 3),
        statements_per_turn=round(statements / turns, 2) if counter is not None else None,
        rows_per_turn=round(rows / turns, 2) if counter is not None else None,
        bytes_per_conversation=int((after - before) // count) if before is not None and after is not None else None,
    )


def app_env(config: Config) -> dict[str, str]:
    """The process's environment with the settings the configuration changes."""
    return {
        **os.environ,
        "AGENTBOT_TRACING": "on" if config.tracing else "off",
        "AGENTBOT_TRACES_DIR": config.traces_dir,
        "AGENTBOT_DB_SYNCHRONOUS": config.synchronous,
    }


def built_app(config: Config) -> App:
    return build_app(config.config_dir, config.data_dir, config.db_url, env=app_env(config))


async def measure(config: Config, worker: int, barrier: Any, built: App | None = None) -> dict[str, Any]:
    """One worker's phases, on the app `built` before this worker was forked, else on its own."""
    counter = Counter()
    out: dict[str, Any] = {}
    async with built or built_app(config) as app:
        # Entering the app warmed it (the model, the banks, the demo data): the process is ready.
        out["ready_s"] = seconds_since_start()
        settle_heap()  # as the Slack and Discord servers do
        tag = f"{config.label}-w{worker}"
        # The first turns of a fresh process that meets `concurrency` conversations at once.
        cold: list[float] = []
        sessions = max(1, config.concurrency // config.workers)
        await run_phase(app, None, f"{tag}-cold", COLD_TURNS // len(TURNS), sessions, cold)
        out["cold"] = {
            "turns": len(cold),
            "p50_ms": round(percentile(cold, 0.5) * 1000, 3),
            "max_ms": round(max(cold) * 1000, 3),
        }
        await run_phase(app, None, f"{tag}-warm", 50, 1)
        await counter.attach(app)
        out["counted"] = await run_phase(app, counter, f"{tag}-count", 50, 1)
        await counter.detach()
        if worker == 0:
            out["sequential"] = await run_phase(app, None, f"{tag}-seq", config.conversations, 1)
        if barrier is not None:
            await asyncio.to_thread(barrier.wait, 600)
        share = config.conversations // config.workers
        out["concurrent"] = await run_phase(
            app, None, f"{tag}-conc", share, max(1, config.concurrency // config.workers)
        )
        out["started"] = time.time()
        if barrier is not None:  # every worker alive and warm when each reads its memory
            await asyncio.to_thread(barrier.wait, 600)
        out["memory"] = memory()
        if barrier is not None:  # none exits (unmapping what the others share) before all have read
            await asyncio.to_thread(barrier.wait, 600)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


async def prepare_schema(url: str) -> None:
    store = SqlStore(url, migrate=True)
    try:
        await store.ensure_schema()
    finally:
        await store.aclose()


def _child(config: Config, worker: int, barrier: Any, results: Any, built: App | None = None) -> int:
    try:
        results.put((worker, asyncio.run(measure(config, worker, barrier, built))))
    except BaseException as e:  # noqa: BLE001 - reported to the parent, which fails the bench
        if barrier is not None:
            barrier.abort()  # the other workers stop waiting for this one
        results.put((worker, RuntimeError(f"worker {worker}: {e!r}")))
    # A forked worker leaves with os._exit: what it put must be in the pipe first.
    results.close()
    results.join_thread()
    return 0


PARENT = "parent"


def _forking_parent(config: Config, barrier: Any, results: Any) -> None:
    """The workers as `agentbot slack --workers` runs them: this process builds the app, does its
    preloads, freezes the heap and forks them (bots/workers.py), then reads its own memory while
    they read theirs, since the pages they share count in its PSS too."""
    pids: list[int] = []
    try:
        app = built_app(config)
        app.preload()
        settle_heap()
        work = functools.partial(_child, config, barrier=barrier, results=results, built=app)
        for w in range(config.workers):
            pids.append(fork_worker(w, work))
        for _ in range(2):  # the workers' start of the concurrent phase, then of their memory reading
            barrier.wait(600)
        mine = memory()
        barrier.wait(600)  # none exits before all have read
        results.put((PARENT, mine))
        for pid in pids:
            os.waitpid(pid, 0)
    except BaseException as e:  # noqa: BLE001 - reported to the bench, which fails
        barrier.abort()
        results.put((PARENT, RuntimeError(f"the workers' parent: {e!r}")))
        for w in range(len(pids), config.workers):  # the bench waits for every worker's answer
            results.put((w, RuntimeError(f"worker {w} was not started")))


def run_config(config: Config) -> dict[str, Any]:
    """Run the configuration: one fresh process, or `config.workers` forked from a fresh parent
    that loaded what they share (spawned separately where the system cannot fork); combine what
    they measured."""
    # Schema first, as a deploy would (`agentbot db upgrade`): PostgreSQL is never migrated by a
    # worker, and workers creating SQLite tables at the same moment would race.
    asyncio.run(prepare_schema(config.db_url))
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    forked = config.workers > 1 and can_fork()
    barrier = ctx.Barrier(config.workers + forked) if config.workers > 1 else None
    if forked:
        procs = [ctx.Process(target=_forking_parent, args=(config, barrier, results))]
    else:
        procs = [ctx.Process(target=_child, args=(config, w, barrier, results)) for w in range(config.workers)]
    for p in procs:
        p.start()
    got = dict(results.get() for _ in range(config.workers + forked))
    for p in procs:
        p.join()
    for value in got.values():
        if isinstance(value, BaseException):
            raise RuntimeError(f"bench configuration {config.label!r} failed: {value!r}") from value
    if config.workers == 1:
        report = got[0]
        for phase in PHASES:
            report[phase] = report[phase].model_dump()
        report.pop("started")
        report["memory"] = [report["memory"].model_dump()] if report["memory"] else []
        return report
    combined = combine([got[w] for w in range(config.workers)])
    parent = got.get(PARENT)
    combined["parent_memory"] = parent.model_dump() if isinstance(parent, Memory) else None
    combined["forked"] = forked
    return combined


def combine(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Several workers' concurrent phases as one: turns/s summed, latency percentiles pooled roughly."""
    phases: list[Phase] = [p["concurrent"] for p in parts]
    concurrent = Phase(
        turns=sum(p.turns for p in phases),
        p50_ms=max(p.p50_ms for p in phases),
        p99_ms=max(p.p99_ms for p in phases),
        mean_ms=round(statistics.fmean(p.mean_ms for p in phases), 3),
        turns_per_s=round(sum(p.turns_per_s for p in phases), 1),
        cpu_ms_per_turn=round(statistics.fmean(p.cpu_ms_per_turn for p in phases), 3),
        bytes_per_conversation=None,  # the workers grow one database together
    )
    return {
        "counted": parts[0]["counted"].model_dump(),
        "sequential": parts[0]["sequential"].model_dump(),
        "concurrent": concurrent.model_dump(),
        "cold": {
            "turns": sum(p["cold"]["turns"] for p in parts),
            "p50_ms": max(p["cold"]["p50_ms"] for p in parts),
            "max_ms": max(p["cold"]["max_ms"] for p in parts),
        },
        "ready_s": max(p["ready_s"] or 0.0 for p in parts),
        "memory": [p["memory"].model_dump() for p in parts if p["memory"] is not None],
        "peak_rss_mb": max(p["peak_rss_mb"] for p in parts),
        "workers": len(parts),
    }


def traces_bytes(directory: str) -> int:
    return sum(p.stat().st_size for p in Path(directory).glob("*.jsonl") if p.name != "metrics.jsonl")
