"""A burst under a rate limit: many order questions in many threads while the stand-in Slack answers
every posting call 429 with `Retry-After` for a while. What users saw is counted from the stand-in
(every message the bot posts carries its outbound id, `<event>:<n>/<part>`, in its metadata).

The issue's figures are the defaults of `BurstPlan`; CI runs a scaled plan, and
`AGENTBOT_BURST=full` runs the defaults.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable

import aiohttp
from pydantic import BaseModel

from tests.slack_harness import SECRET, sign
from tests.standins.slack_standin import BOT_USER_ID, TEAM_ID, RateLimitWindow, SlackStandIn

# The demo customers and their orders (data/customers.json, data/orders.json).
CUSTOMERS = [
    ("U0ALICE01", ["O-12345", "O-23456", "O-24680"]),
    ("U0BILAL02", ["O-34567", "O-45678", "O-35791", "O-46802"]),
    ("U0CHEN003", ["O-56789", "O-67890"]),
]
POSTING = {"chat.postMessage", "chat.postEphemeral", "chat.update"}


class BurstPlan(BaseModel):
    threads: int = 30
    per_thread: int = 10
    window: float = 20.0  # seconds of 429 on every posting call, from the burst's start
    retry_after: int = 5
    channels: int = 15  # threads are spread over this many channels (Slack paces per channel)


SCALED = BurstPlan(threads=12, per_thread=4, window=6.0, retry_after=2, channels=12)


def plan_from_env() -> BurstPlan:
    return BurstPlan() if os.environ.get("AGENTBOT_BURST") == "full" else SCALED


class BurstResult(BaseModel):
    events: int
    lost: int  # no answer
    duplicated: int  # an answer or pre-message part posted more than once
    out_of_order: int  # threads whose messages appeared in another order than asked
    wrong_order: int  # answers that do not name the order asked about
    too_soon: int  # calls sent sooner than Retry-After after a 429 on the same method and workspace was answered
    in_flight_at_429: int  # calls that arrived in such a pause but had been sent before the 429 was answered
    refused: int  # 429s the bot got
    pre_shown: int
    pre_skipped: int  # recorded as skipped (their answer had gone out)
    pre_missing: int  # answered events whose pre-message is neither shown nor counted
    auth_tests: int
    max_ack_s: float
    drained_s: float  # from the window's end until every event is answered and done


class Burst:
    """
    Args:
        slack: the stand-in (started); its rate-limit window opens when the burst starts.
        workers: the URLs events are posted to (`/slack/events`), tried in turn when one is down.
        plan: the workload and the window.
    """

    def __init__(self, slack: SlackStandIn, workers: Callable[[], list[str]], plan: BurstPlan):
        self.slack, self.workers, self.plan = slack, workers, plan
        self.asked: dict[str, tuple[int, int, str]] = {}  # event id -> (thread, index, order id)
        self.acks: list[float] = []
        self.window_end = 0.0

    async def run(
        self,
        open_events: Callable[[], Awaitable[int]],
        within: float = 120.0,
        until: Callable[[], Awaitable[object]] | None = None,
    ) -> float:
        """Play the burst; return seconds from the window's end until it drained. A question in a
        thread of its own is answered first, so every worker has answered once before the window.
        With `until`, the window lasts until that returns too (`within` at most), however long it
        takes on a loaded machine."""
        async with aiohttp.ClientSession() as session:
            for n, _url in enumerate(self.workers()):
                ts = f"1690000000.{n:06d}"
                event = {"type": "app_mention", "user": CUSTOMERS[0][0], "ts": ts, "channel": "C0WARMUP",
                         "text": f"<@{BOT_USER_ID}> where is {CUSTOMERS[0][1][0]}?"}  # fmt: skip
                body = {"token": "t", "team_id": TEAM_ID, "api_app_id": "A0", "type": "event_callback",
                        "event_id": f"EvWarm{n}", "event_time": int(time.time()), "event": event}  # fmt: skip
                await self._deliver(session, json.dumps(body).encode(), first=n)
                await self.slack.wait_for("chat.postMessage", 2 * (n + 1), within=60)
            self.acks.clear()
            window = self.slack.rate_limit(POSTING, self.plan.window, self.plan.retry_after)
            if until is None:
                await asyncio.gather(*(self._thread(session, t) for t in range(self.plan.threads)))
            else:
                window.seconds = within
                await asyncio.gather(
                    *(self._thread(session, t) for t in range(self.plan.threads)),
                    self._hold_open(window, until, within),
                )
            self.window_end = window.start + window.seconds
            deadline = time.monotonic() + within
            while time.monotonic() < deadline:
                if self._answered() >= len(self.asked) and await open_events() == 0:
                    break
                await asyncio.sleep(0.1)
            drained = max(0.0, time.monotonic() - self.window_end)
            await asyncio.sleep(1.0)  # a late duplicate would show up here
        return drained

    async def _hold_open(self, window: RateLimitWindow, until: Callable[[], Awaitable[object]], within: float) -> None:
        try:
            async with asyncio.timeout(within):
                await until()
        except TimeoutError:
            pass  # the test sees that its condition was not met
        await asyncio.sleep(max(0.0, window.start + self.plan.window - time.monotonic()))
        window.close()

    def _answered(self) -> int:
        return len({self._part(p)[0] for p in self.slack.to("chat.postMessage") if self._part(p)[1][:1].isdigit()})

    @staticmethod
    def event_of(params: dict) -> str:
        """The event a posting call answers, by its outbound id."""
        return Burst._part(params)[0]

    @staticmethod
    def _part(params: dict) -> tuple[str, str]:
        mid = str(((params.get("metadata") or {}).get("event_payload") or {}).get("id", ""))
        event, _, rest = mid.partition(":")
        return event, rest

    async def _thread(self, session: aiohttp.ClientSession, t: int) -> None:
        user, orders = CUSTOMERS[t % len(CUSTOMERS)]
        channel = f"C0BURST{t % self.plan.channels:02d}"
        root = f"{1700000000 + t}.000100"
        for k in range(self.plan.per_thread):
            order = orders[(t + k) % len(orders)]
            event_id = f"EvB{t:02d}x{k:02d}"
            self.asked[event_id] = (t, k, order)
            ts = root if k == 0 else f"{1700000000 + t}.{k + 200:06d}"
            event: dict = {"user": user, "ts": ts, "channel": channel}
            if k == 0:
                event |= {"type": "app_mention", "text": f"<@{BOT_USER_ID}> where is {order}?"}
            else:
                event |= {"type": "message", "channel_type": "channel", "text": f"where is {order}?", "thread_ts": root}
            body = {"token": "t", "team_id": TEAM_ID, "api_app_id": "A0", "type": "event_callback",
                    "event_id": event_id, "event_time": int(time.time()), "event": event}  # fmt: skip
            await self._deliver(session, json.dumps(body).encode())

    async def _deliver(self, session: aiohttp.ClientSession, body: bytes, first: int = 0) -> None:
        """Like Slack: posted until a worker acks it (a retry after a refusal or a dead worker)."""
        attempt = first
        while True:
            urls = self.workers() or [""]
            url = urls[attempt % len(urls)]
            stamp = str(int(time.time()))
            headers = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": stamp,
                       "X-Slack-Signature": sign(SECRET, stamp, body)}  # fmt: skip
            if attempt > first:
                headers |= {"X-Slack-Retry-Num": str(attempt), "X-Slack-Retry-Reason": "http_timeout"}
            started = time.monotonic()
            try:
                if url:
                    async with session.post(url, data=body, headers=headers, timeout=aiohttp.ClientTimeout(3)) as r:
                        if r.status == 200:
                            self.acks.append(time.monotonic() - started)
                            return
            except (aiohttp.ClientError, TimeoutError):
                pass
            attempt += 1
            await asyncio.sleep(0.25)

    def result(self, drained: float, skipped_pre: set[str]) -> BurstResult:
        posts = [p for p in self.slack.to("chat.postMessage") if p.get("metadata")]
        parts = Counter(str(p["metadata"]["event_payload"]["id"]) for p in posts)
        answered, pre_shown, wrong = set(), set(), 0
        for p in posts:
            event, rest = self._part(p)
            if event not in self.asked:
                continue
            if rest.startswith("p"):
                pre_shown.add(event)
            elif rest[:1].isdigit():
                answered.add(event)
                if rest.startswith("0/0") and self.asked[event][2] not in p["text"]:
                    wrong += 1
        by_thread: dict[tuple[str, str], list[int]] = defaultdict(list)
        for p in posts:
            event, _ = self._part(p)
            if event in self.asked:
                by_thread[(p["channel"], str(p.get("thread_ts")))].append(self.asked[event][1])
        return BurstResult(
            events=len(self.asked),
            lost=len(set(self.asked) - answered),
            duplicated=sum(1 for n in parts.values() if n > 1),
            out_of_order=sum(1 for order in by_thread.values() if order != sorted(order)),
            wrong_order=wrong,
            too_soon=len(self.slack.too_soon()),
            in_flight_at_429=len(self.slack.in_flight_at_429()),
            refused=sum(1 for c in self.slack.calls if c.retry_after is not None),
            pre_shown=len(pre_shown),
            pre_skipped=len(skipped_pre),
            pre_missing=len(answered - pre_shown - skipped_pre),
            auth_tests=sum(1 for c in self.slack.calls if c.method == "auth.test"),
            max_ack_s=round(max(self.acks, default=0.0), 3),
            drained_s=round(drained, 1),
        )
