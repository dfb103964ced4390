"""A throwaway PostgreSQL server on 127.0.0.1 for tests, when this machine has the server binaries."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BIN = Path("/usr/lib/postgresql")


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(BIN.glob(f"*/bin/{name}"))
    return str(candidates[-1]) if candidates else None


def unavailable_reason() -> str | None:
    if _binary("initdb") is None or _binary("postgres") is None:
        return "no PostgreSQL server binaries on this machine (apt-get install postgresql)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def postgres_server() -> Iterator[str]:
    """Yield an asyncpg URL to a fresh cluster; stop and delete it afterwards."""
    root = Path(tempfile.mkdtemp(prefix="agentbot-pg-"))
    data = root / "data"
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        shutil.chown(root, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    subprocess.run(
        [*as_user, _binary("initdb"), "-D", str(data), "-A", "trust", "-U", "agentbot", "--no-sync"],
        check=True,
        capture_output=True,
    )
    server = subprocess.Popen(
        [
            *as_user,
            _binary("postgres"),
            "-D",
            str(data),
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-k",
            str(root),
            "-c",
            "fsync=off",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("PostgreSQL did not start") from None
                time.sleep(0.1)
        time.sleep(0.3)  # accepting TCP a moment before it accepts logins
        yield f"postgresql+asyncpg://agentbot@127.0.0.1:{port}/postgres"
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)


async def fresh_database(server_url: str) -> str:
    """A new, empty database on the server, migrated the way a deploy does it (`agentbot db
    upgrade`): one test's own, whatever other tests left on the server."""
    import asyncpg
    from sqlalchemy.engine import make_url

    from adapters.storage.sql import SqlStore

    url = make_url(server_url)
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(host=url.host, port=url.port, user=url.username, database="postgres")
    try:
        await admin.execute(f"CREATE DATABASE {name}")
    finally:
        await admin.close()
    fresh = url.set(database=name).render_as_string(hide_password=False)
    store = SqlStore(fresh)
    try:
        await store.upgrade()
    finally:
        await store.aclose()
    return fresh
