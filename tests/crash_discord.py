"""The Discord half of the crash runs: a real `agentbot discord` process (discord.py) against the
stand-in Discord, SIGKILLed when it posts (after a pre-message, after an answer before it is
marked sent, or a moment after a pre-message: during the commit) and restarted on the same
database. Posts are traced back to events by their nonces (`bots.outbox.nonce` of each id).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bots.outbox import nonce
from tests.crash_harness import Result
from tests.helpers import REPO
from tests.standins.discord_standin import GENERAL_ID, GUILD_ID, StandInDiscord, user

USERS = [user("510000000000000001", "alice"), user("510000000000000002", "bilal")]
TEXTS = ["where is O-12345?", "add a task: ship pallet {t}-{k}", "where is O-23456?", "what's on my list?"]


class DiscordCrashRun:
    def __init__(self, db_url: str, tmp: Path, *, kills: list[str], threads: int, per_thread: int):
        self.db_url, self.tmp = db_url, tmp
        self.plan_kills, self.threads, self.per_thread = list(kills), threads, per_thread
        self.standin = StandInDiscord()
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts, self.ready_at, self.killing = 0, 0.0, False
        self.events: dict[str, tuple[int, int]] = {}  # event key -> (thread, index)
        self.ids: dict[str, tuple[str, str]] = {}  # nonce -> (event key, outbound id)
        self.first_answer_at: dict[str, float] = {}
        self.kills: list[tuple[str, float, list[str]]] = []  # kind, restarted at, interrupted events
        self.rng = random.Random(15)
        self.live = asyncio.Event()

    def start(self) -> None:
        env = {
            **os.environ,
            "DISCORD_BOT_TOKEN": "test-token",
            "DISCORD_GUILD_ID": GUILD_ID,
            "DISCORD_API_BASE": self.standin.api_base,
            "DISCORD_GATEWAY_URL": self.standin.gateway_url,
            "AGENTBOT_DB_URL": self.db_url,
            "AGENTBOT_METRICS_PORT": "0",  # any free port: restarts and parallel runs never collide
        }
        self.starts += 1
        self.standin.identified.clear()
        code = "import sys; from bots.cli import main; sys.exit(main())"
        args = ["discord", "--config-dir", str(REPO / "config"), "--data-dir", str(REPO / "data")]
        with (self.tmp / f"discord-{self.starts}.log").open("wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-c", code, *args], env=env, stdout=log, stderr=log)
        self.ready_at = 0.0
        self.live.clear()

    def kill(self, kind: str) -> None:
        self.killing = True
        self.plan_kills.pop(0)
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        pending = [e for e in self.events if e not in self.first_answer_at]
        self.start()
        self.kills.append((kind, time.monotonic(), pending))
        self.killing = False

    def _register(self, key: str, t: int, k: int) -> None:
        self.events[key] = (t, k)
        for n in range(6):
            for oid in (f"{key}:{n}", f"{key}:p{n}"):
                for part in range(2):
                    self.ids[nonce(oid, part)] = (key, oid)

    def _on_post(self, path: str, body: dict[str, Any]) -> None:
        found = self.ids.get(str(body.get("nonce", "")))
        if found is None:
            return
        event, oid = found
        answer = not oid.split(":")[1].startswith("p")
        if answer:
            self.first_answer_at.setdefault(event, time.monotonic())
        armed = self.plan_kills[0] if self.plan_kills and not self.killing and self.ready_at else None
        if armed is None or time.monotonic() - self.ready_at < 1.0:
            return
        if (armed == "after_pre" and not answer) or (armed == "after_send_before_mark" and answer):
            self.kill(armed)
        elif armed == "during_commit" and not answer:
            self.killing = True
            asyncio.get_running_loop().call_later(self.rng.uniform(0.002, 0.03), self._kill_later)

    def _kill_later(self) -> None:
        self.killing = False
        self.kill("during_commit")

    async def _live(self) -> None:
        await self.live.wait()

    async def _watch(self) -> None:
        while True:
            if self.proc is not None and self.proc.poll() is not None:
                # Exited by itself (kills start the next one at once): fail now, with its own words.
                log = (self.tmp / f"discord-{self.starts}.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"the Discord worker exited with {self.proc.returncode}: {log}")
            if not self.ready_at and self.standin.identified.is_set():
                await asyncio.sleep(0.3)  # the guild arrives just after IDENTIFY
                self.ready_at = time.monotonic()
                self.live.set()
            await asyncio.sleep(0.02)

    async def _thread(self, t: int) -> None:
        author = USERS[t % len(USERS)]
        await self._live()
        iid = self.standin.new_id()
        self._register(iid, t, 0)
        await self.standin.slash(
            "ask", {"question": TEXTS[t % len(TEXTS)].format(t=t, k=0)}, author, interaction_id=iid
        )
        try:
            thread = await self.standin.wait_until(lambda: self._thread_of(iid), within=60)
        except AssertionError:
            return  # the bot died before the gateway handed it the command: Discord would say so
        k = 0
        # Threads go on past `per_thread` (up to three times as far) until every planned kill landed.
        while (k := k + 1) < self.per_thread or (self.plan_kills and k < 3 * self.per_thread):
            await asyncio.sleep(self.rng.uniform(0.05, 1.5))
            await self._live()
            mid = self.standin.new_id()
            self._register(mid, t, k)
            await self.standin.say(thread, author, TEXTS[(t + k) % len(TEXTS)].format(t=t, k=k), message_id=mid)
            if self.rng.random() < 0.5:
                await self.standin.wait_until(lambda mid=mid: mid in self.first_answer_at or self.ready_at == 0, 60)

    def _thread_of(self, iid: str) -> str | None:
        for m in self.standin.messages.get(GENERAL_ID, []):
            if self.standin.followup_of.get(m["id"]) == iid and m["id"] in self.standin.channels:
                return str(m["id"])
        return None

    async def run(self, accepted: Any) -> Result:
        """`accepted()` returns the inbox keys the bot stored (events the gateway delivered)."""
        await self.standin.start()
        self.standin.on_post.append(self._on_post)
        self.start()
        watcher = asyncio.create_task(self._watch())
        try:
            threads = asyncio.gather(*(self._thread(t) for t in range(self.threads)))
            # The watcher only ends by raising (a worker that died by itself): that fails the run.
            await asyncio.wait({watcher, threads}, return_when=asyncio.FIRST_COMPLETED)
            if watcher.done():
                threads.cancel()
                watcher.result()
            await threads
            stored = set(await accepted())
            await self.standin.wait_until(lambda: stored <= set(self.first_answer_at), within=120)
            await asyncio.sleep(1.0)
        finally:
            watcher.cancel()
            if self.proc is not None and self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=20)
            await self.standin.aclose()
        return self.result(stored)

    def result(self, stored: set[str]) -> Result:
        shown: Counter[str] = Counter()  # nonce -> messages carrying it (Discord keeps one per nonce)
        pre: dict[str, set[str]] = defaultdict(set)
        answered: set[str] = set()
        order: dict[str, list[int]] = defaultdict(list)
        confirmed = 0
        for channel, messages in self.standin.messages.items():
            for m in messages:
                found = self.ids.get(str(m.get("nonce", "")))
                if found is None:
                    continue
                event, oid = found
                shown[str(m["nonce"])] += 1
                order[channel].append(self.events[event][1])
                if oid.split(":")[1].startswith("p"):
                    pre[event].add(oid)
                else:
                    answered.add(event)
                    confirmed += "Added to your list" in m["content"]
        dup = {self.ids[n][0] for n, c in shown.items() if c > 1}
        restarts = [at for _, at, _ in self.kills]
        interrupted = {e for _, _, pending in self.kills for e in pending if e in self.first_answer_at}
        # Measured from the last restart before the answer: an event can be interrupted twice.
        recoveries = [
            self.first_answer_at[e] - max(r for r in restarts if r < self.first_answer_at[e])
            for e in interrupted
            if any(r < self.first_answer_at[e] for r in restarts)
        ]
        return Result(
            run=f"discord, 1 worker ({len(self.events) - len(stored)} not delivered by the gateway)",
            events=len(stored),
            kills=len(self.kills),
            lost=len(stored - answered),
            duplicated_answers=len(dup),
            duplicated_pre=sum(1 for e in stored if len(pre[e]) > 1),
            out_of_order_threads=sum(1 for seq in order.values() if seq != sorted(seq)),
            duplicate_task_numbers=0,
            task_rows=0,
            tasks_confirmed=confirmed,
            user_turns_stored_twice=0,
            max_recovery_s=round(max(recoveries, default=0.0), 2),
            kill_kinds=dict(Counter(k for k, _, _ in self.kills)),
        )
