"""`agentbot db current | upgrade` on a real SQLite file, as an operator runs them."""

from __future__ import annotations

from pathlib import Path

from adapters.storage.migrate import head_revision
from tests.bots.test_cli import agentbot


def test_db_current_says_behind_until_upgrade(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'ops.db'}"
    before = agentbot("db", "current", "--db-url", url)
    assert before.returncode == 1
    assert "empty (no revision)" in before.stdout and "run `agentbot db upgrade`" in before.stdout
    up = agentbot("db", "upgrade", "--db-url", url)
    assert up.returncode == 0, up.stderr
    assert f"upgraded from empty: revision {head_revision()}" in up.stdout
    again = agentbot("db", "upgrade", "--db-url", url)
    assert "already current" in again.stdout
    now = agentbot("db", "current", "--db-url", url)
    assert now.returncode == 0 and f"revision {head_revision()}; newest {head_revision()}" in now.stdout
