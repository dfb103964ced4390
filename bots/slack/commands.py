"""The slash command's words: help, status, resume, or a request to answer in a new thread."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

from adapters.storage.stats import DailyStats

HELP = """*{command}* puts a request to agentbot and answers in a thread.
• `{command} where is my order O-12345?` posts your request here and answers in its thread
• `{command} help` shows this
• `{command} status` (admins) provider, database, today's sessions and handoffs
• `{command} resume <thread link>` (admins) gives a handed-off thread back to the bot
You can also mention me in any channel I'm in, DM me, or just reply in a thread I'm part of."""

_PERMALINK = re.compile(r"/archives/([A-Z0-9]+)/p(\d{10})(\d{6})")
_TS = re.compile(r"^\d{10}\.\d{6}$")


class Command(BaseModel):
    verb: Literal["help", "status", "resume", "ask"]
    text: str = ""


def parse(text: str) -> Command:
    text = " ".join(text.split())
    first, _, rest = text.partition(" ")
    verb = first.lower()
    if verb in ("", "help"):
        return Command(verb="help")
    if verb in ("status", "resume"):
        return Command(verb=verb, text=rest)
    return Command(verb="ask", text=text)


def resume_target(arg: str, channel: str, thread_ts: str | None) -> tuple[str, str] | None:
    """(channel, thread root ts) named by `/agentbot resume`: the thread it was typed in, a
    permalink to the thread, or a bare message ts in this channel."""
    if thread_ts:
        return channel, thread_ts
    arg = arg.strip("<> ").split("|")[0]
    if m := _PERMALINK.search(arg):
        thread = re.search(r"thread_ts=(\d{10}\.\d{6})", arg)
        return m.group(1), thread.group(1) if thread else f"{m.group(2)}.{m.group(3)}"
    if _TS.match(arg):
        return channel, arg
    return None


def status_text(provider: str, database: str, stats: DailyStats, open_events: int) -> str:
    return (
        "*agentbot status*\n"
        f"• provider: {provider}\n"
        f"• database: {database}\n"
        f"• today (since {stats.since:%Y-%m-%d %H:%M} UTC): {stats.sessions_active} active sessions, "
        f"{stats.sessions_started} new, {stats.handoffs} handoffs\n"
        f"• events being processed: {open_events}"
    )
