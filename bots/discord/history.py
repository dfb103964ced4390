"""A Discord thread's earlier messages, for a conversation the bot joins mid-thread (cold start)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from agent.types import Message


async def earlier_messages(channel: Any, me: int, current: int | None, limit: int) -> list[Message]:
    """Up to `limit` messages before `current`, oldest first, each with who wrote it."""
    seen: list[Message] = []
    async for m in channel.history(limit=limit + 1):
        if m.id == current or not m.content:
            continue
        bot = m.author.id == me
        seen.append(
            Message(
                role="agent" if bot else "user",
                kind="answer" if bot else "user",
                text=re.sub(rf"<@!?{me}>", "", m.content).strip(),
                timestamp=m.created_at.astimezone(UTC) if m.created_at else datetime.now(UTC),
                # The thread is shared; its speakers are not.
                metadata={} if bot else {"discord_user": str(m.author.id)},
            )
        )
    return list(reversed(seen))[-limit:] if limit else []
