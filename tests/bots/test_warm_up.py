"""A process does its first-time work once, before it serves: entering the app warms it, and turns
arriving together never repeat that work."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sqlalchemy import create_engine, text

from agent.conversation.session import Goal
from bots.app import build_app
from tests.helpers import REPO


async def test_entering_the_app_does_the_first_time_work_once(tmp_path: Path) -> None:
    db = tmp_path / "agentbot.db"
    app = build_app(REPO / "config", REPO / "data", f"sqlite+aiosqlite:///{db}")
    runs: list[int] = []

    async def counted() -> None:
        runs.append(1)
        await asyncio.sleep(0.01)  # callers arriving meanwhile must wait for this one run

    app.warmups.append(counted)
    async with app:
        await asyncio.gather(*(app.warm_up() for _ in range(20)))
        assert runs == [1]
        # The app's own models are built before any turn uses them.
        assert Goal.__pydantic_complete__
    # The demo's first day was recorded before serving, not by a first turn.
    with create_engine(f"sqlite:///{db}").connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM demo_calendar")).scalar() == 1
