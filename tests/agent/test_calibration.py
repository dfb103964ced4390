"""Calibration: the levels the bot reads with come from its banks alone."""

from __future__ import annotations

import pytest

from agent.config.files import load_config
from agent.understanding import levels
from agent.understanding.banks import load_banks
from agent.understanding.reading import Reading
from bots.cli.nlu import calibrated
from tests.helpers import REPO, rules_classifier


@pytest.mark.parametrize("store", ["", "stores/outdoor"], ids=["shipped", "outdoor"])
def test_the_shipped_levels_are_the_ones_calibrate_writes(store: str) -> None:
    """`agentbot nlu calibrate` on a shipped store's banks changes nothing in its nlu.yaml: the
    levels the bot reads with came from its banks, not from tuning on a corpus, and a change to the
    banks they share (moves, CLINC150's train split) was followed by a recalibration."""
    config_dir, data_dir = REPO / "config" / store, REPO / "data" / store
    levels = calibrated(config_dir, data_dir)
    banks = load_banks(config_dir, load_config(config_dir).intents)
    assert (levels.threshold, levels.margin, levels.confident, levels.topic, levels.clarify) == (
        banks.threshold,
        banks.margin,
        banks.confident,
        banks.topic,
        banks.clarify,
    )
    assert levels.gates == banks.gates
    assert levels.moves == banks.moves_at


def test_a_reading_is_sure_at_its_intents_own_gate() -> None:
    """Sure (`levels.SURE` on the one scale) is where the bot acts on that intent without asking:
    a ticket read between its own gate and the level pooled over all guarded intents is sure (it
    also counts as a request of its own in a message that makes two); an intent with no gate of its
    own is sure from the pooled level."""
    rules = rules_classifier()
    banks = rules.banks
    gate = banks.gates["create_ticket"]
    assert gate < banks.confident, "the shipped banks no longer show the case; pick another gated intent"
    between = (gate + banks.confident) / 2

    def read(intent: str, confidence: float) -> Reading:
        return Reading(intent=intent, confidence=confidence, banks=banks)

    assert read("create_ticket", between).sure and levels.sure(read("create_ticket", between).level())
    assert not read("create_ticket", gate - 0.01).sure and not levels.sure(read("create_ticket", gate - 0.01).level())
    assert not read("order_status", between).sure and not levels.sure(read("order_status", between).level())
    assert read("order_status", banks.confident).sure and levels.sure(read("order_status", banks.confident).level())
