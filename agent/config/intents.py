"""IntentsRegistry: which intents a conversation may use, by channel, rollout and tier."""

from __future__ import annotations

import hashlib

from agent.config.schema import BotConfig, IntentSpec
from agent.conversation.session import SessionState
from agent.domain.types import Intent, IntentContext


def rollout_bucket(intent_id: str, key: str) -> int:
    """A stable bucket 0-99 for this intent and customer (or session); same input, same bucket."""
    digest = hashlib.sha256(f"{intent_id}:{key}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 100


class IntentsRegistry:
    def __init__(self, config: BotConfig):
        agents = config.agents.agents
        self.specs: dict[str, IntentSpec] = {s.id: s for s in config.intents.intents}
        self.intents: dict[str, Intent] = {
            s.id: Intent(
                id=s.id,
                agent=s.agent,
                description=s.description,
                required_params=s.required_params,
                optional_params=s.optional_params,
                tool=s.tool,
                priority=s.priority if s.priority is not None else agents[s.agent].priority,
                constraints=s.constraints,
                retry_slot_on=s.retry_slot_on,
                kind=s.kind,
                stays_open=s.stays_open,
                confirms=bool(s.templates.confirm),
                handoff=s.handoff,
                handling=s.handling,
                uses=s.uses,
                offers=s.offers,
                tool_args=s.tool_args,
            )
            for s in config.intents.intents
        }
        self.tiers = config.intents.tiers
        self.vocabulary = config.intents.vocabulary
        self.slots = config.intents.slots
        self.redacted_params = frozenset(config.intents.redaction.params)

    def get(self, intent_id: str) -> Intent | None:
        return self.intents.get(intent_id)

    def _tier_ok(self, min_tier: str | None, tier: str | None) -> bool:
        if not min_tier:
            return True
        if tier not in self.tiers or min_tier not in self.tiers:
            return False
        return self.tiers.index(tier) >= self.tiers.index(min_tier)

    def get_eligible(self, ctx: IntentContext) -> list[Intent]:
        key = ctx.customer_id or ctx.session_id
        eligible = []
        for intent in self.intents.values():
            c = intent.constraints
            if c.channels and ctx.channel not in c.channels:
                continue
            if c.rollout < 100 and rollout_bucket(intent.id, key) >= c.rollout:
                continue
            if not self._tier_ok(c.min_tier, ctx.customer_tier):
                continue
            eligible.append(intent)
        return eligible

    def for_session(self, channel: str, state: SessionState, customer: dict | None) -> list[Intent]:
        """The intents this conversation may use now."""
        tier = (customer or {}).get("tier")
        return self.get_eligible(
            IntentContext(
                channel=channel, customer_id=state.customer_id, customer_tier=tier, session_id=state.session_id
            )
        )

    def redact(self, params: dict) -> dict:
        return {k: ("***" if k in self.redacted_params else v) for k, v in params.items()}
