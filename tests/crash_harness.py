"""Crash runs: real `agentbot slack` worker processes against the stand-in Slack, SIGKILLed at chosen
points and restarted on the same database, while signed events (with Slack-style retries and
duplicate deliveries) arrive in many threads. What users saw is counted from the stand-in: every
message the bot posts carries its outbound id in Slack message metadata (`<event>:<n>/<part>`).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from pydantic import BaseModel

from tests.helpers import REPO, sigkill, terminate
from tests.slack_harness import ALICE, CHANNEL, SECRET, sign
from tests.standins.slack_standin import BOT_USER_ID, TEAM_ID, SlackStandIn

USERS = [ALICE, "U0BILAL02", "U0CHEN003"]  # three customers: one task list each, across many threads
KINDS = ["after_ack", "after_pre", "during_commit", "after_send_before_mark"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Worker:
    """One `agentbot slack` process; restartable on the same port and database."""

    def __init__(self, name: str, db_url: str, api_url: str, logs: Path):
        self.name, self.db_url, self.api_url, self.logs = name, db_url, api_url, logs
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/slack/events"
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self.ready_at = 0.0
        self.starts = 0
        self.killed = False

    def start(self) -> None:
        env = {
            **os.environ,
            "SLACK_BOT_TOKEN": "xoxb-crash",
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": self.api_url,
            "AGENTBOT_DB_URL": self.db_url,
            # Two workers, a model loading after each kill and other jobs on two shared CPUs put up
            # to ~50 ms between deliveries sent 1-5 ms apart; a real deployment sets this to its
            # own delivery jitter (shipped: 50 ms).
            "AGENTBOT_INBOX_SETTLE_MS": "250",
            # This checkout's code, whatever checkout the `agentbot` package was installed from.
            "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
        }
        env.pop("SLACK_APP_TOKEN", None)
        self.starts += 1
        self.killed = False
        # Its calls say when they left (`stamp_sends`): the stand-in tells a call already on its way
        # when another worker's call was refused from one made after the refusal.
        code = (
            "import sys; from tests.standins.slack_standin import stamp_sends; stamp_sends(); "
            "from bots.cli import main; sys.exit(main())"
        )
        args = [
            "slack",
            "--port",
            str(self.port),
            "--config-dir",
            str(REPO / "config"),
            "--data-dir",
            str(REPO / "data"),
        ]
        with (self.logs / f"{self.name}-{self.starts}.log").open("wb") as log:  # the child keeps its copy
            self.proc = subprocess.Popen(
                [sys.executable, "-c", code, *args], env=env, stdout=log, stderr=log, cwd=self.logs
            )
        self.started_at, self.ready_at = time.monotonic(), 0.0

    def kill(self) -> None:
        self.killed = True
        sigkill(self.proc)
        self.ready_at = 0.0

    def stop(self) -> None:
        terminate(self.proc)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and self.ready_at > 0


@dataclass
class Planned:
    id: str
    thread: int
    index: int
    user: str
    text: str
    ts: str
    root: str
    acked_at: float = 0.0
    worker: str = ""
    # Its first delivery found no worker up (one was being killed or restarted), so it was stored a
    # retry later: the platform delivered it late, and a later message may rightly have run first.
    delivered_late: bool = False


@dataclass
class Kill:
    kind: str
    worker: str
    at: float
    restarted_at: float = 0.0
    ready_at: float = 0.0  # when the restarted worker answered HTTP again (its start-up is over)
    interrupted: list[str] = field(default_factory=list)


class Result(BaseModel):
    run: str
    events: int
    kills: int
    lost: int  # events with no answer
    duplicated_answers: int  # events with an answer part posted more than once
    duplicated_pre: int  # events with more than one pre-message posted
    out_of_order_threads: int
    duplicate_task_numbers: int
    task_rows: int
    tasks_confirmed: int  # "Added to your list" answers, one per task row expected
    user_turns_stored_twice: int
    max_recovery_s: float  # interrupted event: its restarted worker serving again (or the kill) -> its first answer
    kill_kinds: dict[str, int]
    crossed_pairs: int = 0  # double texts delivered later-first to two workers


class CrashRun:
    """
    Args:
        db_url: the database every worker shares.
        workers: how many worker processes (events are spread over the live ones).
        kills: the kill points, in order; each fires once the previous restart is settled.
        threads, per_thread: the workload (every thread's first event mentions the bot).
        pace: at most this many seconds between two events of a thread (the run's length).
        crossed: with several workers, this share of a thread's messages come as a crossed pair:
            two texts a few milliseconds apart, the later one delivered first to one worker and
            the earlier 1-5 ms after to another (two people typing at once, Slack reordering).
    """

    def __init__(
        self,
        name: str,
        db_url: str,
        tmp: Path,
        *,
        workers: int,
        kills: list[str],
        threads: int,
        per_thread: int,
        pace: float = 0.4,
        crossed: float = 0.0,
    ):
        self.name, self.db_url, self.tmp = name, db_url, tmp
        self.slack = SlackStandIn()
        self.workers_n, self.plan_kills = workers, list(kills)
        self.threads, self.per_thread, self.pace = threads, per_thread, pace
        self.crossed = crossed
        self.crossed_pairs = 0
        self.out_of_order_roots: list[tuple[str, list[int]]] = []  # for the failure message
        self.kill_every = threads * per_thread * 0.8 / (len(kills) + 1)
        self.workers: list[Worker] = []
        self.kills: list[Kill] = []
        self.events: dict[str, Planned] = {}
        self.first_answer_at: dict[str, float] = {}
        self.rng = random.Random(15)
        self._killing = False
        self.died: set[str] = set()

    # the moments a worker dies

    def _armed(self) -> str | None:
        if self._killing or not self.plan_kills:
            return None
        # Kills are spread over the run: the next one waits for its share of the events to be acked.
        acked = sum(1 for e in self.events.values() if e.acked_at)
        if acked < (len(self.kills) + 1) * self.kill_every:
            return None
        if any(not w.alive or time.monotonic() - w.ready_at < 1.0 for w in self.workers):
            return None
        return self.plan_kills[0]

    def _kill(self, kind: str, worker: Worker) -> None:
        self._killing = True
        self.plan_kills.pop(0)
        worker.kill()
        pending = [e.id for e in self.events.values() if e.acked_at and e.id not in self.first_answer_at]
        self.kills.append(Kill(kind=kind, worker=worker.name, at=time.monotonic(), interrupted=pending))
        asyncio.get_running_loop().call_soon(self._restart, worker)

    def _restart(self, worker: Worker) -> None:
        worker.start()
        self.kills[-1].restarted_at = worker.started_at
        self._killing = False

    def _on_call(self, method: str, params: dict[str, Any]) -> None:
        if method != "chat.postMessage":
            return
        mid = str(((params.get("metadata") or {}).get("event_payload") or {}).get("id", ""))
        event, _, rest = mid.partition(":")
        if rest[:1].isdigit() and event not in self.first_answer_at:
            self.first_answer_at[event] = time.monotonic()
        kind = self._armed()
        if kind is None or event not in self.events:
            return
        worker = next((w for w in self.workers if w.name == self.events[event].worker), self.workers[0])
        posted_pre, posted_answer = rest.startswith("p"), rest[:1].isdigit()
        if (kind == "after_pre" and posted_pre) or (kind == "after_send_before_mark" and posted_answer):
            self._kill(kind, worker)
        elif kind == "during_commit" and rest.startswith("p"):
            # The worker gets this answer, runs its tool and commits: it dies somewhere in there.
            self._killing = True
            delay = self.rng.uniform(0.002, 0.03)
            asyncio.get_running_loop().call_later(delay, self._kill_later, kind, worker)

    def _kill_later(self, kind: str, worker: Worker) -> None:
        self._killing = False
        self._kill(kind, worker)

    # Slack's side: signed deliveries with retries, and duplicates

    async def _deliver(self, session: aiohttp.ClientSession, e: Planned, first: Worker, delay: float = 0.0) -> None:
        if delay:
            await asyncio.sleep(delay)
        event: dict[str, Any] = {"user": e.user, "ts": e.ts, "channel": CHANNEL}
        if e.index == 0:
            event |= {"type": "app_mention", "text": f"<@{BOT_USER_ID}> {e.text}"}
        else:
            event |= {"type": "message", "channel_type": "channel", "text": e.text, "thread_ts": e.root}
        body = json.dumps(
            {
                "token": "t",
                "team_id": TEAM_ID,
                "api_app_id": "A0",
                "type": "event_callback",
                "event_id": e.id,
                "event_time": int(time.time()),
                "event": event,
            }  # fmt: skip
        ).encode()
        attempt = 0
        while True:
            live = [w for w in self.workers if w.alive]
            worker = first if first.alive or not live else live[0]
            if await self._post(session, worker, body, attempt):
                break
            attempt += 1
            await asyncio.sleep(0.25)
        e.acked_at, e.worker, e.delivered_late = time.monotonic(), worker.name, attempt > 0
        if self._armed() == "after_ack":
            self._kill("after_ack", worker)
        if self.rng.random() < 0.15:  # Slack delivers some events twice
            await asyncio.sleep(self.rng.uniform(0.0, 0.3))
            live = [w for w in self.workers if w.alive]
            if live:
                await self._post(session, self.rng.choice(live), body, attempt + 1)

    async def _post(self, session: aiohttp.ClientSession, worker: Worker, body: bytes, attempt: int) -> bool:
        stamp = str(int(time.time()))
        headers = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": stamp,
                   "X-Slack-Signature": sign(SECRET, stamp, body)}  # fmt: skip
        if attempt:
            headers |= {"X-Slack-Retry-Num": str(attempt), "X-Slack-Retry-Reason": "http_timeout"}
        try:
            async with session.post(worker.url, data=body, headers=headers, timeout=aiohttp.ClientTimeout(3)) as r:
                return r.status == 200
        except (aiohttp.ClientError, TimeoutError):
            return False

    async def _thread(self, session: aiohttp.ClientSession, t: int) -> None:
        root = f"{1700000000 + t}.000100"
        user = USERS[t % len(USERS)]
        texts = ["where is O-12345?", "add a task: call supplier {t}-{k}", "where is O-23456?", "what's on my list?"]
        self.slack.seed_thread(CHANNEL, [{"ts": root, "user": user, "text": f"<@{BOT_USER_ID}> hello"}])
        k = -1

        def planned(k: int) -> Planned:
            ts = root if k == 0 else f"{1700000000 + t}.{k + 200:06d}"
            text = texts[(t + k) % len(texts)].format(t=t, k=k)
            e = Planned(id=f"Ev{t:02d}x{k:02d}", thread=t, index=k, user=user, text=text, ts=ts, root=root)
            self.events[e.id] = e
            return e

        # Threads go on past `per_thread` (up to three times as far) until every planned kill landed.
        while (k := k + 1) < self.per_thread or (self.plan_kills and k < 3 * self.per_thread):
            e = planned(k)
            first = self.workers[k % len(self.workers)]  # consecutive events of a thread hit different workers
            if k > 0 and len(self.workers) > 1 and self.rng.random() < self.crossed:
                later = planned(k := k + 1)
                await asyncio.gather(
                    self._deliver(session, later, self.workers[k % len(self.workers)]),
                    self._deliver(session, e, first, delay=self.rng.uniform(0.001, 0.005)),
                )
                self.crossed_pairs += 1
                e = later
            else:
                await self._deliver(session, e, first)
            if self.rng.random() < 0.5:  # double texting half the time; otherwise wait for the answer
                await self._until(lambda e=e: e.id in self.first_answer_at, 60)
            await asyncio.sleep(self.rng.uniform(0.05, self.pace))

    async def _until(self, check: Any, within: float) -> bool:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if check():
                return True
            await asyncio.sleep(0.05)
        return False

    async def _wait_ready(self, session: aiohttp.ClientSession) -> None:
        while True:
            for w in self.workers:
                if w.proc is not None and w.proc.poll() is not None and not w.ready_at and not w.killed:
                    self.died.add(f"{w.name}-{w.starts}")  # exited by itself: see its log
                if w.ready_at or w.proc is None or w.proc.poll() is not None:
                    continue
                try:
                    async with session.get(w.url, timeout=aiohttp.ClientTimeout(1)):
                        w.ready_at = time.monotonic()
                except (aiohttp.ClientError, TimeoutError):
                    continue
                for k in reversed(self.kills):
                    if k.worker == w.name:
                        k.ready_at = k.ready_at or w.ready_at
                        break
            await asyncio.sleep(0.05)

    # the run

    async def run(self, open_events: Any) -> None:
        """Play the workload; `open_events()` counts inbox rows not yet done (read from the database)."""
        api = await self.slack.start()
        self.slack.on_call.append(self._on_call)
        logs = self.tmp / f"logs-{self.name}"
        logs.mkdir(parents=True, exist_ok=True)
        self.workers = [Worker(f"w{i}", self.db_url, api, logs) for i in range(self.workers_n)]
        for w in self.workers:
            w.start()
        async with aiohttp.ClientSession() as session:
            watcher = asyncio.create_task(self._wait_ready(session))
            try:
                await self._until(lambda: all(w.ready_at for w in self.workers), 60)
                await asyncio.gather(*(self._thread(session, t) for t in range(self.threads)))
                done = await self._until(lambda: len(self.first_answer_at) >= len(self.events), 120)
                assert not self.died, f"workers exited by themselves: {sorted(self.died)} (logs in {logs})"
                assert done, f"unanswered: {sorted(set(self.events) - set(self.first_answer_at))[:10]}"
                for _ in range(600):
                    if await open_events() == 0:
                        break
                    await asyncio.sleep(0.1)
                await asyncio.sleep(1.0)  # a late duplicate would show up here
            finally:
                watcher.cancel()
                for w in self.workers:
                    w.stop()
                await self.slack.aclose()

    def result(self, task_rows: list[tuple[str, int]], user_turns: list[str] | None = None) -> Result:
        posts = [p for p in self.slack.to("chat.postMessage") if p.get("metadata")]
        parts = Counter(str(p["metadata"]["event_payload"]["id"]) for p in posts)
        answered: set[str] = set()
        dup_answer: set[str] = set()
        pre: dict[str, set[str]] = defaultdict(set)
        pre_posts: Counter[str] = Counter()
        confirmed = 0
        for part, n in parts.items():
            event, _, rest = part.partition(":")
            if rest.startswith("p"):
                pre[event].add(rest.split("/")[0])
                pre_posts[event] += n
                continue
            if rest[:1].isdigit():
                answered.add(event)
            if n > 1:
                dup_answer.add(event)
        for p in posts:
            if (
                str(p["metadata"]["event_payload"]["id"]).split(":")[1][:1].isdigit()
                and "Added to your list" in p["text"]
            ):
                confirmed += 1
        out_of_order = 0
        for (_channel, _root), messages in self.slack.threads.items():
            order = [
                (self.events[ev].index)
                for m in messages
                if (ev := str(((m.get("metadata") or {}).get("event_payload") or {}).get("id", "")).split(":")[0])
                in self.events
                and not self.events[ev].delivered_late
            ]
            out_of_order += order != sorted(order)
            if order != sorted(order):
                self.out_of_order_roots.append((_root, order))
        numbers = Counter(task_rows)
        interrupted = {e for k in self.kills for e in k.interrupted if e in self.first_answer_at}

        # Measured from the last kill before the answer (an event can be interrupted twice), from
        # when its worker was serving again if that was before the answer: a process's start-up
        # (imports, the model) is what a loaded machine stretches, and is not the inbox's recovery.
        # An answer before the restarted worker was up came from another worker: from the kill.
        def since(k: Kill, answer: float) -> float:
            return k.ready_at if 0 < k.ready_at < answer else k.at

        recoveries = [
            self.first_answer_at[e] - max(since(k, self.first_answer_at[e]) for k in before)
            for e in interrupted
            if (before := [k for k in self.kills if k.at < self.first_answer_at[e]])
        ]
        return Result(
            run=self.name,
            events=len(self.events),
            kills=len(self.kills),
            lost=len(set(self.events) - answered),
            duplicated_answers=len(dup_answer),
            duplicated_pre=sum(1 for e in self.events if pre_posts[e] > 1),
            out_of_order_threads=out_of_order,
            duplicate_task_numbers=sum(n - 1 for n in numbers.values() if n > 1),
            task_rows=len(task_rows),
            tasks_confirmed=confirmed,
            user_turns_stored_twice=sum(1 for n in Counter(user_turns or []).values() if n > 1),
            max_recovery_s=round(max(recoveries, default=0.0), 2),
            kill_kinds=dict(Counter(k.kind for k in self.kills)),
            crossed_pairs=self.crossed_pairs,
        )
