"""Test helpers: talk to a router the way a channel does."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import uuid
from pathlib import Path
from typing import Any

from agent.config.files import load_config
from agent.context.turn import TurnContext
from agent.conversation.session import SessionState, Speaker
from agent.domain.types import (
    AgentResponse,
    ChannelContext,
    ChannelType,
    Classification,
    Intent,
    Interaction,
    Message,
    OutboundMessage,
)
from agent.turn.router import AgentRouter
from agent.understanding.classifier import Classifier
from agent.understanding.rules import RulesClassifier

REPO = Path(__file__).resolve().parent.parent


# Order details are only for their own customer, so tests speak as Alice (C-001) unless they pass
# another customer, or None for a guest.
CUSTOMER = "C-001"


def interaction(
    text: str, session: str = "s-1", customer: str | None = CUSTOMER, channel: str = "console"
) -> Interaction:
    return Interaction(
        id=f"i-{uuid.uuid4().hex[:10]}",
        text=text,
        session_key=session,
        customer_id=customer,
        context=ChannelContext(channel_type=ChannelType(channel)),
    )


async def say(
    router: AgentRouter, text: str, session: str = "s-1", customer: str | None = CUSTOMER
) -> tuple[AgentResponse, list[OutboundMessage]]:
    """Send one message; return the response and the messages delivered to the channel, in order."""
    delivered: list[OutboundMessage] = []

    async def reply(m: OutboundMessage) -> None:
        delivered.append(m)

    response = await router.handle(interaction(text, session, customer), reply=reply)
    return response, delivered


def demo_day(offset: int) -> str:
    """A demo date as the bot shows it: `offset` days from today, the demo's first day in a fresh database."""
    from datetime import timedelta

    from agent.domain.types import utcnow

    return (utcnow().date() + timedelta(days=offset)).isoformat()


def sigkill(proc: subprocess.Popen[bytes] | None) -> None:
    """Kill a child process the way a crash would, and reap it."""
    if proc is not None and proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def terminate(proc: subprocess.Popen[bytes] | None, timeout: float = 20) -> None:
    """Stop a child process as a platform would (SIGTERM), killing it if it does not exit in time."""
    if proc is not None and proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            sigkill(proc)


@functools.cache
def rules_classifier(config_dir: Path = REPO / "config", data_dir: Path = REPO / "data") -> RulesClassifier:
    """The shipped offline classifier, fitted once per test process (fitting the banks takes a second)."""
    from adapters.data.store_files import FileInventory
    from agent.domain.catalog import load_store_settings
    from bots.app import embedded_reader

    config = load_config(config_dir)
    inventory = FileInventory(data_dir, load_store_settings(config.directory).inventory)
    return RulesClassifier(config, reader=embedded_reader(config, inventory))


class Asks:
    """Words each missing slot's question the plainest way (the goals' `Asks`, without a planner)."""

    def __init__(self, template: str = "What is your {slot}?"):
        self.template = template

    def question(self, intent_id: str, slot: str) -> str:
        return self.template.replace("{slot}", slot)


async def classify(
    classifier: Classifier,
    rules: RulesClassifier,
    said: Interaction,
    intents: list[Intent],
    state: SessionState | None = None,
    me: Speaker | None = None,
    history: list[Message] | None = None,
) -> Classification:
    """`said` read once by `rules` (as a turn reads it), then understood by `classifier`."""
    return await classifier.classify(TurnContext.alone(said, rules.read(said.text), intents, state, me, history))


async def rules_conversation(suite_path: Path, scenario_id: str, db_url: str) -> None:
    """Run one scenario of a rules-mode suite (tests/suites_rules/) on a database of its own, and
    fail with every turn that missed."""
    from agent.eval.runner import run_scenario
    from agent.eval.suite import load_suite
    from bots.app import build_app

    suite = load_suite(suite_path)
    scenario = next(s for s in suite.scenarios if s.id == scenario_id)

    async def factory(sink: Any) -> Any:
        return build_app(REPO / "config", REPO / "data", db_url, telemetry=sink)

    result = await run_scenario(suite.name, scenario, factory)
    assert result.passed, "\n".join(
        f"turn {f.turn} {f.key}: expected {f.expected!r}, got {f.got!r}" for f in result.failures
    )
