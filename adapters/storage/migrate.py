"""Schema migrations (Alembic) as units of work: where a database stands, and bringing it to head.

The revisions live in adapters/storage/migrations/versions/ and ship inside the package, so an
installed agentbot migrates the databases it finds. Each function takes a SQLAlchemy `Connection`
and runs through the store's runner, like every other unit of work.

Alembic and its revision scripts cost a process about 17 MB, and every process asks at start-up
whether its database is current. A revision's id is its file's number (`agentbot db revision`
names them so, and a test holds the scripts to it), so a database whose revision is the highest
number is at head without Alembic; only a database behind it, a migration or a schema comparison
imports Alembic.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel
from sqlalchemy import Connection, inspect, text

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "alembic_version"
_NUMBERED = re.compile(r"(\d{4})_\w+\.py")


class SchemaStatus(BaseModel):
    current: str | None
    head: str

    @property
    def behind(self) -> bool:
        return self.current != self.head


def alembic_config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    if len(heads) != 1:
        # Two branches each added a revision after the same parent: chain one after the other.
        raise RuntimeError(f"migrations have {len(heads)} heads {sorted(heads)}; set one's down_revision to the other")
    return heads[0]


def newest_numbered() -> str | None:
    """The highest revision number among the scripts' file names."""
    numbers = [m.group(1) for p in (MIGRATIONS / "versions").glob("*.py") if (m := _NUMBERED.fullmatch(p.name))]
    return max(numbers, default=None)


def status_unit(conn: Connection) -> SchemaStatus:
    if inspect(conn).has_table(VERSION_TABLE):
        current = [row[0] for row in conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}"))]
        if len(current) == 1 and current[0] == newest_numbered():
            return SchemaStatus(current=current[0], head=current[0])
    from alembic.runtime.migration import MigrationContext

    return SchemaStatus(current=MigrationContext.configure(conn).get_current_revision(), head=head_revision())


def upgrade_unit(conn: Connection) -> SchemaStatus:
    """Bring the database to head; on SQLite the write lock is taken first, so two processes starting together
    migrate one after the other instead of both creating the same tables."""
    raw = conn.connection.dbapi_connection
    if conn.dialect.name == "sqlite" and raw is not None and not getattr(raw, "in_transaction", True):
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    from alembic import command

    command.upgrade(alembic_config(conn), "head")
    return status_unit(conn)


def pending_changes_unit(conn: Connection) -> list[object]:
    """What schema.py declares that the migrated database lacks (empty when every change has its revision)."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from adapters.storage.schema import metadata

    return list(compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), metadata))


def write_revision(message: str, scratch_db: Path) -> Path:
    """Write a new revision file from the difference between schema.py and head (migrated into a scratch SQLite)."""
    from alembic import command
    from alembic.script import ScriptDirectory
    from sqlalchemy import create_engine

    engine = create_engine(f"sqlite:///{scratch_db}")
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "head")
        with engine.begin() as conn:
            number = len(list(ScriptDirectory.from_config(alembic_config()).walk_revisions())) + 1
            script = command.revision(alembic_config(conn), message=message, autogenerate=True, rev_id=f"{number:04d}")
    finally:
        engine.dispose()
    if script is None or isinstance(script, list):
        raise RuntimeError("alembic wrote no single revision")
    return Path(script.path)
