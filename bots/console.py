"""The console channel: a REPL and one-shot messages, on the same router as every other channel."""

from __future__ import annotations

import asyncio
import getpass
import json
import sys
import uuid
from typing import TextIO

from agent.app import App
from agent.types import AgentResponse, ChannelContext, ChannelType, Interaction, OutboundMessage

PROMPT = "you> "


def default_session() -> str:
    return f"console:{getpass.getuser()}"


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

    response = await app.router.handle(interaction(text, session, customer), reply=reply)
    if as_json:
        payload = {
            "response": response.model_dump(mode="json"),
            "delivered": [m.model_dump(mode="json") for m in delivered],
        }
        print(json.dumps(payload, indent=2), file=out)
    return response


async def repl(app: App, session: str, customer: str | None, inp: TextIO, out: TextIO) -> None:
    """Read lines until EOF (Ctrl-D) or `exit`; each reply is printed as it is delivered."""
    interactive = inp.isatty()
    if interactive:
        print("agentbot console - offline rules mode. Ask about an order (try O-12345); Ctrl-D to quit.", file=out)
    while True:
        if interactive:
            print(PROMPT, end="", file=out, flush=True)
        line = await asyncio.to_thread(inp.readline)
        if not line:
            break
        text = line.strip()
        if text.lower() in {"exit", "quit", "/exit", "/quit"}:
            break
        if not text:
            continue
        await one_shot(app, text, session, customer, False, out)
    if interactive:
        print("bye", file=out)


def run_chat(app: App, message: str | None, session: str, customer: str | None, as_json: bool) -> int:
    async def main() -> None:
        async with app:
            if message is not None:
                await one_shot(app, message, session, customer, as_json, sys.stdout)
            else:
                await repl(app, session, customer, sys.stdin, sys.stdout)

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        print("", file=sys.stdout)
    return 0
