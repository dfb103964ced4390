"""agentbot's public API: build the App, then hand it Interactions.

    from bots import Interaction, build_app

    async with build_app() as app:
        response = await app.router.handle(Interaction(text="where is O-12345?", session_key="demo"))

Everything here is importable from this one module; the packages below it are the channels
(`bots.slack`, `bots.discord`, `bots.console`) and the command line (`bots.cli`). The stand-in
platform servers the tests drive live under `tests/standins/`, outside the wheel.
"""

from agent.app import App
from agent.context.output import AlertNotifier
from agent.context.telemetry import TelemetrySink
from agent.domain.types import AgentResponse, Alert, ChannelContext, ChannelType, Interaction, OutboundMessage
from agent.errors import AgentbotError, ConfigError
from agent.llm.provider import LLMProvider
from agent.sources import DataSource
from agent.storage import SessionStore
from agent.turn.router import AgentRouter
from bots.app import build_app

__all__ = [
    "AgentResponse",
    "AgentRouter",
    "AgentbotError",
    "Alert",
    "AlertNotifier",
    "App",
    "ChannelContext",
    "ChannelType",
    "ConfigError",
    "DataSource",
    "Interaction",
    "LLMProvider",
    "OutboundMessage",
    "SessionStore",
    "TelemetrySink",
    "build_app",
]
