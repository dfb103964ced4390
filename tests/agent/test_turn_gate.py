"""A change between turns waits for the running turns and holds new ones; none is dropped."""

from __future__ import annotations

import asyncio

from agent.turn.gate import TurnGate


async def test_a_change_waits_for_running_turns_and_holds_new_ones() -> None:
    gate, seen = TurnGate(), []
    release_first = asyncio.Event()

    async def turn(name: str, hold: asyncio.Event | None = None) -> None:
        async with gate.turn():
            seen.append(f"{name} starts")
            if hold is not None:
                await hold.wait()
            await asyncio.sleep(0)
            seen.append(f"{name} ends")

    async def change() -> None:
        async with gate.between_turns():
            seen.append(f"change with {gate.running} running")

    first = asyncio.create_task(turn("first", release_first))
    await asyncio.sleep(0.01)
    swap = asyncio.create_task(change())
    await asyncio.sleep(0.01)
    later = asyncio.create_task(turn("later"))
    await asyncio.sleep(0.01)
    assert seen == ["first starts"]  # the change waits for the first turn; the later turn waits for the change
    release_first.set()
    await asyncio.gather(first, swap, later)
    assert seen == ["first starts", "first ends", "change with 0 running", "later starts", "later ends"]
