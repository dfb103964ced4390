"""Which workspace an event belongs to, and the token, bot identity and admin channel to answer it with.

One workspace by `SLACK_BOT_TOKEN` (`SingleWorkspace`), or every workspace that installed the app
through OAuth (`InstalledWorkspaces`, over the installations bolt's flow saved in the bot's own
database through `SqlInstallationStore`). An Enterprise Grid org-wide install is one installation
serving every workspace of its org: it is found by the org (enterprise id) first, then a workspace
install by its team, and each workspace keeps its own admin channel and conversations. A turn runs
after its event was acked, outside bolt's request, so it looks its workspace up here rather than
using bolt's per-request client.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.async_authorize import AsyncAuthorize
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

from adapters.storage.slack_records import InstallationRow, SlackRecords, team_key
from bots.ratelimits import RateLimiter
from bots.slack.ratelimits import PacedWebClient
from bots.slack.threads import Me

log = logging.getLogger("agentbot.slack")


@dataclass
class Workspace:
    team_id: str
    client: Any  # an AsyncWebClient carrying this workspace's bot token (an org-wide install's: the org's)
    me: Me = field(default_factory=Me)
    admin_channel: str = ""
    admins: frozenset[str] = frozenset()  # besides SLACK_ADMIN_USERS: who installed the app here
    enterprise_id: str = ""  # its Enterprise Grid org, when known
    org_wide: bool = False  # served by its org's org-wide install


class Workspaces(Protocol):
    """The workspaces this app serves."""

    async def start(self) -> None:
        """Ready before the first event (a single token is checked with auth.test here)."""
        ...

    async def get(self, team: str, enterprise: str = "") -> Workspace | None:
        """The workspace of `team` (in the Grid org `enterprise`, when the delivery names one); None
        when the app is not installed there. An empty team (an alert about a conversation outside
        Slack) names the default workspace, if there is one."""
        ...

    async def set_admin_channel(self, workspace: Workspace, channel: str) -> bool:
        """Send this workspace's admin alerts to `channel`; False where it is fixed by configuration."""
        ...


class SingleWorkspace:
    """`SLACK_BOT_TOKEN`: the workspace the token belongs to, learnt from auth.test at start.

    Args:
        client: the `AsyncWebClient` with the bot token.
        admin_channel: `SLACK_ADMIN_CHANNEL`.
    """

    def __init__(self, client: Any, admin_channel: str = ""):
        self.workspace = Workspace(team_id="", client=client, admin_channel=admin_channel)
        self._checked: asyncio.Future[Any] | None = None

    async def checked(self) -> Any:
        """The token's auth.test answer: asked once (one flight however many requests wait for
        it), kept for the process's life; a failed check is asked again by the next caller."""
        if self._checked is None or (self._checked.done() and self._checked.exception() is not None):
            self._checked = asyncio.ensure_future(self.workspace.client.auth_test())
        return await asyncio.shield(self._checked)

    async def start(self) -> None:
        me = await self.checked()  # this also checks the token
        self.workspace.me = Me(me.get("user_id", ""), me.get("bot_id", ""))
        self.workspace.team_id = me.get("team_id") or ""
        self.workspace.enterprise_id = me.get("enterprise_id") or ""
        self.workspace.org_wide = bool(me.get("is_enterprise_install"))

    async def get(self, team: str, enterprise: str = "") -> Workspace | None:
        ours = self.workspace
        if ours.org_wide:
            # An org-wide token serves every workspace of its org, each as its own workspace.
            if enterprise and enterprise != ours.enterprise_id:
                return None
            return replace(ours, team_id=team) if team else ours
        if team and ours.team_id and team != ours.team_id:
            return None
        return ours

    async def set_admin_channel(self, workspace: Workspace, channel: str) -> bool:
        return False


class TokenAuthorize(AsyncAuthorize):
    """bolt's authorize for the one configured token, from its auth.test at start: no request
    waits on a Web API call to be acked (bolt's own single-token check asks on each request until
    its first answer lands, a storm when a burst arrives at once)."""

    def __init__(self, workspace: SingleWorkspace):
        self.workspace = workspace

    async def __call__(  # type: ignore[override]
        self, *, context: Any, enterprise_id: str | None, team_id: str | None, user_id: str | None, **_actor: Any
    ) -> AuthorizeResult | None:
        checked = await self.workspace.checked()
        token = self.workspace.workspace.client.token
        return AuthorizeResult.from_auth_test_response(
            auth_test_response=checked, bot_token=token, bot_scopes=checked.headers.get("x-oauth-scopes")
        )


class SingleFlightAuthorize(AsyncAuthorize):
    """bolt's installation-store authorize with one flight per installation: the requests of a
    workspace that arrive together wait for one lookup and one auth.test, and its answer is then
    kept per token (bolt's cache), so the ack path makes no Web API call after the first.

    Args:
        inner: bolt's `AsyncInstallationStoreAuthorize` (the OAuth flow's); its cache is turned on.
    """

    def __init__(self, inner: Any):
        inner.cache_enabled = True
        self.inner = inner
        self._flights: dict[tuple[str | None, str | None], asyncio.Future[AuthorizeResult | None]] = {}

    async def __call__(  # type: ignore[override]
        self, *, context: Any, enterprise_id: str | None, team_id: str | None, user_id: str | None, **actor: Any
    ) -> AuthorizeResult | None:
        key = (enterprise_id, team_id)
        flight = self._flights.get(key)
        if flight is None:
            flight = asyncio.ensure_future(
                self.inner(context=context, enterprise_id=enterprise_id, team_id=team_id, user_id=user_id, **actor)
            )
            self._flights[key] = flight
            flight.add_done_callback(lambda _f: self._flights.pop(key, None))
        return await asyncio.shield(flight)


