"""The slash command's words: help, status, resume, or a request to answer in a new thread."""

from __future__ import annotations

import logging
import re
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from adapters.storage.stats import DailyStats, today
from agent.domain.types import OutboundMessage
from agent.errors import StorageError
from agent.storage import Database, EventInbox
from bots.slack.delivery import ThreadReply, asked_blocks, escape
from bots.slack.events import Address, SlackEvent, address
from bots.slack.workspaces import Workspaces


class CommandOptions(Protocol):
    """The channel's settings a command reads: its own name and what `status` reports."""

    @property
    def command(self) -> str: ...

    @property
    def provider(self) -> str: ...

    @property
    def database(self) -> str: ...


class CommandChannel(Protocol):
    """What a slash command needs of the channel it came in on: its settings, workspaces and stores,
    who is an admin, and where a stored event goes (the channel's inbox and dispatcher)."""

    @property
    def options(self) -> CommandOptions: ...

    @property
    def workspaces(self) -> Workspaces: ...

    @property
    def database(self) -> Database: ...

    @property
    def inbox(self) -> EventInbox: ...

    async def is_admin(self, ev: SlackEvent) -> bool: ...

    async def submit(self, ev: SlackEvent | None) -> None:
        """Store the event and schedule its turn; a StorageError propagates (nothing is acked)."""
        ...


log = logging.getLogger("agentbot.slack")
FAILED = "Sorry, something went wrong on my side while answering. Please try again in a moment."

HELP = """*{command}* puts a request to agentbot and answers in a thread.
• `{command} where is my order O-12345?` posts your request here and answers in its thread
• `{command} help` shows this
• `{command} status` (admins) provider, database, today's sessions and handoffs
• `{command} resume <thread link>` (admins) gives a handed-off thread back to the bot
• `{command} admin-channel` (admins) sends this workspace's admin alerts to this channel
You can also mention me in any channel I'm in, DM me, or just reply in a thread I'm part of."""

_PERMALINK = re.compile(r"/archives/([A-Z0-9]+)/p(\d{10})(\d{6})")
_TS = re.compile(r"^\d{10}\.\d{6}$")


class Command(BaseModel):
    verb: Literal["help", "status", "resume", "admin-channel", "ask"]
    text: str = ""


def parse(text: str) -> Command:
    text = " ".join(text.split())
    first, _, rest = text.partition(" ")
    verb = first.lower()
    if verb in ("", "help"):
        return Command(verb="help")
    if verb in ("status", "resume", "admin-channel"):
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


async def _unanswerable(text: str) -> None:
    """`respond` for a command Slack sent without a response_url: the answer has nowhere to go."""
    log.warning("slack: a command without a response_url; not answered: %s", text[:80])


def _field(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    return value if isinstance(value, str) else ""


def status_text(provider: str, database: str, stats: DailyStats, open_events: int) -> str:
    return (
        "*agentbot status*\n"
        f"• provider: {provider}\n"
        f"• database: {database}\n"
        f"• today (since {stats.since:%Y-%m-%d %H:%M} UTC): {stats.sessions_active} active sessions, "
        f"{stats.sessions_started} new, {stats.handoffs} handoffs\n"
        f"• events being processed: {open_events}"
    )


class SlashCommand:
    """`/agentbot ...`: help and status answered at once; resume and requests stored as events."""

    def __init__(self, channel: CommandChannel):
        self.ch = channel

    async def on_command(self, ack: Any, body: dict[str, Any], respond: Any, context: Any) -> None:
        cmd = parse(_field(body, "text"))
        user, channel = _field(body, "user_id"), _field(body, "channel_id")
        where = address(body, context)
        if cmd.verb == "help":
            await ack(text=HELP.format(command=self.ch.options.command))
            return
        await ack()
        if not user or not where.team:
            log.warning("slack: %s without a user or workspace; nothing to do", _field(body, "command") or "a command")
            return
        if not _field(body, "response_url"):
            respond = _unanswerable
        caller = SlackEvent(
            key="", kind="command", channel=channel, user=user, text="", root_ts="", reply_ts=None, **where.model_dump()
        )
        if cmd.verb in ("status", "resume", "admin-channel") and not await self.ch.is_admin(caller):
            await respond(text=f"`{self.ch.options.command} {cmd.verb}` is for agentbot admins.")
        elif cmd.verb == "admin-channel":
            ws = await self.ch.workspaces.get(where.team, where.enterprise)
            if not channel or ws is None:
                await respond(text="I can't tell which channel this is.")
            elif await self.ch.workspaces.set_admin_channel(ws, channel):
                log.warning("slack: workspace %s sends admin alerts to %s (set by %s)", where.team, channel, user)
                await respond(text=f"Admin alerts for this workspace now go to <#{channel}>.")
            else:
                await respond(text="This install's admin channel is set by SLACK_ADMIN_CHANNEL.")
        elif cmd.verb == "status":
            await respond(text=await self._status())
        elif cmd.verb == "resume":
            target = resume_target(cmd.text, channel, _field(body, "thread_ts") or None)
            if target is None:
                await respond(text=f"Which thread? `{self.ch.options.command} resume <link to the thread>`")
                return
            ev = caller.model_copy(
                update={
                    "key": f"command:{_field(body, 'trigger_id')}",
                    "kind": "control",
                    "channel": target[0],
                    "text": "release",
                    "root_ts": target[1],
                    "reply_ts": target[1],
                    "action": "release",
                    "user_name": _field(body, "user_name"),
                    "response_url": _field(body, "response_url"),
                }
            )
            await self.ch.submit(ev)  # the outcome goes to the admin through response_url
        else:
            await self._ask(cmd.text, body, where, respond)

    async def _ask(self, text: str, body: dict[str, Any], where: Address, respond: Any) -> None:
        """`/agentbot <text>`: the request becomes a channel message and the answer its thread."""
        user, channel = _field(body, "user_id"), _field(body, "channel_id")
        ws = await self.ch.workspaces.get(where.team, where.enterprise)
        if ws is None or not channel:
            return  # not served here; bolt refused it before this for an unknown workspace
        try:
            root = await ws.client.chat_postMessage(
                channel=channel, text=f"<@{user}> asked: {escape(text)}", blocks=asked_blocks(user, text)
            )
        except Exception as e:  # noqa: BLE001 - e.g. not_in_channel: tell the person, not the log only
            log.warning("cannot post the request in %s: %s", channel, e)
            await respond(text="I can't post in this conversation. Invite me first (`/invite @agentbot`).")
            return
        ts = str(root.get("ts", ""))
        ev = SlackEvent(
            key=f"command:{_field(body, 'trigger_id') or ts}",
            kind="command",
            channel=channel,
            user=user,
            text=text,
            root_ts=ts,
            reply_ts=ts,
            ts=ts,
            **where.model_dump(),
        )
        try:
            await self.ch.submit(ev)
        except StorageError:
            log.exception("could not store command %s", ev.key)
            await ThreadReply(ws.client, channel, ts, ev.session_key)(OutboundMessage(kind="error", text=FAILED))

    async def _status(self) -> str:
        stats = await today(self.ch.database)
        pending = len(await self.ch.inbox.unfinished(0))
        return status_text(self.ch.options.provider, self.ch.options.database, stats, pending)
