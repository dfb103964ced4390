"""Run a unit of work, `fn(connection, *args)` inside one transaction, without blocking the loop.

- SQLite: one dedicated thread with a synchronous connection. SQLite has a single writer anyway,
  so one connection serves every unit in turn, and a whole unit costs one thread hop where
  aiosqlite hops once per cursor operation (docs/evaluation.md gives the measured difference).
  Another thread checkpoints the log (checkpoint.py).
- Anything else (PostgreSQL via asyncpg): the async engine runs the same function with
  `AsyncConnection.run_sync`, on the driver's own event-loop I/O.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import Connection, create_engine, event
from sqlalchemy.engine import make_url

from adapters.storage.checkpoint import BACKSTOP_PAGES, Checkpointer


class Runner(Protocol):
    async def run(self, fn: Callable[..., Any], *args: Any) -> Any: ...

    async def aclose(self) -> None: ...


SYNCHRONOUS = ("normal", "full")


class SQLiteThreadRunner:
    def __init__(self, database: str, busy_timeout_ms: int, synchronous: str = "normal"):
        if database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        self.engine = create_engine(f"sqlite:///{database}")
        event.listen(self.engine, "connect", _pragmas(busy_timeout_ms, synchronous))
        self._checkpointer = None if database == ":memory:" else Checkpointer(database, busy_timeout_ms, synchronous)
        # A thread of our own fed by a queue: the loop hands it a unit and a future and the thread
        # settles the future, without run_in_executor's extra future wrapping on every hop.
        # Started by the first unit, not here: a process that builds its app and then forks workers
        # (bots/workers.py) hands them a runner whose threads each starts for itself.
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closing = False
        # The thread keeps one connection for its whole life: only this thread uses it, so checking
        # one out of the pool and resetting it for every unit would buy nothing.
        self._conn: Connection | None = None

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, args, loop, future = job
            try:
                outcome: tuple[Any, BaseException | None] = (self._in_transaction(fn, args), None)
            except BaseException as e:  # noqa: BLE001 - handed to the awaiting task
                outcome = (None, e)
            with contextlib.suppress(RuntimeError):  # the loop closed while the unit ran: nobody waits
                loop.call_soon_threadsafe(_settle, future, *outcome)
        self._close()

    def _in_transaction(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        conn = self._conn
        if conn is None or conn.invalidated or conn.closed:
            conn = self._conn = self.engine.connect()
        with conn.begin():
            result = fn(conn, *args)
        if self._checkpointer is not None and not self._checkpointer.armed.is_set():
            self._checkpointer.armed.set()
        return result

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self.engine.dispose()

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        if self._closing:  # a job queued after the thread's last one would never run
            raise RuntimeError("the SQLite runner is closed")
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="agentbot-sqlite", daemon=True)
            self._thread.start()
            if self._checkpointer is not None:
                self._checkpointer.start()
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._jobs.put((fn, args, loop, future))
        return await future

    async def aclose(self) -> None:
        if not self._closing:
            self._closing = True
            self._jobs.put(None)
        if self._thread is None:  # no unit ever ran
            self.engine.dispose()
            return
        await asyncio.to_thread(self._thread.join)
        if self._checkpointer is not None:
            await asyncio.to_thread(self._checkpointer.stop)


_Job = tuple[Callable[..., Any], tuple[Any, ...], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():  # the turn gave up waiting (its deadline): the unit's outcome is dropped
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class AsyncEngineRunner:
    def __init__(self, url: str):
        # Imported here: SQLAlchemy's asyncio extension brings its ORM (8 MiB) into every process
        # otherwise, and a SQLite process runs without either.
        from sqlalchemy.ext.asyncio import create_async_engine

        self.engine = create_async_engine(url, pool_pre_ping=True)

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        async with self.engine.begin() as conn:
            return await conn.run_sync(lambda sync_conn: fn(sync_conn, *args))

    async def aclose(self) -> None:
        await self.engine.dispose()


def make_runner(url: str, *, busy_timeout_ms: int = 5000, synchronous: str = "normal") -> Runner:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return SQLiteThreadRunner(parsed.database or ":memory:", busy_timeout_ms, synchronous)
    return AsyncEngineRunner(url)


def _pragmas(busy_timeout_ms: int, synchronous: str) -> Callable[[Any, Any], None]:
    if synchronous not in SYNCHRONOUS:
        raise ValueError(f"synchronous must be one of {SYNCHRONOUS}, not {synchronous!r}")

    # WAL with synchronous=NORMAL survives a process crash but may lose the last commits on power
    # loss or an OS crash; FULL syncs the log on every commit and loses nothing that was committed.
    def on_connect(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        # Switching a new file to WAL needs a lock SQLite will not wait for (no busy handler), and two
        # processes starting together (a Procfile's web and discord) both switch: retry briefly instead.
        deadline = time.monotonic() + busy_timeout_ms / 1000
        while True:
            try:
                cur.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
        cur.execute(f"PRAGMA synchronous={synchronous.upper()}")
        # Checkpoints run on a thread of their own (checkpoint.py); a commit checkpoints only as a backstop.
        cur.execute(f"PRAGMA wal_autocheckpoint={BACKSTOP_PAGES}")
        cur.close()

    return on_connect
