"""The operator page over HTTP: off without a token, closed without signing in, every POST with its
CSRF token, one workspace at a time, and never a secret or an unmasked e-mail address or phone number."""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import unquote_plus

import aiohttp
from pydantic import SecretStr
from yarl import URL

from agent.app import App
from agent.context.output import Reply
from agent.domain.types import ChannelContext, ChannelType, Interaction, OutboundMessage
from bots.admin.pages import AdminMount
from bots.admin.settings import AdminSettings
from bots.app import build_app
from bots.serving import serve_health
from tests.helpers import REPO

TOKEN = "op-token-for-the-page-7Hq2"
KEY = "sk-proj-Zx9Qw7Er5Ty3Ui1Op0AsDf2Gh4Jk6Lz8Mn"
ODD_SECRET = "tea.kettle!42+moss"


@asynccontextmanager
async def served(db_url: str, token: str = TOKEN, labels: Path | None = None) -> AsyncIterator[tuple[App, str]]:
    """The page over the shipped project; `labels` is where its buttons write (a copy, never the checkout)."""
    env = {"OPENAI_API_KEY": KEY, "SLACK_SIGNING_SECRET": ODD_SECRET}
    if labels is not None:  # the project is a copy: its stamp and banks are written there
        shutil.copytree(
            REPO / "config", labels, dirs_exist_ok=True, ignore=shutil.ignore_patterns("stores", ".reload*")
        )
    async with build_app(labels or REPO / "config", REPO / "data", db_url, env=env) as app:
        assert app.storage.database is not None
        settings = AdminSettings(token=SecretStr(token), config_dir=str(labels or REPO / "config"))
        async with serve_health(app.storage.database, app.metrics, "127.0.0.1", 0, AdminMount(app, settings)) as url:
            yield app, url


async def said(app: App, text: str, session: str, workspace: str = "T0SHOP") -> None:
    context = ChannelContext(channel_type=ChannelType.slack, workspace=workspace, channel="C1", user="U1")
    interaction = Interaction(
        id=f"i-{uuid.uuid4().hex[:8]}", text=text, session_key=session, customer_id="C-001", context=context
    )
    await app.router.handle(interaction)


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "the page has a form with its CSRF token"
    return found.group(1)


async def test_no_token_no_page(db_url: str) -> None:
    async with served(db_url, token="") as (_, url), aiohttp.ClientSession() as http:
        for path in ("/admin", "/admin/login", "/admin/review", "/admin/conversations"):
            async with http.get(url + path) as r:
                assert r.status == 404, path
        async with http.get(url + "/healthz") as r:
            assert r.status == 200


async def test_without_signing_in_the_page_shows_a_login_form_and_no_data(db_url: str) -> None:
    async with served(db_url) as (app, url), aiohttp.ClientSession() as http:
        await said(app, "where is O-12345", "slack:T0SHOP:C1:1.1")
        for headers in ({}, {"Authorization": "Bearer not-the-token"}, {"Authorization": TOKEN}):
            for path in ("/admin", "/admin/conversations", "/admin/review", "/admin/handoffs"):
                async with http.get(url + path, headers=headers) as r:
                    body = await r.text()
                    assert r.status == 401, (path, headers)
                    assert "Sign in" in body and "O-12345" not in body and "T0SHOP" not in body
            async with http.post(url + "/admin/review/apply", headers=headers) as r:
                assert r.status == 401


