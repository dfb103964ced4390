"""One console turn: an Interaction from a typed line, replies printed as they are delivered."""

from __future__ import annotations

import getpass
import json
import uuid
from typing import TextIO

from agent.app import App
from agent.domain.types import AgentResponse, ChannelContext, ChannelType, Interaction, OutboundMessage


def default_session() -> str:
    return f"console:{getpass.getuser()}"


def session_key(base: str, customer: str | None) -> str:
    """Each identity keeps its own conversation: a session belongs to the customer who started it."""
    return f"{base}:{customer}" if customer else base


def new_session() -> str:
    return f"{default_session()}:{uuid.uuid4().hex[:6]}"


def interaction(text: str, session: str, customer: str | None) -> Interaction:
    return Interaction(
        id=f"console-{uuid.uuid4().hex[:12]}",
        text=text,
        session_key=session,
        customer_id=customer,
        context=ChannelContext(channel_type=ChannelType.console, channel="console", user=customer or "guest"),
    )


async def one_shot(
    app: App, text: str, session: str, customer: str | None, as_json: bool, out: TextIO
) -> AgentResponse:
    delivered: list[OutboundMessage] = []

    async def reply(m: OutboundMessage) -> None:
        delivered.append(m)
        if not as_json:
            print(f"bot> {m.text}", file=out, flush=True)
            for line in numbered(m):
                print(f"     {line}", file=out, flush=True)

    response = await app.router.handle(interaction(text, session, customer), reply=reply)
    if as_json:
        payload = {
            "response": response.model_dump(mode="json"),
            "delivered": [m.model_dump(mode="json") for m in delivered],
        }
        print(json.dumps(payload, indent=2), file=out)
    return response


def numbered(message: OutboundMessage) -> list[str]:
    """A question's choices as the console shows them: "1) ...", "2) ..."; typing the number picks one."""
    return [f"{n}) {option.label}" for n, option in enumerate(message.choices, start=1)]


async def handed_off(app: App, session: str) -> bool:
    """People have this conversation: the bot stays quiet until it is handed back."""
    state, _ = await app.store.load(session, 0)
    return bool(state and state.handoff and state.handoff.active)
