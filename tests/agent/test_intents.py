"""Eligibility by channel, rollout bucket and tier; redaction."""

from __future__ import annotations

from agent.config.files import load_config
from agent.config.intents import IntentsRegistry, rollout_bucket
from agent.domain.types import Constraints, IntentContext
from tests.helpers import REPO


def registry_with(**constraints: object) -> IntentsRegistry:
    reg = IntentsRegistry(load_config(REPO / "config"))
    reg.intents["create_ticket"] = reg.intents["create_ticket"].model_copy(
        update={"constraints": Constraints.model_validate(constraints)}
    )
    return reg


def eligible(reg: IntentsRegistry, **ctx: object) -> set[str]:
    return {i.id for i in reg.get_eligible(IntentContext.model_validate({"channel": "console", **ctx}))}


def test_channel_filter() -> None:
    reg = registry_with(channels=["slack"])
    assert "create_ticket" not in eligible(reg)
    assert "create_ticket" in eligible(reg, channel="slack")


def test_tier_filter() -> None:
    reg = registry_with(min_tier="gold")
    assert "create_ticket" not in eligible(reg, customer_tier="silver")
    assert "create_ticket" in eligible(reg, customer_tier="gold")
    assert "create_ticket" in eligible(reg, customer_tier="platinum")
    assert "create_ticket" not in eligible(reg)  # a guest has no tier


def test_rollout_is_stable_per_customer_and_roughly_proportional() -> None:
    reg = registry_with(rollout=30)
    inside = [f"C-{n}" for n in range(1000) if "create_ticket" in eligible(reg, customer_id=f"C-{n}")]
    assert 250 < len(inside) < 350
    assert all("create_ticket" in eligible(reg, customer_id=c) for c in inside[:20])
    assert rollout_bucket("x", "C-1") == rollout_bucket("x", "C-1")


def test_rollout_falls_back_to_the_session_for_guests() -> None:
    reg = registry_with(rollout=50)
    results = {s: "create_ticket" in eligible(reg, session_id=s) for s in ("a", "b", "c", "d", "e", "f")}
    assert set(results.values()) == {True, False}


def test_redaction_masks_configured_params() -> None:
    reg = IntentsRegistry(load_config(REPO / "config"))
    assert reg.redact({"email": "a@b.c", "order_id": "O-1"}) == {"email": "***", "order_id": "O-1"}