async def test_signing_in_sets_a_signed_httponly_samesite_cookie(db_url: str) -> None:
    jar = aiohttp.CookieJar(unsafe=True)
    async with served(db_url) as (app, url), aiohttp.ClientSession(cookie_jar=jar) as http:
        await said(app, "where is O-12345", "slack:T0SHOP:C1:1.2")
        async with http.get(url + "/admin/login") as r:
            csrf = csrf_of(await r.text())
        async with http.post(url + "/admin/login", data={"token": TOKEN}) as r:
            assert r.status == 403  # no CSRF token: refused before the token is even looked at
        async with http.post(url + "/admin/login", data={"token": "guess", "csrf": csrf}) as r:
            assert r.status == 401 and "does not open this page" in await r.text()
        async with http.get(url + "/admin/login") as r:
            csrf = csrf_of(await r.text())
        async with http.post(url + "/admin/login", data={"token": TOKEN, "csrf": csrf}, allow_redirects=False) as r:
            assert r.status == 303
            cookie = r.headers["Set-Cookie"]
            assert "agentbot_admin=" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
            assert TOKEN not in cookie
        async with http.get(url + "/admin") as r:
            page = await r.text()
            assert r.status == 200 and "turns today" in page and "T0SHOP" in page
        async with http.post(url + "/admin/review/apply", allow_redirects=False) as r:
            assert r.status == 403  # signed in, but the POST lacks its CSRF token
        forged = jar.filter_cookies(URL(url + "/admin"))["agentbot_admin"].value[:-4] + "beef"
        async with aiohttp.ClientSession(cookies={"agentbot_admin": forged}) as other, other.get(url + "/admin") as r:
            assert r.status == 401


async def test_a_script_with_the_bearer_token_reads_pages_and_posts_with_the_csrf_token(
    db_url: str, tmp_path: Path
) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    labels = tmp_path / "config"
    labels.mkdir()
    async with served(db_url, labels=labels) as (app, url), aiohttp.ClientSession(headers=bearer) as http:
        await said(app, "nobody answered my emails for a week", "slack:T0SHOP:C1:1.3")
        async with http.get(url + "/admin/review") as r:
            page = await r.text()
            assert r.status == 200 and "nobody answered my emails for a week" in page
        async with http.post(url + "/admin/review/apply", allow_redirects=False) as r:
            assert r.status == 403
        async with http.post(url + "/admin/review/apply", data={"csrf": csrf_of(page)}, allow_redirects=False) as r:
            assert r.status == 303 and "banks+reloaded" in r.headers["Location"]
    assert (labels / ".reload").exists()  # other processes on the project are told too


async def test_one_workspace_at_a_time_and_nothing_secret_or_personal_shown(db_url: str, tmp_path: Path) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    leaky = f"my key {KEY} and {ODD_SECRET} broke it, write to dana.r@example.org or call +44 20 7946 0958"
    async with served(db_url) as (app, url), aiohttp.ClientSession(headers=bearer) as http:
        await said(app, leaky, "slack:T0SHOP:C1:2.1", workspace="T0SHOP")
        await said(app, "where is O-12345", "slack:T0OTHER:C9:2.2", workspace="T0OTHER")
        pages = []
        for path in (
            "/admin?ws=T0SHOP",
            "/admin/conversations?ws=T0SHOP",
            "/admin/conversations/slack:T0SHOP:C1:2.1?ws=T0SHOP",
            "/admin/review?ws=T0SHOP",
            "/admin/handoffs?ws=T0SHOP",
        ):
            async with http.get(url + path) as r:
                assert r.status == 200, path
                pages.append(await r.text())
        async with http.get(url + "/admin/conversations/slack:T0OTHER:C9:2.2?ws=T0SHOP") as r:
            assert r.status == 404  # another workspace's conversation, under this one's filter
        async with http.get(url + "/admin/conversations?ws=T0OTHER") as r:
            other = await r.text()
    everything = "\n".join(pages)
    assert "broke it" in everything  # the conversation and its review item are shown...
    for secret in (KEY, ODD_SECRET, TOKEN, "dana.r@example.org", "7946 0958"):
        assert secret not in everything  # ...with nothing secret or personal in them
    assert "T0OTHER" in pages[0] and "slack:T0OTHER" not in pages[1]  # the other workspace is named, not shown
    assert "slack:T0OTHER:C9:2.2" in other and "slack:T0SHOP" not in other


