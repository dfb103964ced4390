"""SQLite's write-ahead log copied into the database file off the turn's path.

By default SQLite checkpoints inside the commit that fills the log past 1,000 pages: that commit
copies the log into the database file and syncs both, a stall of several milliseconds for whichever
turn made it (one turn in fifty in `agentbot bench`, its p99). SQLite's documentation suggests
turning automatic checkpoints down and running them from another thread: `Checkpointer` runs a
PASSIVE checkpoint (it never blocks a writer) on a connection of its own every `interval` seconds.
The runner's connection keeps automatic checkpoints as a backstop at `BACKSTOP_PAGES`, so the log
stays bounded even if this thread falls behind.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

log = logging.getLogger("agentbot.storage")

BACKSTOP_PAGES = 10_000  # about 40 MB of log before a commit checkpoints by itself


class Checkpointer:
    """
    Args:
        database: the SQLite file.
        busy_timeout_ms: how long a checkpoint waits for another connection's lock.
        synchronous: the durability the runner uses (`normal` or `full`); a checkpoint syncs in both.
        interval: seconds between checkpoints.
    """

    def __init__(self, database: str, busy_timeout_ms: int, synchronous: str, interval: float = 0.25):
        self.path = Path(database)
        self.busy_timeout_ms, self.synchronous, self.interval = busy_timeout_ms, synchronous, interval
        self.done = 0  # checkpoints run, for tests and curiosity
        # Set by the runner once a unit has succeeded: a file that is missing, damaged or not yet
        # migrated is the runner's to report, not this thread's.
        self.armed = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="agentbot-checkpoint", daemon=True)

    def start(self) -> None:
        """Start checkpointing (the runner does, with its own thread)."""
        self._thread.start()

    def _loop(self) -> None:
        conn: sqlite3.Connection | None = None
        failing = False
        while not self._stop.wait(self.interval):
            if not self.armed.is_set():
                continue
            try:
                if conn is None:
                    conn = sqlite3.connect(self.path, timeout=self.busy_timeout_ms / 1000, isolation_level=None)
                    conn.execute(f"PRAGMA synchronous={self.synchronous.upper()}")
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                self.done += 1
                failing = False
            except sqlite3.Error as e:  # the backstop still bounds the log; try again next time
                if not failing:
                    log.warning("background checkpoint failed (commits will checkpoint instead): %s", e)
                failing = True
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()

    def stop(self) -> None:
        """Stop and wait for the thread (blocking: call it off the event loop)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
