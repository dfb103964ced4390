"""A burst of order questions while Slack answers every posting call 429: every thread in order,
nothing lost or shown twice, no call before Retry-After, every pre-message shown or counted, acks
fast. One worker in-process on SQLite; two worker processes on PostgreSQL; a worker killed during
the window. `AGENTBOT_BURST=full` runs the issue's figures (300 messages, 30 threads, 20 s of 429)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from adapters.storage.sql import SqlStore
from tests.burst_harness import Burst, BurstPlan, BurstResult, plan_from_env
from tests.crash_harness import Worker
from tests.pg import postgres_server, unavailable_reason
from tests.slack_harness import rows, running_app
from tests.standins.slack_standin import SlackStandIn


async def _open(db_url: str) -> int:
    return len(await rows(db_url, "SELECT key FROM inbox WHERE status != 'done'"))


async def _skipped(db_url: str) -> set[str]:
    found = await rows(db_url, "SELECT event_key FROM outbox WHERE kind = 'pre' AND status = 'skipped'")
    return {r[0] for r in found}


async def _stored_twice(db_url: str) -> int:
    turns = [r[0] for r in await rows(db_url, "SELECT interaction_id FROM messages WHERE role = 'user'")]
    return len(turns) - len(set(turns))


def check(r: BurstResult, plan: BurstPlan, stored_twice: int) -> None:
    print(f"\nburst {plan.model_dump()}: {r.model_dump()} stored twice: {stored_twice}")
    assert r.events == plan.threads * plan.per_thread
    assert (r.lost, r.duplicated, r.out_of_order, r.wrong_order) == (0, 0, 0, 0)
    assert r.too_soon == 0
    assert r.pre_missing == 0 and r.pre_shown + r.pre_skipped >= r.events
    assert r.refused > 0  # the window was met
    assert r.max_ack_s < 3.0
    assert r.drained_s < 60.0
    assert stored_twice == 0


async def test_a_burst_under_429_on_one_worker(db_url: str) -> None:
    plan = plan_from_env()
    slack = SlackStandIn()
    await slack.start()
    try:
        async with running_app(db_url, slack) as app:
            burst = Burst(slack, lambda: [app.client.url], plan)
            drained = await burst.run(lambda: _open(db_url))
        r = burst.result(drained, await _skipped(db_url))
    finally:
        await slack.aclose()
    check(r, plan, await _stored_twice(db_url))
    assert r.auth_tests == 1  # checked once at start, not in the ack path


async def _workers(db_url: str, tmp: Path, count: int, kill_at: int | None = None) -> tuple[BurstResult, BurstPlan]:
    """The burst against `count` real `agentbot slack` processes; with `kill_at`, the first worker
    is SIGKILLed once that many events were acked (in the window) and started again."""
    plan = plan_from_env()
    slack = SlackStandIn()
    api = await slack.start()
    logs = tmp / "logs"
    logs.mkdir(exist_ok=True)
    workers = [Worker(f"w{n}", db_url, api, logs) for n in range(count)]
    for w in workers:
        w.start()
    try:
        await _until_up(workers)
        burst = Burst(slack, lambda: [w.url for w in workers if w.alive], plan)
        if kill_at is not None:

            def kill(acked: int, victim: Worker = workers[0]) -> None:
                if acked >= kill_at and victim.starts == 1 and not victim.killed:
                    victim.kill()
                    victim.start()
                    asyncio.get_running_loop().create_task(_until_up([victim]))

            burst.on_ack.append(kill)
        drained = await burst.run(lambda: _open(db_url), within=180.0)
        r = burst.result(drained, await _skipped(db_url))
        assert kill_at is None or workers[0].starts == 2, "the worker was not killed"
    finally:
        for w in workers:
            w.stop()
        await slack.aclose()
    return r, plan


async def _until_up(workers: list[Worker]) -> None:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        for _ in range(1200):
            for w in workers:
                if w.ready_at:
                    continue
                try:
                    async with session.get(w.url, timeout=aiohttp.ClientTimeout(1)):
                        w.ready_at = asyncio.get_running_loop().time()
                except (aiohttp.ClientError, TimeoutError):
                    pass
            if all(w.ready_at for w in workers):
                return
            await asyncio.sleep(0.1)
    raise AssertionError("a worker did not start")


@pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")
async def test_a_burst_under_429_on_two_workers_on_postgres(tmp_path: Path) -> None:
    with postgres_server() as db_url:
        store = SqlStore(db_url)
        await store.upgrade()
        await store.aclose()
        r, plan = await _workers(db_url, tmp_path, 2)
        check(r, plan, await _stored_twice(db_url))


async def test_a_burst_under_429_with_a_worker_killed_in_the_window(tmp_path: Path) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'burst.db'}"
    store = SqlStore(db_url)
    await store.upgrade()
    await store.aclose()
    plan = plan_from_env()
    r, plan = await _workers(db_url, tmp_path, 2, kill_at=plan.threads * plan.per_thread // 2)
    check(r, plan, await _stored_twice(db_url))
