"""The Slack channel: bolt's AsyncApp listeners ack, store the event once, and run it in order.

Request path: Slack (HTTP or a Socket Mode envelope) -> bolt (signature, authorize: the single
token's auth.test or the OAuth installation bolt finds from the event's `authorizations`, which in
a Slack Connect channel may differ from its outer team) -> installed-workspace check -> bolt's
AsyncAssistant for assistant threads, `_accept_events` for every other event, listeners for
commands and clicks -> translate to a SlackEvent addressed like bolt's context (`events.address`:
the answering install, the conversation's workspace, the speaker's side) -> `Dispatcher.submit`
(stored by event_id / command trigger / clicked message; duplicates dropped) -> ack -> later, per
session in arrival order, with the workspace's client: Interaction -> `router.handle` ->
ThreadReply (or, in an assistant thread, AssistantThreadReply: the status line, then the thread).

Every body is read defensively: a field of an unexpected type reads as absent, so a body this app
does not handle reaches bolt's own answer (an ack, or 404 for a request no listener takes).
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from adapters.storage.slack_records import SlackRecords
from agent.app import App
from agent.context.output import Reply
from agent.conversation.handoff import Action, Verdict
from agent.domain.records import InboxEvent
from agent.domain.types import ChannelContext, ChannelType, Interaction, Message, OutboundMessage
from agent.errors import ConfigError, StorageError
from bots.dispatch import DeliveryFailed, Dispatcher
from bots.outbox import OutboxReply, Sender, SkippedPreMessages
from bots.slack import assistant
from bots.slack.commands import FAILED, SlashCommand
from bots.slack.delivery import ThreadReply, answered_blocks, escape
from bots.slack.events import (
    BUTTON_ACTION,
    CHOOSE,
    CONTROL_VERBS,
    Address,
    SlackEvent,
    address,
    from_assistant_message,
    from_button,
    from_control,
    from_message,
    from_thread_started,
    mentions_bot,
    object_of,
    parse_session_key,
    text_of,
)
from bots.slack.threads import bot_in_thread, thread_history
from bots.slack.workspaces import Workspace, Workspaces

log = logging.getLogger("agentbot.slack")


def _not_the_token_notice(record: logging.LogRecord) -> bool:
    # bolt reads SLACK_BOT_TOKEN from the environment on its own and then warns that the client we
    # pass (which carries that same token) wins, or that our authorize step does; the warning is
    # noise on every start.
    message = record.getMessage()
    return "`token` will be unused" not in message and "`token` (or SLACK_BOT_TOKEN" not in message


logging.getLogger("slack_bolt.AsyncApp").addFilter(_not_the_token_notice)

CONTROL_DONE = {"claim": "Claimed", "approve": "Approved", "deny": "Denied"}
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
        workspaces: the workspaces served, each with the client (token) its events are answered with.
        client: the app-level `AsyncWebClient` bolt starts each request with (its base URL and
            retry handlers; with OAuth it has no token of its own).
        options: signing secret, command name, admins, status details, recovery timing.
        oauth: bolt's `AsyncOAuthFlow` when the app is installed through OAuth (many workspaces).
        authorize: bolt's authorize step (`workspaces.TokenAuthorize`, `SingleFlightAuthorize`);
            None leaves it to bolt.
        metrics: counts pre-messages left out because their answer was shown first.
    """

    def __init__(
        self,
        app: App,
        workspaces: Workspaces,
        client: Any,
        options: SlackOptions,
        *,
        oauth: Any = None,
        authorize: Any = None,
        metrics: SkippedPreMessages | None = None,
    ):
        from slack_bolt.async_app import AsyncApp
        from slack_bolt.listener_matcher.async_listener_matcher import AsyncCustomListenerMatcher
        from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
        from slack_bolt.middleware.async_custom_middleware import AsyncCustomMiddleware

        storage = app.storage
        if storage.inbox is None or storage.outbox is None or storage.database is None:
            raise ConfigError("settings", "the Slack channel needs a store with an inbox, an outbox and a database")
        self.app, self.store, self.inbox, self.database = app, storage.sessions, storage.inbox, storage.database
        self.router, self.data, self.workspaces, self.options = app.router, app.data, workspaces, options
        self.dispatcher = Dispatcher(
            storage.inbox,
            self.run,
            lease_seconds=app.settings.lease_seconds,
            settle_seconds=app.settings.inbox_settle_seconds,
        )
        self.outbox = storage.outbox
        self.metrics = metrics
        self.records = SlackRecords(storage.database)
        self.thread_contexts = assistant.SqlThreadContextStore(self.records)
        self._noticed: set[str] = set()  # events told "trouble saving" (once each)
        app.threads.add("slack:", self)  # a decision on the operator page is told in the thread
        self.bolt = AsyncApp(
            client=client,
            signing_secret=options.signing_secret or None,
            request_verification_enabled=bool(options.signing_secret),
            process_before_response=False,
            oauth_flow=oauth,
            authorize=authorize,
        )
        self.bolt.middleware(self._only_installed_workspaces)
        # bolt's annotations say one matcher / middleware; its code takes lists, and, unlike the
        # app's own listeners, wraps neither a plain coroutine function (a matcher's coroutine
        # would count as a match) nor a middleware function.
        helper = AsyncAssistant(thread_context_store=self.thread_contexts)
        started = AsyncCustomMiddleware(app_name="agentbot", func=self._accept_thread_started)
        helper.thread_started(self._acked, middleware=[started])  # type: ignore[arg-type]
        helper.user_message(
            self._acked,
            matchers=[AsyncCustomListenerMatcher(app_name="agentbot", func=self._in_assistant_thread)],  # type: ignore[arg-type]
            middleware=[AsyncCustomMiddleware(app_name="agentbot", func=self._accept_assistant_message)],  # type: ignore[arg-type]
        )
        self.bolt.assistant(helper)
        self.bolt.middleware(self._accept_events)
        self.bolt.command(options.command)(SlashCommand(self).on_command)
        self.bolt.action(re.compile(r"^agentbot_(confirm|cancel|human|choose_\d+)$"))(self._on_button)
        self.bolt.action(re.compile(f"^({'|'.join(CONTROL_VERBS)})$"))(self._on_control)

    # Lifecycle

    async def start(self) -> None:
        """Learn who the bot is (this also checks a single token), then pick up work a crash left."""
        await self.workspaces.start()
        await self.dispatcher.recover()
        self.dispatcher.start_housekeeping(
            self.options.recover_every_seconds, realert_unclaimed=self.router.realert_unclaimed
        )

    async def aclose(self) -> None:
        await self.dispatcher.aclose()

    # Intake: events, commands and clicks are stored (or answered) and acked; no turn runs here.

    async def _only_installed_workspaces(self, context: Any, next: Callable[[], Awaitable[Any]]) -> Any:
        from slack_bolt.response import BoltResponse

        team, enterprise = context.team_id or "", context.enterprise_id or ""
        if (team or enterprise) and await self.workspaces.get(team, enterprise) is None:
            # Acked (so Slack does not retry) and otherwise ignored: the app does not serve that workspace.
            log.warning("ignoring a request for unknown workspace %s", team or enterprise)
            return BoltResponse(status=200, body="")
        return await next()

    async def _acked(self) -> None:
        """An assistant listener's own work: none; its middleware stored the event, bolt acks it."""

    async def _accept_thread_started(
        self, body: dict[str, Any], context: Any, next: Callable[[], Awaitable[Any]]
    ) -> Any:
        ev = from_thread_started(body, address(body, context))
        context_of_thread = object_of(object_of(object_of(body.get("event")).get("assistant_thread")).get("context"))
        try:
            if ev is not None:
                # Kept before the ack: the thread's first message must find it an assistant thread.
                await self.records.save_thread_context(ev.channel, ev.root_ts, dict(context_of_thread))
            await self.submit(ev)
        except StorageError:
            return self._not_stored(body)
        return await next()

    async def _in_assistant_thread(self, body: dict[str, Any]) -> bool:
        """A DM thread is an assistant thread when Slack told the bot it started; other DM
        threads stay ordinary conversations."""
        event = object_of(body.get("event"))
        channel, thread_ts = text_of(event.get("channel")), text_of(event.get("thread_ts"))
        return bool(channel and thread_ts) and await self.records.thread_context(channel, thread_ts) is not None

    async def _accept_assistant_message(
        self, body: dict[str, Any], context: Any, next: Callable[[], Awaitable[Any]]
    ) -> Any:
        where = address(body, context)
        ws = await self.workspaces.get(where.team, where.enterprise)
        try:
            await self.submit(from_assistant_message(body, ws.me.user_id if ws else "", where))
        except StorageError:
            return self._not_stored(body)
        return await next()  # bolt acks after this

    def _not_stored(self, body: dict[str, Any]) -> Any:
        """Not stored, so not acked: Slack delivers it again once the database is back."""
        from slack_bolt.response import BoltResponse

        log.exception("could not store slack event %s; asking Slack to retry", body.get("event_id"))
        return BoltResponse(status=503, body="")

    async def _accept_events(self, body: dict[str, Any], context: Any, next: Callable[[], Awaitable[Any]]) -> Any:
        """Events API deliveries are stored here and then answered 200 by this middleware.

        Storing before the 200 turns Slack's at-least-once delivery into exactly-once: if the
        process dies before the event is stored, Slack sees no ack and retries; once it is stored,
        every retry is a duplicate. The turn itself runs later, never inside the HTTP request.
        Every event type is acked, so Slack never retries one this app does not handle.
        """
        from slack_bolt.response import BoltResponse

        if body.get("type") != "event_callback":
            return await next()
        event = object_of(body.get("event"))
        kind = event.get("type")
        where = address(body, context)
        ws = await self.workspaces.get(where.team, where.enterprise)
        if ws is None and kind not in ("app_uninstalled", "tokens_revoked", "team_access_revoked"):
            return BoltResponse(status=200, body="")  # no workspace served: acked, nothing to answer
        try:
            if kind in ("app_mention", "message") and ws is not None:
                if not text_of(event.get("channel")):
                    log.warning(
                        "slack: a %s event without a channel (%s); nothing to answer", kind, body.get("event_id")
                    )
                elif kind == "app_mention":
                    await self.submit(from_message(body, ws.me.user_id, mention=True, where=where))
                else:
                    await self._on_message(body, ws, where)
            elif kind in ("app_uninstalled", "tokens_revoked"):
                await self._forget(body, where)
            elif kind in ("team_access_revoked", "team_access_granted"):
                await self._access(body, where)
        except StorageError:
            return self._not_stored(body)
        return BoltResponse(status=200, body="")

    async def _on_message(self, body: dict[str, Any], ws: Workspace, where: Address) -> None:
        event = object_of(body.get("event"))
        is_dm = event.get("channel_type") == "im"
        if mentions_bot(body, ws.me.user_id) and not is_dm:
            return  # the app_mention event for the same message answers it
        ev = from_message(body, ws.me.user_id, mention=False, where=where)
        if ev is None:
            return
        if is_dm or (
            ev.in_thread and (await self.inbox.knows(ev.session_key) or await bot_in_thread(ws.client, ev, ws.me))
        ):
            await self.submit(ev)

    async def _forget(self, body: dict[str, Any], where: Address) -> None:
        """app_uninstalled, or tokens_revoked for the bot: the install's tokens are deleted (an
        org-wide install's for its whole org, a workspace's for that workspace), so its events stop
        being answered; a single configured token is only reported."""
        event = object_of(body.get("event"))
        kind, scope = event.get("type"), (f"org {where.enterprise}" if where.org_wide else f"workspace {where.team}")
        if kind == "tokens_revoked" and not object_of(event.get("tokens")).get("bot"):
            log.warning("slack: user tokens revoked in %s (the bot's token stays)", scope)
            return
        installations = self.bolt.installation_store
        if installations is None:
            log.warning("slack: %s in %s; SLACK_BOT_TOKEN no longer works there", kind, scope)
            return
        if where.org_wide:
            await installations.async_delete_all(enterprise_id=where.enterprise, team_id=None)
        else:
            await installations.async_delete_all(enterprise_id=where.enterprise or None, team_id=where.team or None)
        log.warning("slack: %s in %s; its installation and tokens are deleted", kind, scope)

    async def _access(self, body: dict[str, Any], where: Address) -> None:
        """An org-wide install's access to some of its org's workspaces was revoked (or granted again)."""
        event = object_of(body.get("event"))
        listed = event.get("team_ids")
        teams = [t for t in listed if isinstance(t, str) and t] if isinstance(listed, list) else []
        revoked = event.get("type") == "team_access_revoked"
        if not teams or not where.enterprise or self.bolt.installation_store is None:
            return
        await self.records.set_access(teams, where.enterprise, revoked=revoked)
        verb = "no longer serves" if revoked else "serves again"
        log.warning("slack: the org-wide install of %s %s workspaces %s", where.enterprise, verb, ", ".join(teams))

    async def _on_button(self, ack: Any, body: dict[str, Any], context: Any) -> None:
        await self.submit(from_button(body, address(body, context)))  # stored first, like events: never lost
        await ack()

    async def _on_control(self, ack: Any, body: dict[str, Any], context: Any, respond: Any) -> None:
        ev = from_control(body, address(body, context))
        if ev is not None and not await self.is_admin(ev):
            await ack()
            await respond(text="Only agentbot admins can do that.", replace_original=False)
            return
        await self.submit(ev)
        await ack()

    async def submit(self, ev: SlackEvent | None) -> None:
        """Store and schedule; a StorageError propagates so the caller does not ack what it lost."""
        if ev is None:
            return
        written = _seconds(ev.ts) if ev.kind == "message" else None  # Slack's ts: when it was written
        event = InboxEvent(key=ev.key, session_key=ev.session_key, payload=ev.model_dump(), written_at=written)
        await self.dispatcher.submit(event)

    async def is_admin(self, ev: SlackEvent) -> bool:
        """SLACK_ADMIN_USERS anywhere, and in an OAuth workspace the person who installed the app;
        never someone of another organisation (a Slack Connect channel)."""
        if ev.outsider:
            return False
        ws = await self.workspaces.get(ev.team, ev.enterprise)
        return ev.user in self.options.admins or (ws is not None and ev.user in ws.admins)

    async def open_thread(self, session_key: str, key: str) -> Reply | None:
        """A conversation's thread, for a message outside a turn, each shown once through the outbox."""
        parsed = parse_session_key(session_key)
        ws = await self.workspaces.get(parsed[0]) if parsed else None
        if parsed is None or ws is None:
            return None
        _team, channel, root = parsed
        thread = ThreadReply(ws.client, channel, root or None, session_key)
        return OutboxReply(self.outbox, thread, key, session_key, self.metrics, "slack")

    # Work: one stored event, run by the dispatcher in its session's order.

    async def run(self, event: InboxEvent) -> None:
        ev = SlackEvent.model_validate(event.payload)
        ws = await self.workspaces.get(ev.team, ev.enterprise)
        if ws is None:
            log.warning("dropping event %s: the app is no longer installed in workspace %s", ev.key, ev.team)
            return
        if not ev.channel:
            log.warning("dropping event %s: it names no channel to answer in", ev.key)
            return
        thread = ThreadReply(ws.client, ev.channel, ev.reply_ts, ev.session_key, ev.user)
        viewing = await self._assistant_thread(ev)
        status = assistant.AssistantThreadReply(thread, ws.client) if viewing is not None else None
        sender: Sender = status or thread
        reply = OutboxReply(self.outbox, sender, event.key, ev.session_key, self.metrics, "slack")
        if event.status == "committed":
            await reply.resend()  # the turn ran and committed; only its answers are left to send
            return
        if ev.kind == "assistant_started":
            await self._greet(ev, ws, reply)
            return
        if ev.kind == "control":
            await self._control(ev, ws, reply)
            return
        resume = ev.kind == "message" and ev.text.lower() in ("resume", "resume bot")
        if resume and await self.is_admin(ev):
            await self._control(ev.model_copy(update={"action": "release"}), ws, reply)
            return
        interaction = await self._interaction(ev, ws, viewing)
        await self._answer(event.key, ev, ws, interaction, reply, status)

    async def _interaction(self, ev: SlackEvent, ws: Workspace, viewing: str | None) -> Interaction:
        """The event as the router reads it: who is asking (a customer of this workspace, or
        nobody known), where, and the thread's earlier messages when the bot joins one."""
        customer = await self.data.find_customer("slack", ev.user)
        if customer and not speaks_for(customer.get("slack_team_id"), ev):
            customer = None  # the same user id elsewhere is someone else: a guest here
        return Interaction(
            id=ev.key,
            text=ev.text,
            session_key=ev.session_key,
            customer_id=customer.get("customer_id") if customer else None,
            context=ChannelContext(
                channel_type=ChannelType.slack,
                workspace=ev.team,
                channel=ev.channel,
                thread=ev.root_ts,
                user=ev.user,
                viewing=viewing or "",
            ),
            thread_history=await self._thread_history(ev, ws),
            from_inbox=True,
            action=BUTTON_ACTION.get(ev.action or "") if ev.kind == "button" else None,  # type: ignore[arg-type]
            action_hash=ev.action_hash,
            choice=ev.choice,
        )

    async def _answer(
        self,
        key: str,
        ev: SlackEvent,
        ws: Workspace,
        interaction: Interaction,
        reply: OutboxReply,
        status: assistant.AssistantThreadReply | None,
    ) -> None:
        """Run the turn, with the assistant thread's status line while it works (when there is one),
        and tell the person when it fails."""
        try:
            if status is not None:
                if ev.kind == "message" and await self._first_request(ev):
                    await assistant.set_title(ws.client, ev.channel, ev.root_ts, ev.text)
                await status.working()
            response = await self.router.handle(interaction, reply=reply)
            if ev.kind == "button" and not all(m.private for m in response.messages):
                await self._answered(ev, ws)  # a refused click (not the requester's) leaves the buttons
        except StorageError:
            # Not saved: the event stays in the inbox and is answered when the database is back.
            if key not in self._noticed:
                self._noticed.add(key)
                notice = OutboundMessage(kind="notice", text=StorageError.retry_notice, id=f"{key}:trouble")
                await reply.notify_once(notice)
            raise
        except DeliveryFailed:
            raise  # the answers are stored; the dispatcher sends them again later
        except Exception:
            # The one place a Slack turn fails: the person hears so, the log has the details.
            log.exception("slack turn %s failed", ev.key)
            with contextlib.suppress(Exception):
                await reply(OutboundMessage(kind="error", text=FAILED, id=f"{key}:failed"))
            raise
        finally:
            if status is not None:
                with contextlib.suppress(Exception):  # a status left behind clears itself in Slack
                    await status.clear()

    async def _assistant_thread(self, ev: SlackEvent) -> str | None:
        """For an event in an assistant thread, the channel the person is looking at ("" for none);
        None elsewhere. Buttons in an assistant thread count too: their turns have a status line."""
        if not ev.root_ts or not ev.channel.startswith("D"):
            return None
        context = await self.records.thread_context(ev.channel, ev.root_ts)
        return str(context.get("channel_id") or "") if context is not None else None

    async def _first_request(self, ev: SlackEvent) -> bool:
        saved, _ = await self.store.load(ev.session_key, 0)
        return saved is None

    async def _greet(self, ev: SlackEvent, ws: Workspace, reply: OutboxReply) -> None:
        settings = self.app.storefront.assistant
        await reply(OutboundMessage(kind="notice", text=settings.greeting, id=f"{ev.key}:greeting"))
        await assistant.offer_prompts(ws.client, ev.channel, ev.root_ts, settings)

    async def _control(self, ev: SlackEvent, ws: Workspace, reply: Reply) -> None:
        actor = ev.user_name or "An admin"
        if ev.action in ("approve", "deny"):
            # Recorded as who clicked: their handle and their Slack id.
            who = f"{actor} (<@{ev.user}>)" if ev.user else actor
            verdict: Verdict = "approve" if ev.action == "approve" else "deny"
            notice = await self.router.decide(
                ev.session_key, verdict, who, escalation_id=ev.action_hash or "", reply=reply
            )
        else:
            action: Action = "claim" if ev.action == "claim" else "release"
            notice = await self.router.control(ev.session_key, action, actor, reply)
        if ev.response_url:
            from slack_sdk.webhook.async_client import AsyncWebhookClient

            await AsyncWebhookClient(ev.response_url).send(text=notice, response_type="ephemeral")
        if ev.origin_channel and ev.ts:
            done = CONTROL_DONE.get(ev.action, "Bot resumed")
            await ws.client.chat_update(
                channel=ev.origin_channel,
                ts=ev.ts,
                text=ev.question or notice,
                blocks=answered_blocks(escape(ev.question or notice), f"{done} by <@{ev.user}>: {escape(notice)}"),
            )

    async def _answered(self, ev: SlackEvent, ws: Workspace) -> None:
        done = f"Chose “{escape(ev.text)}”" if ev.action == CHOOSE else ANSWERED.get(ev.action, "Answered")
        blocks = answered_blocks(ev.question, f"{done} by <@{ev.user}>")
        try:
            await ws.client.chat_update(channel=ev.origin_channel, ts=ev.ts, text=ev.question, blocks=blocks)
        except Exception as e:  # noqa: BLE001 - stale buttons are cosmetic; the answer matters
            log.warning("could not update the clicked question %s: %s", ev.ts, e)

    async def _thread_history(self, ev: SlackEvent, ws: Workspace) -> list[Message]:
        if not ev.in_thread:
            return []
        saved, _ = await self.store.load(ev.session_key, 0)
        return [] if saved is not None else await thread_history(ws.client, ev, ws.me)


def speaks_for(mapped: Any, ev: SlackEvent) -> bool:
    """Whether the speaker is the customer whose record names the Slack team `mapped` (None: any
    workspace this app serves). Someone of another organisation (a Slack Connect channel) is a
    customer only where the record names their own workspace or org: nobody outside acts for a
    customer inside."""
    if ev.outsider:
        return bool(mapped) and mapped == ev.speaker_team
    return mapped in (None, "", ev.team) or (bool(ev.enterprise) and mapped == ev.enterprise)


def _seconds(ts: str) -> float | None:
    try:
        return float(ts)
    except ValueError:
        return None
