"""The Discord defer bench: how fast /ask is deferred while slow turns run, through the real discord.py.

The bot runs against the stand-in Discord on loopback on an SQLite file. N /ask interactions arrive
a few milliseconds apart; every turn looks up an order through a data source that takes
`--slow-ms`, so many turns are in flight while new interactions arrive. Measured per interaction:
the time from the stand-in sending INTERACTION_CREATE to receiving the defer callback (Discord
allows 3 s), and to the answer landing in the conversation's thread.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any

from adapters.data.json_source import JSONDataSource
from bots.alerts import AlertFanout
from bots.app import build_app
from bots.discord.events import DiscordSettings
from bots.wiring import resolve_dir
from tests.bench_channel import ChannelBench, latency
from tests.standins.discord_standin import GUILD_ID, Call, StandInDiscord, user


class SlowData(JSONDataSource):
    """The demo data behind a slow backend: every order lookup takes `delay` seconds."""

    def __init__(self, data_dir: Path, delay: float):
        super().__init__(data_dir)
        self.delay = delay

    async def get_order(self, order_id: str) -> dict[str, Any] | None:
        await asyncio.sleep(self.delay)
        return await super().get_order(order_id)


class DiscordBench(ChannelBench):
    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--interactions", type=int, default=200, help="/ask interactions to send")
        parser.add_argument("--slow-ms", type=float, default=500.0, help="order lookup time in each turn")
        parser.add_argument("--spacing-ms", type=float, default=5.0, help="time between interactions")

    async def measure(self, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
        from bots.discord.bot import DiscordBot

        standin = await StandInDiscord().start()
        data = SlowData(resolve_dir(args.data_dir, "data"), args.slow_ms / 1000)
        url = args.db_url or f"sqlite+aiosqlite:///{tmp / 'bench.db'}"
        app = build_app(args.config_dir, args.data_dir, url, data_source=data, alerts=AlertFanout([]))
        settings = DiscordSettings(
            token="bench", guild_id=int(GUILD_ID), api_base=standin.api_base, gateway_url=standin.gateway_url,
            guild_ready_timeout=0.05,
        )  # fmt: skip
        bot = DiscordBot(settings, app)
        runner = asyncio.create_task(bot.start(settings.token))
        try:
            await asyncio.wait_for(bot.wait_until_ready(), 30)
            asker = user("510000000000000001", "alice")
            started = time.perf_counter()
            ids = []
            for _ in range(args.interactions):
                ids.append(await standin.slash("ask", {"question": "where is my order O-12345?"}, asker))
                await asyncio.sleep(args.spacing_ms / 1000)

            def answered() -> list[Call]:
                return [p for p in standin.calls if p.method == "POST" and "shipped" in str(p.body)]

            def all_answered() -> bool:
                return len(answered()) >= len(ids)

            await standin.wait_until(all_answered, within=60 + args.interactions * args.slow_ms / 1000)
            wall = time.perf_counter() - started
            defers = {c.path.split("/")[2]: c.at for c in standin.calls_to("POST", "/interactions/")}
            threads = {c.path.split("/")[4]: c for c in standin.calls_to("POST", "/threads")}
            answers = {c.path.split("/")[2]: c.at for c in answered()}
            to_answer = [answers[t] - standin.dispatched_at[standin.followup_of[t]] for t in threads if t in answers]
            await bot.dispatcher.drain()
        finally:
            await bot.close()
            await asyncio.gather(runner, return_exceptions=True)
            await app.aclose()
            await standin.aclose()
        return {
            "interactions": len(ids),
            "slow_ms": args.slow_ms,
            "spacing_ms": args.spacing_ms,
            "defer": latency([defers[i] - standin.dispatched_at[i] for i in ids]),
            "answer_in_thread": latency(to_answer),
            "wall_s": round(wall, 2),
        }

    def lines(self, report: dict[str, Any]) -> list[str]:
        rows = (("defer (Discord allows 3000)", "defer"), ("answer in the thread", "answer_in_thread"))
        return [
            f"agentbot bench discord: {report['interactions']} /ask interactions {report['spacing_ms']} ms apart, "
            f"each turn with a {report['slow_ms']} ms order lookup (real discord.py, stand-in Discord, SQLite file)",
            f"{'':<28}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}",
            *(
                f"{name:<28}{report[key]['p50_ms']:>10.2f}{report[key]['p99_ms']:>10.2f}{report[key]['max_ms']:>10.2f}"
                for name, key in rows
            ),
            f"wall: {report['wall_s']} s",
        ]


if __name__ == "__main__":
    raise SystemExit(DiscordBench("discord", __doc__ or "").main())
