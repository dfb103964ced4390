"""The Slack channel: bolt's AsyncApp listeners ack, store the event once, and run it in order.

Request path: Slack -> bolt (signature, auth.test, team check) -> translate to a SlackEvent ->
`Dispatcher.submit` (stored by event_id / command trigger / clicked message; duplicates dropped)
-> HTTP 200 -> later, per session in arrival order: Interaction -> `router.handle` -> ThreadReply.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from adapters.storage.inbox import SqlInbox
from adapters.storage.outbox import SqlOutbox
from adapters.storage.sql import SqlStore
from agent.app import App
from agent.errors import ConfigError, StorageError
from agent.interfaces import Reply
from agent.records import InboxEvent
from agent.types import ChannelContext, ChannelType, Interaction, Message, OutboundMessage
from bots.dispatch import DeliveryFailed, Dispatcher
from bots.outbox import OutboxReply
from bots.slack.commands import FAILED, SlashCommand
from bots.slack.delivery import ThreadReply, answered_blocks, escape
from bots.slack.events import (
    BUTTON_ACTION,
    CLAIM_ACTION,
    RESUME_ACTION,
    SlackEvent,
    from_button,
    from_control,
    from_message,
    mentions_bot,
)
from bots.slack.threads import Me, bot_in_thread, thread_history

log = logging.getLogger("agentbot.slack")


def _not_the_token_notice(record: logging.LogRecord) -> bool:
    # bolt reads SLACK_BOT_TOKEN from the environment on its own and then warns that the client we
    # pass (which carries that same token) wins; the warning is noise on every start.
    return "`token` will be unused" not in record.getMessage()


logging.getLogger("slack_bolt.AsyncApp").addFilter(_not_the_token_notice)

ANSWERED = {"agentbot_confirm": "Confirmed", "agentbot_cancel": "Cancelled", "agentbot_human": "Asked for a human"}


class SlackOptions(BaseModel):
    """What the Slack channel needs besides its collaborators; filled by the composition root."""

    signing_secret: str = ""  # empty only in Socket Mode, where Slack signs nothing
    command: str = "/agentbot"
    admins: list[str] = []  # Slack user ids allowed to use status / resume
    provider: str = "rules (offline)"  # shown by /agentbot status
    database: str = ""  # shown by /agentbot status, without credentials
    recover_every_seconds: float = 60.0  # re-alerting unclaimed handoffs


class SlackChannel:
    """
    Args:
        app: the application (router, SQL store and the inbox in its database, customer data).
        client: the `AsyncWebClient` every Web API call goes through.
        options: signing secret, command name, admins, status details, recovery timing.
    """

    def __init__(self, app: App, client: Any, options: SlackOptions):
        from slack_bolt.async_app import AsyncApp

        if not isinstance(app.store, SqlStore) or not isinstance(app.inbox, SqlInbox):
            raise ConfigError("settings", "the Slack channel needs the SQL session store (its inbox lives there)")
        self.app, self.store, self.inbox = app, app.store, app.inbox
        self.router, self.data, self.client, self.options = app.router, app.data, client, options
        self.dispatcher = Dispatcher(
            app.inbox,
            self.run,
            lease_seconds=app.settings.lease_seconds,
            settle_seconds=app.settings.inbox_settle_seconds,
        )
        self.outbox = SqlOutbox(app.store)
        self.me, self.team_id = Me(), ""
        self._noticed: set[str] = set()  # events told "trouble saving" (once each)
        self.bolt = AsyncApp(
            client=client,
            signing_secret=options.signing_secret or None,
            request_verification_enabled=bool(options.signing_secret),
            process_before_response=False,
        )
        self.bolt.middleware(self._only_our_workspace)
        self.bolt.middleware(self._accept_events)
        self.bolt.command(options.command)(SlashCommand(self).on_command)
        self.bolt.action(re.compile(r"^agentbot_(confirm|cancel|human)$"))(self._on_button)
        self.bolt.action(re.compile(f"^({RESUME_ACTION}|{CLAIM_ACTION})$"))(self._on_control)

    # Lifecycle

    async def start(self) -> None:
        """Learn who the bot is (this also checks the token), then pick up work a crash left."""
        me = await self.client.auth_test()
        self.me, self.team_id = Me(me.get("user_id", ""), me.get("bot_id", "")), me.get("team_id", "")
        await self.dispatcher.recover()
        self.dispatcher.start_housekeeping(self.options.recover_every_seconds, self.router.realert_unclaimed)

    async def aclose(self) -> None:
        await self.dispatcher.aclose()

    # Intake: events, commands and clicks are stored (or answered) and acked; no turn runs here.

    async def _only_our_workspace(self, context: Any, next: Callable[[], Awaitable[Any]]) -> Any:
        from slack_bolt.response import BoltResponse

        team = context.team_id
        if self.team_id and team and team != self.team_id:
            # Acked (so Slack does not retry) and otherwise ignored: this install serves one workspace.
            log.warning("ignoring a request for unknown workspace %s", team)
            return BoltResponse(status=200, body="")
        return await next()

    async def _accept_events(self, body: dict[str, Any], next: Callable[[], Awaitable[Any]]) -> Any:
        """Events API deliveries are stored here and then answered 200 by this middleware.

        Storing before the 200 turns Slack's at-least-once delivery into exactly-once: if the
        process dies before the event is stored, Slack sees no ack and retries; once it is stored,
        every retry is a duplicate. The turn itself runs later, never inside the HTTP request.
        Every event type is acked, so Slack never retries one this app does not handle.
        """
        from slack_bolt.response import BoltResponse

        if body.get("type") != "event_callback":
            return await next()
        event = body.get("event") or {}
        try:
            if event.get("type") == "app_mention":
                await self._submit(from_message(body, self.me.user_id, mention=True))
            elif event.get("type") == "message":
                await self._on_message(body)
        except StorageError:
            # Not stored, so not acked: Slack delivers it again once the database is back.
            log.exception("could not store slack event %s; asking Slack to retry", body.get("event_id"))
            return BoltResponse(status=503, body="")
        return BoltResponse(status=200, body="")

    async def _on_message(self, body: dict[str, Any]) -> None:
        event = body.get("event") or {}
        is_dm = event.get("channel_type") == "im"
        if mentions_bot(body, self.me.user_id) and not is_dm:
            return  # the app_mention event for the same message answers it
        ev = from_message(body, self.me.user_id, mention=False)
        if ev is None:
            return
        if is_dm or (
            ev.in_thread and (await self.inbox.knows(ev.session_key) or await bot_in_thread(self.client, ev, self.me))
        ):
            await self._submit(ev)

    async def _on_button(self, ack: Any, body: dict[str, Any]) -> None:
        await self._submit(from_button(body))  # stored first, like events: the click is never lost
        await ack()

    async def _on_control(self, ack: Any, body: dict[str, Any], respond: Any) -> None:
        ev = from_control(body)
        if ev is not None and not self._is_admin(ev.user):
            await ack()
            await respond(text="Only agentbot admins can do that.", replace_original=False)
            return
        await self._submit(ev)
        await ack()

    async def _submit(self, ev: SlackEvent | None) -> None:
        """Store and schedule; a StorageError propagates so the caller does not ack what it lost."""
        if ev is None:
            return
        written = _seconds(ev.ts) if ev.kind == "message" else None  # Slack's ts: when it was written
        event = InboxEvent(key=ev.key, session_key=ev.session_key, payload=ev.model_dump(), written_at=written)
        await self.dispatcher.submit(event)

    def _is_admin(self, user: str) -> bool:
        return user in self.options.admins

    # Work: one stored event, run by the dispatcher in its session's order.

    async def run(self, event: InboxEvent) -> None:
        ev = SlackEvent.model_validate(event.payload)
        sender = ThreadReply(self.client, ev.channel, ev.reply_ts, ev.session_key, ev.user)
        reply = OutboxReply(self.outbox, sender, event.key, ev.session_key)
        if event.status == "committed":
            await reply.resend()  # the turn ran and committed; only its answers are left to send
            return
        if ev.kind == "control":
            await self._control(ev, reply)
            return
        if ev.kind == "message" and ev.text.lower() in ("resume", "resume bot") and self._is_admin(ev.user):
            await self._control(ev.model_copy(update={"action": "release"}), reply)
            return
        customer = await self.data.find_customer("slack", ev.user)
        interaction = Interaction(
            id=ev.key,
            text=ev.text,
            session_key=ev.session_key,
            customer_id=customer.get("customer_id") if customer else None,
            context=ChannelContext(
                channel_type=ChannelType.slack, workspace=ev.team, channel=ev.channel, thread=ev.root_ts, user=ev.user
            ),
            thread_history=await self._thread_history(ev),
            from_inbox=True,
            action=BUTTON_ACTION.get(ev.action or "") if ev.kind == "button" else None,  # type: ignore[arg-type]
            action_hash=ev.action_hash,
        )
        try:
            response = await self.router.handle(interaction, reply=reply)
            if ev.kind == "button" and not all(m.private for m in response.messages):
                await self._answered(ev)  # a refused click (not the requester's) leaves the buttons
        except StorageError:
            # Not saved: the event stays in the inbox and is answered when the database is back.
            if event.key not in self._noticed:
                self._noticed.add(event.key)
                notice = OutboundMessage(kind="notice", text=StorageError.retry_notice, id=f"{event.key}:trouble")
                await reply.notify_once(notice)
            raise
        except DeliveryFailed:
            raise  # the answers are stored; the dispatcher sends them again later
        except Exception:
            # The one place a Slack turn fails: the person hears so, the log has the details.
            log.exception("slack turn %s failed", ev.key)
            with contextlib.suppress(Exception):
                await reply(OutboundMessage(kind="error", text=FAILED, id=f"{event.key}:failed"))
            raise

    async def _control(self, ev: SlackEvent, reply: Reply) -> None:
        actor = ev.user_name or "An admin"
        notice = await self.router.control(ev.session_key, "claim" if ev.action == "claim" else "release", actor, reply)
        if ev.response_url:
            from slack_sdk.webhook.async_client import AsyncWebhookClient

            await AsyncWebhookClient(ev.response_url).send(text=notice, response_type="ephemeral")
        if ev.origin_channel and ev.ts:
            done = "Claimed" if ev.action == "claim" else "Bot resumed"
            await self.client.chat_update(
                channel=ev.origin_channel,
                ts=ev.ts,
                text=ev.question or notice,
                blocks=answered_blocks(escape(ev.question or notice), f"{done} by <@{ev.user}>: {escape(notice)}"),
            )

    async def _answered(self, ev: SlackEvent) -> None:
        blocks = answered_blocks(ev.question, f"{ANSWERED.get(ev.action, 'Answered')} by <@{ev.user}>")
        try:
            await self.client.chat_update(channel=ev.origin_channel, ts=ev.ts, text=ev.question, blocks=blocks)
        except Exception as e:  # noqa: BLE001 - stale buttons are cosmetic; the answer matters
            log.warning("could not update the clicked question %s: %s", ev.ts, e)

    async def _thread_history(self, ev: SlackEvent) -> list[Message]:
        if not ev.in_thread:
            return []
        saved, _ = await self.store.load(ev.session_key, 0)
        return [] if saved is not None else await thread_history(self.client, ev, self.me)


def _seconds(ts: str) -> float | None:
    try:
        return float(ts)
    except ValueError:
        return None