async def test_the_overview_shows_a_backlog_when_messages_wait(db_url: str) -> None:
    from agent.domain.records import InboxEvent

    bearer = {"Authorization": f"Bearer {TOKEN}"}
    async with served(db_url) as (app, url), aiohttp.ClientSession(headers=bearer) as http:
        await said(app, "where is O-12345", "slack:T0SHOP:C1:1.3")
        async with http.get(url + "/admin?ws=T0SHOP") as r:
            assert r.status == 200 and "waiting to be answered" not in await r.text()
        assert app.storage.inbox is not None
        for n in range(3):  # a rate-limited platform leaves these unanswered for now
            await app.storage.inbox.accept(InboxEvent(key=f"Ev{n}", session_key="slack:T0SHOP:C1:1.3", payload={}))
        async with http.get(url + "/admin?ws=T0SHOP") as r:
            assert "3 messages waiting to be answered" in await r.text()


async def test_every_admin_response_carries_the_security_headers_and_no_inline_code(db_url: str) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    long_text = "my blender " + "grinds " * 560  # 3,931 characters: under the length limit, to wrap
    async with served(db_url) as (app, url), aiohttp.ClientSession() as anon:
        await said(app, long_text, "slack:T0SHOP:C1:9.1")
        async with aiohttp.ClientSession(headers=bearer) as http:
            pages = ["/admin", "/admin/conversations?ws=T0SHOP&q=blender", "/admin/handoffs", "/admin/review"]
            pages += ["/admin/conversations/slack:T0SHOP:C1:9.1?ws=T0SHOP", "/admin/conversations/nobody?ws=T0SHOP"]
            pages += ["/admin/static/admin.css"]
            seen: dict[str, tuple[int, dict[str, str], str]] = {}
            for page in pages:
                async with http.get(url + page) as r:
                    seen[page] = (r.status, dict(r.headers), await r.text())
            async with http.post(url + "/admin/review/apply") as r:  # no CSRF token: 403
                seen["POST apply"] = (r.status, dict(r.headers), await r.text())
        for page in ["/admin", "/admin/login", "/admin/review"]:
            async with anon.get(url + page, allow_redirects=False) as r:
                seen["anon " + page] = (r.status, dict(r.headers), await r.text())
    assert seen["/admin/conversations/nobody?ws=T0SHOP"][0] == 404 and seen["POST apply"][0] == 403
    assert seen["anon /admin"][0] == 401 and seen["anon /admin/login"][0] == 200
    for page, (status, headers, body) in seen.items():
        policy = headers.get("Content-Security-Policy", "")
        assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy, (page, status, headers)
        assert "'unsafe-inline'" not in policy
        assert headers.get("Referrer-Policy") == "no-referrer", page
        assert headers.get("X-Content-Type-Options") == "nosniff", page
        if headers.get("Content-Type", "").startswith("text/html"):
            assert "<script" not in body and "<style" not in body and " style=" not in body, page
    # The search box holds what was searched for, and the conversation found shows.
    box = re.search(r'<input name="q" value="([^"]*)"', seen["/admin/conversations?ws=T0SHOP&q=blender"][2])
    assert box and box.group(1) == "blender"
    assert "slack:T0SHOP:C1:9.1" in seen["/admin/conversations?ws=T0SHOP&q=blender"][2]
    css = seen["/admin/static/admin.css"][2]
    assert "overflow-wrap: anywhere" in css and seen["/admin/static/admin.css"][1]["Content-Type"].startswith(
        "text/css"
    )


class Thread:
    """A channel's thread as the page reaches it (`App.threads`): keeps what it was told, once per id."""

    def __init__(self) -> None:
        self.told: dict[str, str] = {}

    async def open_thread(self, session_key: str, key: str) -> Reply | None:
        async def reply(message: OutboundMessage) -> None:
            self.told.setdefault(message.id, message.text)

        return reply


async def escalated(app: App, session: str) -> None:
    """C-003 (basic tier) asks for a refund over their limit: the policy holds it for a person."""
    context = ChannelContext(channel_type=ChannelType.slack, workspace="T0SHOP", channel="C1", user="U0CHEN003")
    text = "I need a refund for order O-67890"
    asked = Interaction(
        id=f"i-{uuid.uuid4().hex[:8]}", text=text, session_key=session, customer_id="C-003", context=context
    )
    response = await app.router.handle(asked)
    assert response.alerts == ["policy_escalation"]


