"""A burst of order questions in many Discord threads while every message post is answered 429
(`retry_after` in the body, `X-RateLimit-*` headers): discord.py's own per-route wait and retries,
then the inbox and outbox, keep every thread in order and lose nothing. `AGENTBOT_BURST=full` runs
the issue's figures."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

from bots.outbox import nonce
from tests.bots.discord_harness import running_bot
from tests.burst_harness import plan_from_env
from tests.slack_harness import rows
from tests.standins.discord_standin import GENERAL_ID, StandInDiscord, user

CUSTOMERS = [
    (user("510000000000000001", "alice"), ["O-12345", "O-23456", "O-24680"]),
    (user("510000000000000002", "bilal"), ["O-34567", "O-45678", "O-35791", "O-46802"]),
    (user("510000000000000003", "chen"), ["O-56789", "O-67890"]),
]


async def test_a_discord_burst_under_429_keeps_threads_in_order_and_loses_nothing(db_url: str) -> None:
    plan = plan_from_env()
    standin = await StandInDiscord().start()
    asked: dict[str, tuple[str, int, str]] = {}  # message id -> (thread id, index, order id)
    try:
        async with running_bot(standin, db_url) as running:

            async def thread(t: int) -> None:
                author, orders = CUSTOMERS[t % len(CUSTOMERS)]
                first = await standin.say(GENERAL_ID, author, f"where is {orders[t % len(orders)]}?", mention_bot=True)
                tid = first["id"]
                asked[tid] = (tid, 0, orders[t % len(orders)])
                # The bot's thread, once discord.py has it (THREAD_CREATE): messages there are the bot's to answer.
                await standin.wait_until(lambda: running.bot.get_channel(int(tid)) is not None, within=30)
                for k in range(1, plan.per_thread):
                    order = orders[(t + k) % len(orders)]
                    m = await standin.say(tid, author, f"where is {order}?")
                    asked[m["id"]] = (tid, k, order)
                    await asyncio.sleep(0.02)

            window_end = standin.rate_limit(plan.window, float(plan.retry_after))
            await asyncio.gather(*(thread(t) for t in range(plan.threads)))

            def answered() -> bool:
                return all(_posted(standin, key, "0") for key in asked)

            await standin.wait_until(answered, within=plan.window + 90)
            drained = time.monotonic() - window_end
            await running.bot.dispatcher.drain()
            await asyncio.sleep(1.0)
        open_events = await rows(db_url, "SELECT key FROM inbox WHERE status != 'done'")
        turns = [r[0] for r in await rows(db_url, "SELECT interaction_id FROM messages WHERE role = 'user'")]
    finally:
        await standin.aclose()
    lost = [k for k in asked if not _posted(standin, k, "0")]
    nonces = Counter(m.get("nonce") for msgs in standin.messages.values() for m in msgs if m.get("nonce"))
    duplicated = sum(1 for n in nonces.values() if n > 1)
    out_of_order = 0
    for tid in {t for t, _, _ in asked.values()}:
        order = [asked[k][1] for m in standin.posted(tid) for k in asked if asked[k][0] == tid and _is(m, k)]
        out_of_order += order != sorted(order)
    wrong = sum(1 for k, (tid, _, order) in asked.items() if order not in _answer(standin, tid, k))
    print(
        f"\ndiscord burst {plan.model_dump()}: events {len(asked)}, lost {len(lost)}, duplicated {duplicated}, "
        f"out of order {out_of_order}, wrong order {wrong}, refused {len(standin.refused)}, "
        f"drained {drained:.1f} s after the window"
    )
    assert len(asked) == plan.threads * plan.per_thread
    assert (len(lost), duplicated, out_of_order, wrong) == (0, 0, 0, 0)
    assert standin.refused  # the window was met
    assert open_events == [] and len(turns) == len(set(turns))


def _is(message: dict, key: str) -> bool:
    return message.get("nonce") in (nonce(f"{key}:p0", 0), nonce(f"{key}:0", 0))


def _posted(standin: StandInDiscord, key: str, part: str) -> bool:
    wanted = nonce(f"{key}:{part}", 0)
    return wanted in {m.get("nonce") for msgs in standin.messages.values() for m in msgs}


def _answer(standin: StandInDiscord, tid: str, key: str) -> str:
    wanted = nonce(f"{key}:0", 0)
    return next((m["content"] for m in standin.posted(tid) if m.get("nonce") == wanted), "")
