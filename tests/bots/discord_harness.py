"""Runs the real discord.py client (DiscordBot) against the stand-in Discord, on a real SQLite file."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from adapters.storage.bundle import sql_storage
from adapters.storage.sql import SqlStore
from agent.app import App
from agent.turn.router import AgentRouter
from bots.alerts import AlertFanout
from bots.app import build_app
from bots.discord.alerts import DiscordAdminAlerts
from bots.discord.bot import DiscordBot, make_bot
from bots.discord.events import DiscordSettings
from bots.metrics import PrometheusMetrics
from tests.helpers import REPO
from tests.standins.discord_standin import ADMIN_CHANNEL_ID, ADMIN_ROLE_ID, GUILD_ID, StandInDiscord, user

ALICE = user("510000000000000001", "alice")  # customer C-001 in data/customers.json
MALLORY = user("520000000000000009", "mallory")
DANA = user("530000000000000004", "dana")  # holds the admin role


def settings(standin: StandInDiscord, **extra: Any) -> DiscordSettings:
    values: dict[str, Any] = {
        "token": "test-token",
        "guild_id": int(GUILD_ID),
        "admin_channel_id": int(ADMIN_CHANNEL_ID),
        "admin_role_ids": {int(ADMIN_ROLE_ID)},
        "api_base": standin.api_base,
        "gateway_url": standin.gateway_url,
        "guild_ready_timeout": 0.05,
        "identify_interval": 0.0,  # the stand-in takes IDENTIFYs back to back
        **extra,
    }
    return DiscordSettings(**values)


@dataclass
class Running:
    bot: DiscordBot
    app: App
    fanout: AlertFanout
    metrics: PrometheusMetrics

    @property
    def router(self) -> AgentRouter:
        return self.app.router


@asynccontextmanager
async def running_bot(
    standin: StandInDiscord, db_url: str, app: App | None = None, **extra: Any
) -> AsyncIterator[Running]:
    """Start the bot, wait until it is ready (commands synced, guild received), stop it afterwards.

    `extra` overrides the settings (e.g. `guild_id=None` for global commands in many servers,
    `shard_count=2, shard_ids=[1]` for one of two shard processes)."""
    given = settings(standin, **extra)
    store = SqlStore(db_url)
    notifier = DiscordAdminAlerts(given.admin_channel_id)
    fanout = AlertFanout([notifier])
    metrics = PrometheusMetrics()
    app = app or build_app(
        REPO / "config", REPO / "data", db_url, storage=sql_storage(store), alerts=fanout, metrics=metrics
    )
    bot = make_bot(given, app, admin_alerts=notifier, metrics=metrics)
    standin.identified.clear()
    task = asyncio.create_task(bot.start("test-token"))
    try:
        await asyncio.wait_for(bot.wait_until_ready(), 10)
        yield Running(bot, app, fanout, metrics)
        await bot.dispatcher.drain()
    finally:
        await bot.close()
        await asyncio.gather(task, return_exceptions=True)
        await app.aclose()
