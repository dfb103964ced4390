"""`agentbot sessions` and `agentbot trace`: what the bot did, read back from the database.

`sessions` lists recent sessions; `trace SESSION` shows each turn's stages with timings, the
decisions (intent, goal, plan), tools, LLM usage and cost, and the trace id that names its trace
file. Both print a readable table, or JSON with `--json`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel, Field
from sqlalchemy.engine import make_url

from adapters.storage.sql import SqlStore
from agent.domain.records import TelemetryEvent
from agent.errors import StorageError
from bots.settings import DeploySettings, run_settings
from bots.wiring import resolve_dir

SESSIONS = """
SELECT s.id, s.version, s.customer_id, s.channel_type, s.created_at, s.updated_at,
       (SELECT COUNT(DISTINCT t.interaction_id) FROM telemetry_turns t WHERE t.session_id = s.id) AS turns,
       (SELECT m.text FROM messages m WHERE m.session_id = s.id AND m.role = 'user'
         ORDER BY m.id DESC LIMIT 1) AS last_user
FROM sessions s ORDER BY s.updated_at DESC LIMIT :limit
"""
MESSAGES = "SELECT interaction_id, role, kind, text FROM messages WHERE session_id = :sid ORDER BY id"


class StageView(BaseModel):
    stage: str
    ms: float
    level: str = "info"
    span_id: str | None = None


class ToolView(BaseModel):
    tool: str
    ok: bool
    ms: float = 0.0
    error_code: str | None = None


class TracedTurn(BaseModel):
    interaction_id: str
    trace_id: str | None = None
    started_at: datetime | None = None
    total_ms: float = 0.0
    user: str | None = None
    replies: list[str] = Field(default_factory=list)
    intent: str | None = None
    confidence: float | None = None
    goal: str | None = None
    plan: str | None = None
    policy: list[str] = Field(default_factory=list)
    tools: list[ToolView] = Field(default_factory=list)
    stages: list[StageView] = Field(default_factory=list)
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0


def add_observe_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    s = sub.add_parser("sessions", help="recent sessions: turns, last message, last activity")
    common(s)
    s.add_argument("--limit", type=int, default=20, help="how many sessions, the most recent first (default: 20)")
    s.add_argument("--json", action="store_true", help="print the sessions as JSON")
    t = sub.add_parser("trace", help="one session's turns: stages, timings, tools, decisions and cost")
    common(t)
    t.add_argument("session", help="session key, as `agentbot sessions` lists it")
    t.add_argument("--turn", help="only this interaction id")
    t.add_argument("--json", action="store_true", help="print the turns as JSON")


def _turn_views(events: list[TelemetryEvent], messages: list[Any]) -> list[TracedTurn]:
    turns: dict[str, TracedTurn] = {}
    for e in events:
        view = turns.setdefault(e.interaction_id, TracedTurn(interaction_id=e.interaction_id, started_at=e.timestamp))
        payload = e.payload
        view.trace_id = view.trace_id or e.trace_id
        view.total_ms = round(view.total_ms + e.duration_ms, 3)
        view.stages.append(StageView(stage=e.stage, ms=e.duration_ms, level=e.level, span_id=e.span_id))
        if e.stage == "intent_classified":
            view.intent, view.confidence = payload.get("intent_id"), payload.get("confidence")
        elif e.stage == "goal_updated":
            view.goal = f"{payload.get('action')} {payload.get('goal_type')}"
        elif e.stage == "plan_type":
            view.plan = payload.get("type")
        elif e.stage == "policy_check":
            view.policy.append(f"{payload.get('tool')}: {'allowed' if payload.get('allowed') else 'denied'}")
        elif e.stage == "tool_execute":
            view.tools.append(
                ToolView(
                    tool=payload.get("tool", "?"),
                    ok=bool(payload.get("ok")),
                    ms=payload.get("time_ms", 0.0),
                    error_code=payload.get("error_code"),
                )
            )
        if isinstance(llm := payload.get("llm"), dict):
            view.llm_calls += int(llm.get("calls", 0))
            view.tokens_in += int(llm.get("tokens_in", 0))
            view.tokens_out += int(llm.get("tokens_out", 0))
            view.cost = round(view.cost + float(llm.get("cost", 0.0)), 8)
    for m in messages:
        turn = turns.get(m.interaction_id)
        if turn is None:
            continue
        if m.role == "user":
            turn.user = m.text
        elif m.role == "agent":
            turn.replies.append(f"[{m.kind}] {m.text}")
    return list(turns.values())


def print_trace(session: str, views: list[TracedTurn], out: TextIO) -> None:
    cost = sum(v.cost for v in views)
    print(
        f"session {session}: {len(views)} turn(s), {sum(v.llm_calls for v in views)} LLM call(s), cost ${cost:.6f}",
        file=out,
    )
    for n, v in enumerate(views, start=1):
        print(
            f"\nturn {n}  {v.interaction_id}  {v.started_at:%Y-%m-%d %H:%M:%S}  {v.total_ms:.1f} ms  "
            f"trace {v.trace_id or '-'}"
            if v.started_at
            else f"\nturn {n}  {v.interaction_id}",
            file=out,
        )
        if v.user is not None:
            print(f"  user: {v.user}", file=out)
        conf = f" ({v.confidence})" if v.confidence is not None else ""
        print(f"  decisions: intent={v.intent}{conf}  goal={v.goal or '-'}  plan={v.plan or '-'}", file=out)
        if v.tools:
            tools = "; ".join(
                f"{t.tool} {'ok' if t.ok else 'FAILED ' + str(t.error_code)} {t.ms:.1f} ms" for t in v.tools
            )
            print(f"  tools: {tools}", file=out)
        print(f"  llm: {v.llm_calls} call(s), {v.tokens_in}/{v.tokens_out} tokens, ${v.cost:.6f}", file=out)
        print(f"  {'stage':<22}{'ms':>10}  span", file=out)
        for st in v.stages:
            flag = "" if st.level == "info" else f"  [{st.level}]"
            print(f"  {st.stage:<22}{st.ms:>10.3f}  {st.span_id or '-'}{flag}", file=out)
        for reply in v.replies:
            print("  bot " + reply.replace("\n", "\n      "), file=out)


async def _sessions(store: SqlStore, args: argparse.Namespace, out: TextIO) -> int:
    rows = await store.fetch(SESSIONS, limit=args.limit)
    items = [
        {
            "session": r.id,
            "turns": r.turns,
            "version": r.version,
            "customer": r.customer_id,
            "channel": r.channel_type,
            "updated_at": str(r.updated_at),
            "last_message": r.last_user,
        }
        for r in rows
    ]
    if args.json:
        print(json.dumps(items, indent=2), file=out)
        return 0
    # A session key is what `agentbot trace` takes, so it is never cut; the last message fills what is left of 100.
    key = max([len("session"), *(len(i["session"]) for i in items)]) + 1
    room = max(20, 100 - key - 6 - 2 - 8 - 21)
    print(f"{'session':<{key}}{'turns':>6}  {'channel':<8}{'updated':<21}last message", file=out)
    for i in items:
        last = i["last_message"] or ""
        last = last if len(last) <= room else last[: room - 3] + "..."
        print(
            f"{i['session']:<{key}}{i['turns']:>6}  {i['channel'] or '-':<8}{i['updated_at'][:19]:<21}{last}",
            file=out,
        )
    return 0


async def _trace(store: SqlStore, args: argparse.Namespace, out: TextIO) -> int:
    events = await store.telemetry(args.session)
    if args.turn:
        events = [e for e in events if e.interaction_id == args.turn]
    if not events:
        print(f"agentbot: no turns recorded for session {args.session!r}", file=sys.stderr)
        return 1
    views = _turn_views(events, list(await store.fetch(MESSAGES, sid=args.session)))
    if args.json:
        print(
            json.dumps({"session": args.session, "turns": [v.model_dump(mode="json") for v in views]}, indent=2),
            file=out,
        )
    else:
        print_trace(args.session, views, out)
    return 0


def database_url(args: argparse.Namespace) -> str:
    """The database a command on this project reads: --db-url, else the environment's, else settings'."""
    deploy = DeploySettings.from_env()
    settings = run_settings(resolve_dir(args.config_dir, "config", deploy), deploy, db_url=args.db_url)
    return settings.database_url


def existing_database(url: str) -> str:
    """A command that only reads opens a database that is there: a SQLite file that is not is an
    error (exit 4), never a new empty database (and folders) made where the person mistyped."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:":
        path = Path(parsed.database)
        if not path.is_file():
            raise StorageError(
                f"no database at {path}: this command only reads one; give --db-url (or AGENTBOT_DB_URL) "
                "of the bot's database, or run the bot first"
            )
    return url


def run_observe(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    deploy = DeploySettings.from_env()
    settings = run_settings(resolve_dir(args.config_dir, "config", deploy), deploy, db_url=args.db_url)
    url = existing_database(settings.database_url)

    async def main() -> int:
        store = SqlStore(url, busy_timeout_ms=settings.db_busy_timeout_ms)
        try:
            return await (_sessions if args.command == "sessions" else _trace)(store, args, out)
        finally:
            await store.aclose()

    return asyncio.run(main())
