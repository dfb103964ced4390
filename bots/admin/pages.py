"""The operator page: `/admin` and its pages, server-rendered from Jinja2 templates with plain forms.

Mounted on the bot's own HTTP server (`agentbot slack`'s port, `agentbot discord`'s metrics port)
or served alone by `agentbot admin`. With no `AGENTBOT_ADMIN_TOKEN` no route is added, so every
page answers 404. Texts people wrote are shown through the process's redactor: secrets, e-mail
addresses and phone numbers masked. Each page shows one workspace's conversations, chosen from the
workspaces the page lists.
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from aiohttp import web
from jinja2 import Environment, PackageLoader, select_autoescape

from adapters.storage.backlog import read_backlog
from adapters.storage.operator import OperatorViews
from adapters.storage.review import SqlReview
from agent.app import App
from agent.domain.types import utcnow
from agent.errors import AgentbotError
from agent.redaction import Redactor
from agent.review.items import OUT_OF_SCOPE_LABEL, ReviewItem
from bots.admin.auth import COOKIE, CSRF_FIELD, CSRF_HEADER, LOGIN_COOKIE, SESSION_HOURS, AdminAuth, Principal
from bots.admin.settings import AdminSettings

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# Every /admin response: nothing runs but the page's own files (no inline script or style, nothing
# from elsewhere), forms post only here, no other site frames it, and no address leaves in a Referer.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}
STYLE = "static/admin.css"  # in this package; served at /admin/static/admin.css
NO_WORKSPACE = "-"  # the workspace filter's value for conversations without one (the console)


class OperatorPages:
    """The handlers, over one app.

    Args:
        app: the running app (its database, settings, router and bank reload).
        settings: the token and the project folders.
        redactor: masks what people wrote before it is shown.
    """

    def __init__(self, app: App, settings: AdminSettings, redactor: Redactor):
        if app.storage.database is None:
            raise AgentbotError("the operator page reads the bot's database, and this store has none")
        self.app = app
        self.settings = settings
        self.auth = AdminAuth(settings.token.get_secret_value())
        self.database = app.storage.database
        self.views = OperatorViews(app.storage.database)
        self.review = SqlReview(app.storage.database)
        self.redactor = redactor
        env = Environment(loader=PackageLoader("bots.admin", "templates"), autoescape=select_autoescape(["html"]))
        env.filters["mask"] = lambda s: redactor.text(str(s)) if s is not None else ""
        env.filters["pct"] = lambda x: "-" if x is None else f"{x:.0%}"
        self.templates = env

    def routes(self, web_app: web.Application) -> None:
        web_app.on_response_prepare.append(_secured)
        r = web_app.router
        r.add_get("/admin/static/admin.css", self.style)
        r.add_get("/admin/login", self.login_form)
        r.add_post("/admin/login", self.login)
        r.add_post("/admin/logout", self.guarded(self.logout))
        r.add_get("/admin", self.guarded(self.overview))
        r.add_get("/admin/conversations", self.guarded(self.conversations))
        r.add_get("/admin/conversations/{session_id}", self.guarded(self.transcript))
        r.add_get("/admin/handoffs", self.guarded(self.handoffs))
        r.add_post("/admin/handoffs/release", self.guarded(self.release))
        r.add_post("/admin/handoffs/decide", self.guarded(self.decide))
        r.add_get("/admin/review", self.guarded(self.inbox))
        r.add_post("/admin/review/apply", self.guarded(self.apply))
        r.add_post("/admin/review/{item_id}/label", self.guarded(self.label))

    # --- access

    def principal(self, request: web.Request) -> Principal | None:
        return self.auth.bearer(request.headers.get("Authorization")) or self.auth.session(request.cookies.get(COOKIE))

    def guarded(self, handler: Callable[[web.Request, Principal], Awaitable[web.StreamResponse]]) -> Handler:
        """Signed in, or the login page with 401; a POST without its CSRF token, 403."""

        @functools.wraps(handler)
        async def run(request: web.Request) -> web.StreamResponse:
            who = self.principal(request)
            if who is None:
                return self._login_page(request, status=401)
            if request.method == "POST":
                form = await request.post()
                given = request.headers.get(CSRF_HEADER) or str(form.get(CSRF_FIELD) or "")
                if not given or given != who.csrf:
                    return web.Response(status=403, text="403: this form is missing its CSRF token; reload the page")
            return await handler(request, who)

        return run

    def _login_page(self, request: web.Request, status: int = 200, error: str = "") -> web.Response:
        nonce = self.auth.login_nonce()
        body = self.render("login.html", csrf=self.auth.login_csrf(nonce), error=error, next=request.path_qs)
        response = web.Response(text=body, content_type="text/html", status=status)
        response.set_cookie(LOGIN_COOKIE, nonce, httponly=True, samesite="Strict", secure=request.secure, path="/admin")
        return response

    async def style(self, request: web.Request) -> web.StreamResponse:
        css = (resources.files("bots.admin") / STYLE).read_text(encoding="utf-8")
        return web.Response(text=css, content_type="text/css", headers={"Cache-Control": "max-age=3600"})

    async def login_form(self, request: web.Request) -> web.StreamResponse:
        return self._login_page(request)

    async def login(self, request: web.Request) -> web.StreamResponse:
        form = await request.post()
        if not self.auth.login_csrf_ok(request.cookies.get(LOGIN_COOKIE), str(form.get(CSRF_FIELD) or "")):
            return web.Response(status=403, text="403: the sign-in form is missing its CSRF token; reload the page")
        if not self.auth.token_matches(str(form.get("token") or "")):
            return self._login_page(request, status=401, error="That token does not open this page.")
        target = str(form.get("next") or "/admin")
        response = _see_other(target if target.startswith("/admin") and "/login" not in target else "/admin")
        response.set_cookie(
            COOKIE,
            self.auth.new_session(),
            httponly=True,
            samesite="Strict",
            secure=request.secure,
            path="/admin",
            max_age=SESSION_HOURS * 3600,
        )
        response.del_cookie(LOGIN_COOKIE, path="/admin")
        return response

    async def logout(self, request: web.Request, who: Principal) -> web.StreamResponse:
        response = _see_other("/admin/login")
        response.del_cookie(COOKIE, path="/admin")
        return response

    # --- rendering

    def render(self, name: str, **values: Any) -> str:
        return self.templates.get_template(name).render(**values)

    async def page(self, request: web.Request, who: Principal, name: str, **values: Any) -> web.Response:
        known = await self.workspaces()
        workspace = self.workspace(request, known)
        body = self.render(
            name,
            csrf=who.csrf,
            workspaces=known,
            workspace=workspace,
            ws=_ws_param(workspace),
            path=request.path,
            **values,
        )
        return web.Response(text=body, content_type="text/html")

    async def workspaces(self) -> list[str]:
        found = set(await self.views.workspaces())
        found |= {i.workspace for i in await self.review.items(status=None, limit=1000)}
        return sorted(found)

    def workspace(self, request: web.Request, known: list[str]) -> str:
        """The workspace the page shows: the one asked for, else the first there is."""
        asked = request.query.get("ws")
        if asked is not None:
            return "" if asked == NO_WORKSPACE else asked
        return known[0] if known else ""

    # --- pages

    async def overview(self, request: web.Request, who: Principal) -> web.StreamResponse:
        workspace = self.workspace(request, await self.workspaces())
        days = await self.views.days(workspace, utcnow().date())
        today = days[-1]
        conversations = await self.views.conversations(workspace)
        open_handoffs = sum(1 for c in conversations if c.handoff in ("requested", "claimed"))
        waiting = sum((await self.review.counts(workspace)).values())
        backlog = next((w for w in (await read_backlog(self.database)).waiting if w.workspace == workspace), None)
        return await self.page(
            request,
            who,
            "overview.html",
            today=today,
            days=days,
            open_handoffs=open_handoffs,
            waiting=waiting,
            backlog=backlog,
        )

    async def conversations(self, request: web.Request, who: Principal) -> web.StreamResponse:
        workspace = self.workspace(request, await self.workspaces())
        query = request.query.get("q", "")
        found = await self.views.conversations(workspace, query)
        return await self.page(request, who, "conversations.html", conversations=found, q=query)

    async def transcript(self, request: web.Request, who: Principal) -> web.StreamResponse:
        workspace = self.workspace(request, await self.workspaces())
        conversation, turns = await self.views.conversation(request.match_info["session_id"])
        if conversation is None or conversation.workspace != workspace:
            raise web.HTTPNotFound(text="no such conversation in this workspace")
        items = await self.review.items(workspace=workspace, session_id=conversation.session_id)
        return await self.page(
            request,
            who,
            "conversation.html",
            conversation=conversation,
            turns=turns,
            items=self._offered(items),
            intents=sorted(self.app.intents),
        )

    async def handoffs(self, request: web.Request, who: Principal) -> web.StreamResponse:
        workspace = self.workspace(request, await self.workspaces())
        found = [c for c in await self.views.conversations(workspace) if c.handoff in ("requested", "claimed")]
        return await self.page(request, who, "handoffs.html", conversations=found, done=request.query.get("done", ""))

    async def release(self, request: web.Request, who: Principal) -> web.StreamResponse:
        form = await request.post()
        session_id = str(form.get("session_id") or "")
        workspace = self.workspace(request, await self.workspaces())
        conversation, _ = await self.views.conversation(session_id)
        if conversation is None or conversation.workspace != workspace:
            raise web.HTTPNotFound(text="no such conversation in this workspace")
        who_by = _operator(form.get("by"))
        thread = await self.app.threads.reply_for(session_id, f"page:release:{uuid.uuid4().hex[:12]}")
        said = await self.app.router.control(session_id, "release", who_by, thread)
        raise web.HTTPSeeOther("/admin/handoffs?" + urlencode({"ws": _ws_param(workspace), "done": said}))

    async def decide(self, request: web.Request, who: Principal) -> web.StreamResponse:
        """Approve or deny the action an escalation holds; the customer's thread is told (when a
        channel of this process reaches it) and the decision is kept with who made it."""
        form = await request.post()
        session_id, held = str(form.get("session_id") or ""), str(form.get("escalation_id") or "")
        verdict = str(form.get("verdict") or "")
        workspace = self.workspace(request, await self.workspaces())
        conversation, _ = await self.views.conversation(session_id)
        if conversation is None or conversation.workspace != workspace:
            raise web.HTTPNotFound(text="no such conversation in this workspace")
        if verdict not in ("approve", "deny") or not held:
            raise web.HTTPBadRequest(text="say approve or deny, for the escalation shown")
        reason = str(form.get("reason") or "").strip()[:500]
        # The event key names the decision, so a second post of the same form shows nothing twice.
        thread = await self.app.threads.reply_for(session_id, f"decision:{held}")
        said = await self.app.router.decide(
            session_id,
            "approve" if verdict == "approve" else "deny",
            _operator(form.get("by")),
            escalation_id=held,
            reason=reason,
            reply=thread,
        )
        raise web.HTTPSeeOther("/admin/handoffs?" + urlencode({"ws": _ws_param(workspace), "done": said}))

    async def inbox(self, request: web.Request, who: Principal) -> web.StreamResponse:
        workspace = self.workspace(request, await self.workspaces())
        days = self.app.settings.review_retention_days
        if days:
            await self.review.purge(utcnow() - timedelta(days=days))
        items = self._offered(await self.review.items(workspace=workspace))
        groups: dict[str, list[ReviewItem]] = {}
        for item in items:
            groups.setdefault(item.reading.nearest or "", []).append(item)
        intents = sorted(self.app.intents)
        return await self.page(
            request, who, "review.html", groups=groups, intents=intents, applied=request.query.get("applied", "")
        )

    def _offered(self, items: list[ReviewItem]) -> list[ReviewItem]:
        from bots.learning import with_candidates

        return with_candidates(items, self.app.understanding.reader)

    async def label(self, request: web.Request, who: Principal) -> web.StreamResponse:
        from bots.learning import label

        form = await request.post()
        workspace = self.workspace(request, await self.workspaces())
        item = await self.review.get(request.match_info["item_id"])
        if item is None or item.workspace != workspace:
            raise web.HTTPNotFound(text="no such review item in this workspace")
        chosen = str(form.get("label") or "")
        if chosen == "skip":
            await self.review.settle(item.id, "skipped", None)
            raise web.HTTPSeeOther("/admin/review?" + urlencode({"ws": _ws_param(workspace)}))
        topic = str(form.get("topic") or "").strip()
        if chosen == OUT_OF_SCOPE_LABEL and topic:
            chosen = f"{OUT_OF_SCOPE_LABEL}:{topic}"
        corpora = [Path(c) for c in self.settings.corpora]
        try:
            outcome = await asyncio.to_thread(
                label,
                item,
                chosen,
                self.settings.config_dir,
                self.settings.data_dir,
                corpora,
            )
        except AgentbotError as e:
            return web.Response(status=400, text=f"400: {e}")
        await self.review.settle(item.id, "labelled", chosen)
        return await self.page(request, who, "labelled.html", item=item, outcome=outcome, chosen=chosen)

    async def apply(self, request: web.Request, who: Principal) -> web.StreamResponse:
        workspace = self.workspace(request, await self.workspaces())
        reload = self.app.reload
        if reload is None:
            return web.Response(status=409, text="409: this app cannot reload its banks")
        # This process now, the others on the project (a Slack worker beside `agentbot admin`) on the stamp.
        report = await reload.apply("the operator page")
        raise web.HTTPSeeOther("/admin/review?" + urlencode({"ws": _ws_param(workspace), "applied": report.summary()}))


async def _secured(request: web.Request, response: web.StreamResponse) -> None:
    """The page's security headers on every /admin response: pages, redirects, 401, 403 and 404."""
    if request.path == "/admin" or request.path.startswith("/admin/"):
        response.headers.update(SECURITY_HEADERS)


def _see_other(location: str) -> web.Response:
    """A redirect that carries cookies (a raised HTTPSeeOther cannot be given them)."""
    return web.Response(status=303, headers={"Location": location})


def _operator(name: object) -> str:
    """Who decided on the page: the name the operator gave (the page has one shared token), marked
    as the page's."""
    given = " ".join(str(name or "").split())[:80]
    return f"{given} (operator page)" if given else "the operator page"


def _ws_param(workspace: str) -> str:
    return workspace or NO_WORKSPACE


def add_admin_routes(web_app: web.Application, app: App, settings: AdminSettings, redactor: Redactor) -> bool:
    """Mount the operator page on a server; nothing is mounted (every page 404) without a token."""
    if not settings.enabled:
        return False
    OperatorPages(app, settings, redactor).routes(web_app)
    return True


@dataclass
class AdminMount:
    """The operator page of one app, for a server to mount beside its own routes."""

    app: App
    settings: AdminSettings

    def mount(self, web_app: web.Application) -> bool:
        return add_admin_routes(web_app, self.app, self.settings, self.app.router.redactor)
