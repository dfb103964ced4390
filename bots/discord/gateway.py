"""What the bot takes from Discord's gateway before discord.py does: each event is parsed on its own,
so one the library cannot read is skipped (logged, counted) and the connection goes on; and an
interaction's top-level `channel_id`, which discord.py drops when the optional `channel` object is
absent.

discord.py runs every dispatch event through `ConnectionState.parsers` inside the gateway's read
loop (`DiscordWebSocket.received_message`); an exception there ends the connection and, unhandled,
the process. The parsers are wrapped in place, once per client, so every shard's socket uses them.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, Protocol

log = logging.getLogger("agentbot.discord.gateway")

_EVENT_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,63}")


class SkippedEvents(Protocol):
    """Where skipped gateway events are counted (`/metrics`)."""

    def gateway_event_skipped(self, channel: str, event: str) -> None: ...


class InteractionChannels:
    """The channel each recent interaction came from, read from the payload's top-level `channel_id`.

    discord.py 2.7 takes `Interaction.channel_id` from the `channel` object, which Discord documents
    as optional; the top-level id is there either way.
    """

    def __init__(self, size: int = 10_000):
        self.size = size
        self._by_id: OrderedDict[int, int] = OrderedDict()

    def note(self, payload: Mapping[str, Any]) -> None:
        iid, cid = str(payload.get("id") or ""), str(payload.get("channel_id") or "")
        if iid.isdigit() and cid.isdigit():
            self._by_id[int(iid)] = int(cid)
            if len(self._by_id) > self.size:
                self._by_id.popitem(last=False)

    def get(self, interaction_id: int) -> int | None:
        return self._by_id.get(interaction_id)


class EventGuard:
    """Wraps discord.py's gateway parsers so one unreadable event is one skipped event.

    Args:
        channels: told of every INTERACTION_CREATE payload before the library parses it.
        metrics: counts each skipped event by type (None: not counted).
    """

    def __init__(self, channels: InteractionChannels, metrics: SkippedEvents | None = None):
        self.channels = channels
        self.metrics = metrics
        self.skipped: dict[str, int] = {}  # event type -> how many were skipped in this process

    def install(self, parsers: MutableMapping[str, Callable[[Any], None]]) -> None:
        for event, parse in list(parsers.items()):
            parsers[event] = self._guarded(event, parse)

    def _guarded(self, event: str, parse: Callable[[Any], None]) -> Callable[[Any], None]:
        def parse_or_skip(data: Any) -> None:
            try:
                if event == "INTERACTION_CREATE" and isinstance(data, Mapping):
                    self.channels.note(data)
                parse(data)
            except Exception as e:  # the library's parser failed on this one payload
                self._skip(event, e)

        return parse_or_skip

    def _skip(self, event: str, error: Exception) -> None:
        name = event if _EVENT_NAME.fullmatch(event) else "other"
        self.skipped[name] = self.skipped.get(name, 0) + 1
        if self.metrics is not None:
            self.metrics.gateway_event_skipped("discord", name)
        # The payload may carry what people wrote: the type and the error's class say enough.
        if self.skipped[name] == 1:
            log.warning(
                "skipped a %s gateway event discord.py could not read (%s); the bot goes on, "
                "and later ones of this type are only counted (agentbot_gateway_events_skipped_total)",
                name,
                type(error).__name__,
            )
        else:
            log.debug("skipped another %s gateway event (%s)", name, type(error).__name__, exc_info=error)
