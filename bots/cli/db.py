"""`agentbot db upgrade | current | revision`: the database schema, by command."""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from adapters.storage.migrate import SchemaStatus, write_revision
from adapters.storage.sql import SqlStore
from bots.settings import DeploySettings, run_settings
from bots.wiring import resolve_dir


def add_db_commands(sub: argparse._SubParsersAction, common: Callable[[argparse.ArgumentParser], None]) -> None:
    db = sub.add_parser("db", help="database schema: upgrade, current, revision")
    actions = db.add_subparsers(dest="db_command", required=True)
    up = actions.add_parser("upgrade", help="apply every migration the database lacks (PostgreSQL: run at deploy)")
    common(up)
    now = actions.add_parser("current", help="print the database's schema revision and the newest one")
    common(now)
    rev = actions.add_parser(
        "revision", help="developers: write a migration for what changed in adapters/storage/schema.py"
    )
    rev.add_argument("-m", "--message", required=True, help="what the change does, e.g. 'add outbox'")


def _describe(status: SchemaStatus) -> str:
    at = status.current or "empty (no revision)"
    return f"revision {at}; newest {status.head}" + (" (behind: run `agentbot db upgrade`)" if status.behind else "")


def run_db(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    if args.db_command == "revision":
        with tempfile.TemporaryDirectory() as scratch:
            path = write_revision(args.message, Path(scratch) / "head.db")
        print(f"wrote {path}: review it, then run `make test`", file=out)
        return 0
    deploy = DeploySettings.from_env()
    settings = run_settings(resolve_dir(args.config_dir, "config", deploy), deploy, db_url=args.db_url)
    url = settings.database_url

    async def main() -> int:
        store = SqlStore(url, busy_timeout_ms=settings.db_busy_timeout_ms, migrate=False)
        try:
            if args.db_command == "upgrade":
                before = await store.schema_status()
                after = await store.upgrade()
                was = before.current or "empty"
                done = "already current" if before.current == after.current else f"upgraded from {was}"
                print(f"database {done}: {_describe(after)}", file=out)
                return 0
            status = await store.schema_status()
            print(f"database {_describe(status)}", file=out)
            return 1 if status.behind else 0
        finally:
            await store.aclose()

    return asyncio.run(main())
