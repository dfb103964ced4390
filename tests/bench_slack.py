"""The Slack ack bench: how fast the Slack app acks while every turn is slow.

The real app (bolt + aiohttp on 127.0.0.1, SQLite file, the real router) talks to the stand-in Web
API. Each turn is made slow at the customer lookup (a CRM that takes `--turn-seconds`), then N
signed `app_mention` events, each starting its own thread, are posted 10 at a time; the HTTP
response time of each is the ack latency Slack sees. Afterwards 10% of the events are delivered
again with `X-Slack-Retry-Num`, and the run checks that every thread got exactly one answer.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import time
from pathlib import Path
from typing import Any

import aiohttp

from adapters.data.json_source import JSONDataSource
from bots.slack.serve import SlackSettings, build_slack, serve_http
from bots.wiring import resolve_dir
from tests.bench_channel import ChannelBench, latency
from tests.standins.slack_standin import BOT_USER_ID, TEAM_ID, SlackStandIn

SECRET = "bench-signing-secret"
IN_FLIGHT = 10
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


class SlowCustomers(JSONDataSource):
    """The demo data behind a customer lookup that takes `delay` seconds: a slow turn."""

    def __init__(self, data_dir: Path, delay: float):
        super().__init__(data_dir)
        self.delay = delay

    async def find_customer(self, platform: str, user_id: str) -> dict[str, Any] | None:
        await asyncio.sleep(self.delay)
        return await super().find_customer(platform, user_id)


def signed(body: bytes, retry: int | None = None) -> dict[str, str]:
    timestamp = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": timestamp}
    headers["X-Slack-Signature"] = f"v0={digest}"
    if retry is not None:
        headers["X-Slack-Retry-Num"] = str(retry)
    return headers


def mention(i: int) -> bytes:
    ts = f"{1700000000 + i}.000100"
    event = {"type": "app_mention", "user": "U0ALICE01", "text": f"<@{BOT_USER_ID}> where is O-12345", "ts": ts}
    event["channel"] = "C0BENCH"
    body = {"type": "event_callback", "team_id": TEAM_ID, "event_id": f"EvBench{i:06d}", "event": event}
    return json.dumps(body).encode()


async def send_all(url: str, bodies: list[bytes], retry: int | None) -> list[float]:
    latencies: list[float] = []
    gate = asyncio.Semaphore(IN_FLIGHT)
    async with aiohttp.ClientSession() as http:

        async def one(body: bytes) -> None:
            async with gate:
                started = time.perf_counter()
                async with http.post(url, data=body, headers=signed(body, retry)) as r:
                    await r.read()
                    if r.status != 200:
                        raise RuntimeError(f"Slack app answered {r.status}")
                latencies.append(time.perf_counter() - started)

        await asyncio.gather(*(one(b) for b in bodies))
    return latencies


class SlackBench(ChannelBench):
    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--events", type=int, default=200, help="signed events to send")
        parser.add_argument("--turn-seconds", type=float, default=5.0, help="how long each turn takes")

    async def measure(self, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
        for name in PROXY_VARIABLES:  # slack_sdk ignores NO_PROXY; this run never leaves 127.0.0.1
            os.environ.pop(name, None)
        stand_in = SlackStandIn()
        api = await stand_in.start()
        settings = SlackSettings(bot_token="xoxb-bench", signing_secret=SECRET, api_url=api)
        data = SlowCustomers(resolve_dir(args.data_dir, "data"), args.turn_seconds)
        url = args.db_url or f"sqlite+aiosqlite:///{tmp / 'bench.db'}"
        channel = build_slack(settings, args.config_dir, args.data_dir, url, env={}, data_source=data)
        try:
            async with channel.app, serve_http(channel, "127.0.0.1", 0) as server:
                events = f"{server.url}/slack/events"
                await send_all(events, [mention(-1)], None)  # warm-up: auth.test, first connections
                await stand_in.wait_for("chat.postMessage", 2, within=args.turn_seconds + 30)
                started = time.perf_counter()
                bodies = [mention(i) for i in range(args.events)]
                acks = await send_all(events, bodies, None)
                sent_in = time.perf_counter() - started
                retries = await send_all(events, bodies[::10], 1)
                await stand_in.wait_for("chat.postMessage", 2 * (args.events + 1), within=args.turn_seconds + 60)
                answered_in = time.perf_counter() - started
                await channel.dispatcher.drain()
        finally:
            await stand_in.aclose()
        answers = [p for p in stand_in.to("chat.postMessage") if "shipped" in p.get("text", "")]
        return {
            "events": args.events,
            "turn_seconds": args.turn_seconds,
            "in_flight": IN_FLIGHT,
            "ack": latency(acks),
            "retry_ack": latency(retries),
            "all_sent_s": round(sent_in, 2),
            "all_answered_s": round(answered_in, 2),
            "answers": len(answers) - 1,  # minus the warm-up thread's
            "duplicate_answers": len(answers) - len({p.get("thread_ts") for p in answers}),
        }

    def lines(self, report: dict[str, Any]) -> list[str]:
        ack = report["ack"]
        return [
            f"agentbot bench slack: {report['events']} signed app_mention events, {report['in_flight']} in flight, "
            f"each turn taking {report['turn_seconds']} s (real bolt + aiohttp + router + SQLite file)",
            f"ack latency: p50 {ack['p50_ms']} ms, p99 {ack['p99_ms']} ms, max {ack['max_ms']} ms",
            f"retries (X-Slack-Retry-Num, 10% of events): ack p99 {report['retry_ack']['p99_ms']} ms",
            f"all {report['events']} acked in {report['all_sent_s']} s; all answered {report['all_answered_s']} s "
            f"after the first was sent; answers {report['answers']}, duplicates {report['duplicate_answers']}",
        ]

    def held(self, report: dict[str, Any]) -> bool:
        """Every thread answered, and once."""
        return report["duplicate_answers"] == 0 and report["answers"] == report["events"]


if __name__ == "__main__":
    raise SystemExit(SlackBench("slack", __doc__ or "").main())