class InstalledWorkspaces:
    """Every workspace that installed the app through OAuth, from the installations table.

    Args:
        records: Slack's records in the bot's database.
        api_url: the Web API base URL for the clients made per workspace.
        limiter: Slack's shared pauses and pacing, which every workspace's client waits on.
        client_options: further `AsyncWebClient` arguments (retry handlers).
    """

    def __init__(self, records: SlackRecords, api_url: str, limiter: RateLimiter, **client_options: Any):
        self.records = records
        self.api_url = api_url
        self.limiter = limiter
        self.client_options = client_options
        self._clients: dict[str, Any] = {}  # by token: a reinstall's new token gets a new client

    async def start(self) -> None:
        return None

    async def get(self, team: str, enterprise: str = "") -> Workspace | None:
        row = await self.records.installation(team_key(None, enterprise, org_wide=True)) if enterprise else None
        if row is None and team:
            row = await self.records.installation(team_key(team))
        settings = await self.records.workspace(team) if team else None
        if row is None and settings is not None and settings.enterprise_id and not enterprise:
            # A conversation named by its team alone (an alert): its org's org-wide install serves it.
            row = await self.records.installation(team_key(None, settings.enterprise_id, org_wide=True))
        if row is None or (row.org_wide and settings is not None and settings.revoked_at is not None):
            return None
        return Workspace(
            team_id=team or row.team_id or "",
            client=self._client(row.bot_token),
            me=Me(row.bot_user_id or "", str(row.installation.get("bot_id") or "")),
            admin_channel=(settings.admin_channel or "") if settings is not None else "",
            admins=frozenset({str(row.installation.get("user_id") or "")} - {""}),
            enterprise_id=row.enterprise_id or "",
            org_wide=row.org_wide,
        )

    async def set_admin_channel(self, workspace: Workspace, channel: str) -> bool:
        await self.records.set_admin_channel(workspace.team_id, workspace.enterprise_id or None, channel)
        return True

    def _client(self, token: str) -> Any:
        if token not in self._clients:
            self._clients[token] = PacedWebClient(
                self.limiter, token=token, base_url=self.api_url, **self.client_options
            )
        return self._clients[token]


class SqlInstallationStore(AsyncInstallationStore):
    """slack_sdk's installation store over the installations table: one bot install per workspace.

    bolt's OAuth flow saves here; its authorize step finds the bot token of each request's
    workspace here (an org-wide install by its org, then a workspace's by its team); uninstalling
    and revoked tokens delete the row (logged by the channel).
    """

    def __init__(self, records: SlackRecords):
        self.records = records

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_save(self, installation: Installation) -> None:
        if not installation.bot_token:
            return  # a user-token-only install: this app acts as its bot only
        data = installation.to_dict()
        data["installed_at"] = installation.installed_at  # epoch seconds, as slack_sdk reads it back
        for name in ("bot_token_expires_at", "user_token_expires_at"):
            if isinstance(data.get(name), datetime):
                data[name] = data[name].timestamp()
        org_wide = bool(installation.is_enterprise_install)
        await self.records.save_installation(
            InstallationRow(
                team_key=team_key(installation.team_id, installation.enterprise_id, org_wide=org_wide),
                enterprise_id=installation.enterprise_id,
                team_id=installation.team_id,
                team_name=installation.team_name,
                bot_user_id=installation.bot_user_id,
                bot_token=installation.bot_token,
                installation=data,
                installed_at=datetime.fromtimestamp(installation.installed_at, UTC),
            )
        )
        log.warning(
            "slack: installed in workspace %s (%s) by %s",
            installation.team_id or installation.enterprise_id,
            installation.team_name or "",
            installation.user_id,
        )

    async def async_save_bot(self, bot: Bot) -> None:
        raise NotImplementedError("bots are saved with their installation")

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        # The org's org-wide install first (it serves every workspace of the org), then the workspace's own.
        row = None
        if enterprise_id:
            row = await self.records.installation(team_key(None, enterprise_id, org_wide=True))
        if row is None and team_id:
            row = await self.records.installation(team_key(team_id))
        if row is None or (user_id is not None and row.installation.get("user_id") != user_id):
            return None
        return Installation(**row.installation)

    async def async_find_bot(
        self, *, enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None = False
    ) -> Bot | None:
        found = await self.async_find_installation(
            enterprise_id=enterprise_id, team_id=team_id, is_enterprise_install=is_enterprise_install
        )
        return found.to_bot() if found is not None else None

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await self.async_delete_installation(enterprise_id=enterprise_id, team_id=team_id)

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        if user_id is not None:
            return  # no user tokens are kept; the workspace's bot install stays
        key = team_key(team_id) if team_id else team_key(None, enterprise_id, org_wide=True)
        if await self.records.delete_installation(key):
            log.warning("slack: forgot the installation %s (its tokens are deleted)", key)

    async def async_delete_all(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await self.async_delete_installation(enterprise_id=enterprise_id, team_id=team_id)


class SqlOAuthStateStore(AsyncOAuthStateStore):
    """OAuth `state` values in the bot's database, so any worker can finish an install another began."""

    def __init__(self, records: SlackRecords, expiration_seconds: int = 600):
        self.records = records
        self.expiration_seconds = expiration_seconds

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        state = secrets.token_urlsafe(24)
        await self.records.issue_state(state, self.expiration_seconds)
        return state

    async def async_consume(self, state: str) -> bool:
        return await self.records.consume_state(state)
