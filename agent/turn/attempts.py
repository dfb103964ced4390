"""A turn's attempts: the deadline that bounds each one, and the pause after one lost a conflict."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agent.errors import StorageError, TurnDeadline


@asynccontextmanager
async def deadline(seconds: float) -> AsyncIterator[None]:
    """Bound a turn's work, so a hung provider cannot hold its session (and its lease) for long."""
    try:
        async with asyncio.timeout(seconds):
            yield
    except TimeoutError as e:
        raise TurnDeadline(f"the turn took longer than {seconds:g} s") from e


async def settle_conflict(attempt: int, retries: int, from_inbox: bool) -> None:
    """After a lost optimistic lock (or a task number another turn took): nothing but pre-messages
    was shown, so the next attempt runs on fresh state, a random moment later so that contenders
    spread out. A stored channel event that keeps losing is left in its inbox for a later retry
    rather than refused."""
    if attempt + 1 < retries:
        await asyncio.sleep(random.uniform(0, 0.05 * (attempt + 1)))
    elif from_inbox:
        raise StorageError(f"still conflicting after {retries} attempts")
