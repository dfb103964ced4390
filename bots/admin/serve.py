"""`agentbot admin`: the operator page alone, on $PORT, for a project whose bot serves no HTTP of its
own (the console, an evaluation project). Labels applied here reach running bots on the same
project through the stamp file they watch (bots/reload.py)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
from collections.abc import Mapping

from agent.errors import ConfigError
from bots.admin.settings import AdminSettings
from bots.app import build_app, check_store
from bots.reload import reloading
from bots.serving import bind_address, serve_health
from bots.settings import DeploySettings

log = logging.getLogger("agentbot.admin")


async def serve(args: argparse.Namespace, env: Mapping[str, str], admin: AdminSettings) -> None:
    from bots.admin.pages import AdminMount

    bind = bind_address(args.host, args.port, DeploySettings.from_env(env).server)
    async with build_app(args.config_dir, args.data_dir, args.db_url, env=env) as app:
        await check_store(app)
        if app.storage.database is None:
            raise ConfigError("settings", "the operator page reads the bot's database, and this store has none")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        mount = AdminMount(app, admin)
        async with reloading(app), serve_health(app.storage.database, app.metrics, bind.host, bind.port, mount) as url:
            log.info("agentbot admin: the operator page on %s/admin (%s)", url, bind.why)
            await stop.wait()


def run_admin(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    admin = AdminSettings.from_settings(DeploySettings.from_env(env), args.config_dir, args.data_dir)
    if not admin.enabled:
        raise ConfigError(
            "environment",
            "AGENTBOT_ADMIN_TOKEN is not set: the operator page opens only with a token",
            field="AGENTBOT_ADMIN_TOKEN",
        )
    asyncio.run(serve(args, env, admin))
    return 0
