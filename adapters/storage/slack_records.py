"""Slack's records in the bot's own database: assistant thread contexts, installations, workspaces, OAuth states.

Plain rows and units of work on the session store's runner; the bolt-facing stores that speak
slack_sdk's models sit in `bots/slack/` and translate to and from these.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel
from sqlalchemy import Connection, delete, select, update

from adapters.storage.base import OnDatabase
from adapters.storage.schema import slack_assistant_threads, slack_installations, slack_oauth_states, slack_workspaces
from adapters.storage.writes import upsert
from agent.domain.types import utcnow


def team_key(team_id: str | None, enterprise_id: str | None = None, *, org_wide: bool = False) -> str:
    """A workspace's install is found by its team; an org-wide (Enterprise Grid) one by its org."""
    return f"{enterprise_id or '-'}:-" if org_wide else f"-:{team_id or '-'}"


def is_org_key(key: str) -> bool:
    return key.endswith(":-") and not key.startswith("-:")


class InstallationRow(BaseModel):
    team_key: str  # team_key(): "-:<team id>", or "<enterprise id>:-" for an org-wide install
    enterprise_id: str | None = None
    team_id: str | None = None
    team_name: str | None = None
    bot_user_id: str | None = None
    bot_token: str
    installation: dict[str, Any]  # slack_sdk's Installation.to_dict(), timestamps as epoch seconds
    installed_at: datetime

    @property
    def org_wide(self) -> bool:
        return is_org_key(self.team_key)


class WorkspaceRow(BaseModel):
    """One workspace's own settings under an install (its own, or its org's org-wide one)."""

    team_id: str
    enterprise_id: str | None = None
    admin_channel: str | None = None
    revoked_at: datetime | None = None  # an org-wide install lost access to this workspace


class SlackRecords(OnDatabase):
    """Slack's tables in the session store's database, on its runner."""

    # Assistant threads

    async def save_thread_context(self, channel_id: str, thread_ts: str, context: dict[str, Any]) -> None:
        row = {"channel_id": channel_id, "thread_ts": thread_ts, "context": json.dumps(context), "updated_at": utcnow()}

        def unit(conn: Connection) -> None:
            done = conn.execute(
                update(slack_assistant_threads)
                .where(slack_assistant_threads.c.channel_id == channel_id)
                .where(slack_assistant_threads.c.thread_ts == thread_ts)
                .values(context=row["context"], updated_at=row["updated_at"])
            )
            if done.rowcount == 0:
                conn.execute(slack_assistant_threads.insert().values(**row))

        await self._run(unit, what="save an assistant thread's context")

    async def thread_context(self, channel_id: str, thread_ts: str) -> dict[str, Any] | None:
        """The thread's context; None when the thread is not an assistant thread the bot was told of."""

        def unit(conn: Connection) -> dict[str, Any] | None:
            found = conn.execute(
                select(slack_assistant_threads.c.context).where(
                    slack_assistant_threads.c.channel_id == channel_id, slack_assistant_threads.c.thread_ts == thread_ts
                )
            ).scalar()
            return json.loads(found) if found is not None else None

        return await self._run(unit, what="read an assistant thread's context")

    # Installations

    async def save_installation(self, row: InstallationRow) -> None:
        """The workspace's newest install replaces the last one; its workspaces' settings stay."""
        values = row.model_dump()
        values["installation"] = json.dumps(row.installation)

        def unit(conn: Connection) -> None:
            upsert(conn, slack_installations, "team_key", values)

        await self._run(unit, what="save a Slack installation")

    async def installation(self, key: str) -> InstallationRow | None:
        def unit(conn: Connection) -> InstallationRow | None:
            r = conn.execute(select(slack_installations).where(slack_installations.c.team_key == key)).first()
            if r is None:
                return None
            return InstallationRow.model_validate({**r._asdict(), "installation": json.loads(r.installation)})

        return await self._run(unit, what="read a Slack installation")

    async def delete_installation(self, key: str) -> bool:
        """Forget an install and what its workspaces had of their own (every workspace of an org's)."""

        def unit(conn: Connection) -> bool:
            row = conn.execute(select(slack_installations).where(slack_installations.c.team_key == key)).first()
            if row is None:
                return False
            conn.execute(delete(slack_installations).where(slack_installations.c.team_key == key))
            ws = slack_workspaces.c
            if is_org_key(key):
                conn.execute(delete(slack_workspaces).where(ws.enterprise_id == row.enterprise_id))
            elif row.team_id:
                conn.execute(delete(slack_workspaces).where(ws.team_id == row.team_id))
            return True

        return await self._run(unit, what="delete a Slack installation")

    # Workspaces

    async def workspace(self, team_id: str) -> WorkspaceRow | None:
        def unit(conn: Connection) -> WorkspaceRow | None:
            r = conn.execute(select(slack_workspaces).where(slack_workspaces.c.team_id == team_id)).first()
            return WorkspaceRow.model_validate(r._asdict()) if r is not None else None

        return await self._run(unit, what="read a Slack workspace")

    async def set_admin_channel(self, team_id: str, enterprise_id: str | None, channel: str) -> None:
        values = {"team_id": team_id, "enterprise_id": enterprise_id, "admin_channel": channel, "updated_at": utcnow()}

        def unit(conn: Connection) -> None:
            upsert(conn, slack_workspaces, "team_id", values)

        await self._run(unit, what="set a workspace's admin channel")

    async def set_access(self, team_ids: list[str], enterprise_id: str, *, revoked: bool) -> None:
        """An org-wide install lost (or regained) access to some of its org's workspaces."""
        now = utcnow()

        def unit(conn: Connection) -> None:
            for team_id in team_ids:
                ws = slack_workspaces.c
                done = conn.execute(
                    update(slack_workspaces)
                    .where(ws.team_id == team_id)
                    .values(enterprise_id=enterprise_id, revoked_at=now if revoked else None, updated_at=now)
                )
                if done.rowcount == 0 and revoked:
                    conn.execute(
                        slack_workspaces.insert().values(
                            team_id=team_id, enterprise_id=enterprise_id, revoked_at=now, updated_at=now
                        )
                    )

        await self._run(unit, what="record a Slack org's access to its workspaces")

    # OAuth states

    async def issue_state(self, state: str, seconds: float) -> None:
        expires_at = utcnow() + timedelta(seconds=seconds)

        def unit(conn: Connection) -> None:
            conn.execute(slack_oauth_states.insert().values(state=state, expires_at=expires_at))

        await self._run(unit, what="issue an OAuth state")

    async def consume_state(self, state: str) -> bool:
        """True once for a state that was issued and has not expired."""

        def unit(conn: Connection) -> bool:
            expires = conn.execute(
                select(slack_oauth_states.c.expires_at).where(slack_oauth_states.c.state == state)
            ).scalar()
            conn.execute(delete(slack_oauth_states).where(slack_oauth_states.c.state == state))
            return expires is not None and expires > utcnow()

        return await self._run(unit, what="consume an OAuth state")
