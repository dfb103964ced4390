"""`agentbot discord`: the composition of the Discord channel, read from the environment once."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from collections.abc import Mapping

from agent.context.output import AlertNotifier
from bots.admin.settings import AdminSettings
from bots.alerts import AlertFanout, LogNotifier
from bots.app import build_app, check_store
from bots.cli.failures import Exit
from bots.discord.events import DiscordSettings
from bots.metrics import PrometheusMetrics
from bots.reload import reloading
from bots.serving import bind_address, metrics_port, serve_health, settle_heap
from bots.settings import DeploySettings

log = logging.getLogger("agentbot.discord")


async def serve(
    args: argparse.Namespace, settings: DiscordSettings, env: Mapping[str, str], deploy: DeploySettings
) -> None:
    """Run the bot until it is stopped: router, inbox, admin alerts and the discord.py client."""
    from bots.admin.pages import AdminMount
    from bots.discord.alerts import DiscordAdminAlerts
    from bots.discord.bot import make_bot

    # Each server's admin channel is its own (set there); DISCORD_ADMIN_CHANNEL_ID is the default.
    admin = DiscordAdminAlerts(settings.admin_channel_id)
    notifiers: list[AlertNotifier] = [LogNotifier(), admin]
    metrics = PrometheusMetrics()
    async with build_app(
        args.config_dir, args.data_dir, args.db_url, alerts=AlertFanout(notifiers), env=env, metrics=metrics
    ) as app:
        metrics.store = app.storage.database  # the backlog gauges read the app's database at each scrape
        await check_store(app)
        settle_heap()
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(reloading(app))  # SIGHUP and `agentbot review apply` reload the banks
            port = metrics_port(deploy.server)
            if port is not None and app.storage.database is not None:
                host = bind_address(None, port, deploy.server).host
                page = AdminMount(app, AdminSettings.from_settings(deploy, args.config_dir, args.data_dir))
                url = await stack.enter_async_context(serve_health(app.storage.database, app.metrics, host, port, page))
                log.info("agentbot discord: /metrics, /healthz and /readyz on %s", url)
                if page.settings.enabled:
                    log.info("agentbot discord: the operator page on %s/admin", url)
            bot = make_bot(settings, app, admin_alerts=admin, metrics=metrics)
            async with bot:
                await bot.start(settings.token)


def run_discord(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    deploy = DeploySettings.from_env(env)
    settings = DiscordSettings.from_settings(deploy)  # a missing token stops here, before any connection
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    import discord

    try:
        asyncio.run(serve(args, settings, env, deploy))
    except discord.LoginFailure:
        print(
            "agentbot: Discord rejected DISCORD_BOT_TOKEN (reset it in the Developer Portal, Bot tab)", file=sys.stderr
        )
        return Exit.PLATFORM
    except discord.PrivilegedIntentsRequired:
        print(
            "agentbot: enable the MESSAGE CONTENT intent for the bot (Developer Portal, Bot tab, "
            "Privileged Gateway Intents)",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        pass
    return 0
