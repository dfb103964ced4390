"""Turns and the moments between them: a swap of the router's understanding happens only when no
turn is running, so no turn reads a message with old banks and acts on it with new ones."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class TurnGate:
    """Many turns at once, or one change between turns.

    A change waits for the turns already running to end; turns that arrive meanwhile wait for the
    change (so a steady stream of turns cannot starve it), then run on what it installed. Nothing
    is dropped: a waiting turn runs as soon as the change is made.
    """

    def __init__(self) -> None:
        self._running = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._open = asyncio.Event()
        self._open.set()
        self._change = asyncio.Lock()

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        while not self._open.is_set():
            await self._open.wait()
        self._running += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._running -= 1
            if self._running == 0:
                self._idle.set()

    @asynccontextmanager
    async def between_turns(self) -> AsyncIterator[None]:
        """Hold new turns, wait for running ones to end, and run the body with none in flight."""
        async with self._change:
            self._open.clear()
            try:
                await self._idle.wait()
                yield
            finally:
                self._open.set()

    @property
    def running(self) -> int:
        return self._running
