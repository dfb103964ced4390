"""The App: the whole application the composition root (`bots.build_app`) returns.

Channels, the CLI, the eval runner and tests take an App and use its named parts; nothing outside
the router reaches into the router's own collaborators.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from agent.config.schema import Settings
from agent.context.output import AlertNotifier, Reply
from agent.context.telemetry import MetricsExport
from agent.context.tracing import Tracer
from agent.domain.catalog import StoreSettings
from agent.domain.types import Intent
from agent.policy.engine import PolicyEngine
from agent.review.reload import BankReload
from agent.sources import DataSource
from agent.storage import SessionStore, Storage
from agent.tools.gateway import ToolExecutor
from agent.turn.router import AgentRouter
from agent.turn.understanding import Understanding


class ThreadOpener(Protocol):
    """A channel that can post into one of its conversations' threads outside a turn."""

    async def open_thread(self, session_key: str, key: str) -> Reply | None:
        """The thread's `reply` (each message shown once, by its id, under the event `key`), or None
        when the conversation is not one this channel can reach now."""
        ...


class Threads:
    """The customers' threads a decision made outside a turn (on the operator page) is told in:
    each serving channel registers for its own conversations' session keys."""

    def __init__(self) -> None:
        self._openers: list[tuple[str, ThreadOpener]] = []

    def add(self, prefix: str, opener: ThreadOpener) -> None:
        """`opener` posts into conversations whose session key starts with `prefix` ("slack:")."""
        self._openers.append((prefix, opener))

    async def reply_for(self, session_key: str, key: str) -> Reply | None:
        """The conversation's thread, or None when no channel of this process reaches it."""
        for prefix, opener in self._openers:
            if session_key.startswith(prefix):
                return await opener.open_thread(session_key, key)
        return None


@dataclass
class App:
    """
    Args:
        router: runs turns (`app.router.handle(interaction, reply)`).
        storage: what the bot keeps, as the capabilities its store declares (sessions, records, the
            exactly-once inbox and outbox, LLM spend, preferences, the database itself).
        data: orders and customers, with what the bot wrote itself laid over them.
        settings: the validated `settings.yaml`.
        alerts: where admin alerts go.
        policy: the policy engine every tool call passes.
        tools: the tool executor (the gateway, traced when tracing is on).
        tracer: OpenTelemetry traces, or None when tracing is off.
        storefront: the store's own settings (config/store.yaml): its name, currency, and how it
            greets people in Slack's assistant threads.
        closers: resources released with the app (e.g. an LLM provider's HTTP client).
        metrics: the operators' metrics, served on `/metrics` by the serving processes.
        reload: reads the project's banks again and swaps the understanding in between turns.
        threads: the channels of this process that post into a conversation's thread outside a
            turn (a decision on the operator page); each channel registers itself.
        preloads: the part of the first-time work that needs no connection, thread or event loop
            (messages read through the model), done once by `preload`: a process about to fork
            workers does it, so that what it fills is the workers' pages too.
        warmups: the rest of the app's first-time work (the demo data), done once by `warm_up`
            before the app serves, with the preloads when no one did them, so that no first turn
            waits for it.
    """

    router: AgentRouter
    storage: Storage
    data: DataSource
    settings: Settings
    alerts: AlertNotifier
    policy: PolicyEngine
    tools: ToolExecutor
    tracer: Tracer | None = None
    storefront: StoreSettings = field(default_factory=StoreSettings)
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    metrics: MetricsExport | None = None
    reload: BankReload | None = None
    preloads: list[Callable[[], None]] = field(default_factory=list)
    warmups: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    threads: Threads = field(default_factory=Threads)
    _warm: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)
    _warmed: bool = field(default=False, init=False, repr=False)
    _preloaded: bool = field(default=False, init=False, repr=False)

    @property
    def understanding(self) -> Understanding:
        """How the bot reads messages now (its banks and their figures included); a reload replaces it."""
        return self.router.understanding

    @property
    def intents(self) -> dict[str, Intent]:
        """The intents the bot serves, by id."""
        return self.router.intents

    @property
    def store(self) -> SessionStore:
        """The session store (state, history, each turn's writes): `storage.sessions`."""
        return self.storage.sessions

    def preload(self) -> None:
        """Does the first-time work that needs no connection, thread or event loop, once."""
        if not self._preloaded:
            for work in self.preloads:
                work()
            self._preloaded = True

    async def warm_up(self) -> None:
        """Does the first-time work once; callers arriving while it runs wait for that one run."""
        async with self._warm:
            if not self._warmed:
                self.preload()
                for warm in self.warmups:
                    await warm()
                self._warmed = True

    async def aclose(self) -> None:
        for close in self.closers:
            await close()
        await self.router.aclose()

    async def __aenter__(self) -> App:
        await self.warm_up()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