async def decision_form(http: aiohttp.ClientSession, url: str, session: str, by: str) -> tuple[str, dict[str, str]]:
    """The handoffs page, and its decision form for the conversation's held action, signed by `by`."""
    async with http.get(url + "/admin/handoffs?ws=T0SHOP") as r:
        page = await r.text()
    held = re.search(r'name="escalation_id" value="([^"]+)"', page)
    assert held is not None, "the page offers a decision on the held action"
    return page, {"csrf": csrf_of(page), "session_id": session, "escalation_id": held.group(1), "by": by}


async def test_an_operator_approves_an_escalation_on_the_page_once_and_the_thread_is_told(db_url: str) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    thread = Thread()
    async with served(db_url) as (app, url), aiohttp.ClientSession(headers=bearer) as http:
        app.threads.add("slack:", thread)
        session = "slack:T0SHOP:C1:7.1"
        await escalated(app, session)
        page, form = await decision_form(http, url, session, "Dana")
        assert "waiting for a decision" in page and "issue_refund(amount=32990" in page and "order_id=O-67890" in page
        async with http.post(url + "/admin/handoffs/decide?ws=T0SHOP", data=form | {"verdict": "maybe"}) as r:
            assert r.status == 400
        posted = [
            http.post(
                url + "/admin/handoffs/decide?ws=T0SHOP", data=form | {"verdict": "approve"}, allow_redirects=False
            )
            for _ in range(2)
        ]
        locations = []
        for post in posted:  # the same form posted twice (a double click)
            async with post as r:
                assert r.status == 303
                locations.append(unquote_plus(r.headers["Location"]))
        assert "approved your request" in locations[0] and "already approved by Dana (operator page)" in locations[1]
        assert len(await app.store.fetch("SELECT id FROM refunds WHERE order_id = 'O-67890'")) == 1  # type: ignore[attr-defined]
        (told,) = thread.told.values()
        assert "approved your request" in told and "refunded" in told
        async with http.get(url + f"/admin/conversations/{session}?ws=T0SHOP") as r:
            transcript = await r.text()
        assert f"Dana (operator page): approve issue_refund ({form['escalation_id']})" in transcript  # the audit: who
        assert "approved your request" in transcript


async def test_an_operator_denies_on_the_page_nothing_runs_and_the_thread_hears_why(db_url: str) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    thread = Thread()
    async with served(db_url) as (app, url), aiohttp.ClientSession(headers=bearer) as http:
        app.threads.add("slack:", thread)
        session = "slack:T0SHOP:C1:7.2"
        await escalated(app, session)
        _, form = await decision_form(http, url, session, "Robin")
        async with http.post(url + "/admin/handoffs/decide?ws=T0SHOP", data=form | {"verdict": "deny"}) as r:
            assert r.status == 200
        assert list(thread.told.values()) == [
            "Our team could not approve your request: it is outside what we can do in this case."
        ]
        assert await app.store.fetch("SELECT id FROM refunds") == []  # type: ignore[attr-defined]
        async with http.get(url + f"/admin/conversations/{session}?ws=T0SHOP") as r:
            assert f"Robin (operator page): deny issue_refund ({form['escalation_id']})" in await r.text()


async def test_a_hand_back_from_the_page_is_told_in_the_thread(db_url: str) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    thread = Thread()
    async with served(db_url) as (app, url), aiohttp.ClientSession(headers=bearer) as http:
        app.threads.add("slack:", thread)
        session = "slack:T0SHOP:C1:7.3"
        await escalated(app, session)
        async with http.get(url + "/admin/handoffs?ws=T0SHOP") as r:
            form = {"csrf": csrf_of(await r.text()), "session_id": session}
        async with http.post(url + "/admin/handoffs/release?ws=T0SHOP", data=form) as r:
            assert r.status == 200
        assert list(thread.told.values()) == [app.router.desk.messages.handoff_released]
