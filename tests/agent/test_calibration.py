"""Calibration: the levels the bot reads with come from its banks alone."""

from __future__ import annotations

import pytest

from agent.config.files import load_config
from agent.understanding.banks import load_banks
from bots.cli.nlu import calibrated
from tests.helpers import REPO


@pytest.mark.parametrize("store", ["", "stores/outdoor"], ids=["shipped", "outdoor"])
def test_the_shipped_levels_are_the_ones_calibrate_writes(store: str) -> None:
    """`agentbot nlu calibrate` on a shipped store's banks changes nothing in its nlu.yaml: the
    levels the bot reads with came from its banks, not from tuning on a corpus, and a change to the
    banks they share (moves, CLINC150's train split) was followed by a recalibration."""
    config_dir, data_dir = REPO / "config" / store, REPO / "data" / store
    levels = calibrated(config_dir, data_dir)
    banks = load_banks(config_dir, load_config(config_dir).intents)
    assert (levels.threshold, levels.margin, levels.confident, levels.topic) == (
        banks.threshold,
        banks.margin,
        banks.confident,
        banks.topic,
    )
    assert levels.gates == banks.gates
    assert levels.moves == banks.moves_at
