"""Shared fixtures: a real SQLite file per test, the shipped config, and no network but loopback."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from agent.app import App
from agent.turn.router import AgentRouter
from bots.app import build_app
from tests.helpers import REPO
from tests.pg import fresh_database, postgres_server, unavailable_reason
from tests.standins.llm_server import StandInLLM
from tests.standins.telemetry import CollectingSink

_real_connect = socket.socket.connect


def _is_local(address: object) -> bool:
    if not isinstance(address, tuple):
        return True  # unix sockets
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection off this machine fails the test."""

    def guarded(self: socket.socket, address: object) -> None:
        if not _is_local(address):
            raise AssertionError(f"test tried a real network call to {address!r}")
        return _real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'agentbot.db'}"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """One throwaway PostgreSQL server for the run; a test that needs it is skipped on a machine
    without the server binaries."""
    if (reason := unavailable_reason()) is not None:
        pytest.skip(reason)
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
async def any_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The test once on a real SQLite file and once on a fresh, migrated PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'agentbot.db'}"
    return await fresh_database(request.getfixturevalue("pg_server"))


@pytest.fixture
def sink() -> CollectingSink:
    return CollectingSink()


@pytest.fixture
async def app(db_url: str, sink: CollectingSink) -> AsyncIterator[App]:
    async with build_app(REPO / "config", REPO / "data", db_url, telemetry=sink) as a:
        yield a


@pytest.fixture
def router(app: App) -> AgentRouter:
    return app.router


@pytest.fixture
def llm_server() -> Iterator[StandInLLM]:
    """A stand-in OpenAI/Anthropic server on 127.0.0.1 that answers as a small model would."""
    server = StandInLLM()
    yield server
    server.close()
