"""Customer preferences across sessions: read before a turn acts, written after it commits.

`PreferenceRecorder` is the router's hook. Before acting it reads the stored preferences and
folds in what this message says ("not <brand>", "I prefer wireless", "keep it short"), so the
agents see them at once; after the commit it writes this turn's update, which is usually empty
(a no-op for the store). Guests without a customer id are remembered per session only.
"""

from __future__ import annotations

import logging
import re

from agent.config.schema import PreferenceWords
from agent.conversation.session import SessionState
from agent.domain.records import Preferences
from agent.domain.types import Classification
from agent.errors import AgentbotError
from agent.planners.budget_words import parse_budget
from agent.storage import PreferenceMemory
from agent.text import phrase_finder

log = logging.getLogger("agentbot.preferences")

_NEVER = re.compile(r"(?!)")  # a pattern the config leaves out matches nothing


def _pattern(text: str | None) -> re.Pattern[str]:
    return re.compile(text, re.I) if text else _NEVER


_EMPTY = Preferences()


def is_empty(p: Preferences) -> bool:
    return p == _EMPTY


def merge(stored: Preferences, update: Preferences) -> Preferences:
    """The stored preferences with the update applied; a newer like or dislike of a brand wins."""
    liked = [b for b in stored.preferred_brands if b.lower() not in {d.lower() for d in update.disliked_brands}]
    disliked = [b for b in stored.disliked_brands if b.lower() not in {d.lower() for d in update.preferred_brands}]
    return Preferences(
        budget_range=update.budget_range or stored.budget_range,
        preferred_brands=_union(liked, update.preferred_brands),
        disliked_brands=_union(disliked, update.disliked_brands),
        preferred_features=_union(stored.preferred_features, update.preferred_features),
        communication_style=update.communication_style or stored.communication_style,
    )


def _union(a: list[str], b: list[str]) -> list[str]:
    seen = {x.lower() for x in a}
    return a + [x for x in b if x.lower() not in seen and not seen.add(x.lower())]  # type: ignore[func-returns-value]


class PreferenceExtractor:
    """Preferences stated in one message, by rules over the store's brand and feature lists.

    Args:
        brands: brand names the store knows (drawn from the inventory).
        features: feature words customers ask for (the `feature` slot's values).
        said: how people say they like or dislike something, and how they want answers
            (config/intents.yaml vocabulary `preferences`).
        thousands: the words that make a budget's number thousands (vocabulary `thousands`).
    """

    def __init__(self, brands: list[str], features: list[str], said: PreferenceWords, thousands: list[str]):
        self.dislike, self.dislike_after = _pattern(said.dislike), _pattern(said.dislike_after)
        self.like, self.must = _pattern(said.like), _pattern(said.must)
        self.brief, self.detailed = _pattern(said.brief), _pattern(said.detailed)
        self.thousands = thousands
        self.brands = {b.lower(): b for b in brands if b}
        self.features = [f for f in features if f]
        self._brand_rx = phrase_finder(self.brands)
        self._feature_rx = phrase_finder(self.features)

    def extract(self, text: str, budget: object = None) -> Preferences:
        update = Preferences()
        if self._brand_rx:
            for m in self._brand_rx.finditer(text):
                before = text[max(0, m.start() - 40) : m.start()]
                brand = self.brands[m.group(1).lower()]
                after = text[m.end() : m.end() + 25]
                if self.dislike.search(before) or self.dislike_after.match(after):
                    update.disliked_brands.append(brand)
                elif self.like.search(before):
                    update.preferred_brands.append(brand)
        if self._feature_rx:
            for m in self._feature_rx.finditer(text):
                if self.like.search(text[max(0, m.start() - 40) : m.start()]) or self.must.search(text[: m.start()]):
                    update.preferred_features.append(m.group(1).lower())
        amount = parse_budget(budget, self.thousands) if budget not in (None, "") else None
        if amount is not None:
            update.budget_range = (0.0, amount)
        if self.brief.search(text):
            update.communication_style = "brief"
        elif self.detailed.search(text):
            update.communication_style = "detailed"
        return update


class TurnPreferences:
    """One turn's preferences: the stored ones (read once, on first use) with this message's update.

    Args:
        memory: where they are stored, or None when nothing can be stored yet (a new guest).
        owner: whose they are (`PreferenceRecorder.key`).
        update: what this message says.
    """

    def __init__(self, memory: PreferenceMemory | None, owner: str, update: Preferences):
        self.memory, self.owner, self.update = memory, owner, update
        self._merged: Preferences | None = None

    async def get(self) -> Preferences:
        if self._merged is None:
            stored = Preferences()
            if self.memory is not None:
                try:
                    stored = await self.memory.read(self.owner)
                except AgentbotError as e:
                    # Preferences personalize; losing them for a turn must not lose the turn.
                    log.warning("preferences unavailable: %s", e)
            self._merged = merge(stored, self.update)
        return self._merged


class PreferenceRecorder:
    """
    Args:
        memory: where preferences live between sessions (SQL, Zep).
        extractor: finds preferences stated in a message.
    """

    def __init__(self, memory: PreferenceMemory, extractor: PreferenceExtractor):
        self.memory = memory
        self.extractor = extractor

    @staticmethod
    def key(state: SessionState, speaker: str) -> str:
        """Whose preferences: the speaker's customer, or this guest in this conversation only."""
        return state.customer_id or f"session:{state.session_id}:{speaker}"

    async def before(
        self, state: SessionState, speaker: str, text: str, cls: Classification
    ) -> tuple[TurnPreferences, Preferences]:
        """(what the agents see this turn, the update to write after the commit). A budget the
        understanding read from the message is a preference too. The stored preferences are read
        when an agent first asks for them, so a turn whose agents never read them skips the read."""
        update = self.extractor.extract(text, cls.params.get("budget"))
        # A guest's preferences live with the session, so a session's first turn has none stored.
        new_guest = state.version == 0 and not state.customer_id
        return TurnPreferences(None if new_guest else self.memory, self.key(state, speaker), update), update

    async def after(self, owner: str, update: Preferences) -> None:
        """Write `update` for `owner` (`key` of the turn's state, taken before the turn ended)."""
        # Written every turn as the spec asks; the memory treats an empty update as a no-op.
        try:
            await self.memory.write(owner, update)
        except AgentbotError as e:
            log.warning("preferences not saved: %s", e)

    async def aclose(self) -> None:
        await self.memory.aclose()
