"""The troubleshooting thresholds in config are the ones their labelled cases calibrate to, on the
real knowledge base and the real embedded model; and the search returns only what fits."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.data.store_files import FileInventory, MarkdownKnowledgeBase
from adapters.nlu.wordllama import WordLlamaScorer
from agent.catalog import load_store_settings
from agent.config_files import load_config, load_yaml_model
from agent.tools.section_fit import KnowledgeSettings, calibrate
from tests.helpers import REPO

STORES = [("config", "data"), ("config/stores/outdoor", "data/stores/outdoor")]


@pytest.mark.parametrize(("config_dir", "data_dir"), STORES)
async def test_config_thresholds_are_the_calibrated_ones(config_dir: str, data_dir: str) -> None:
    config_path, data_path = REPO / config_dir, REPO / data_dir
    config, store = load_config(config_path), load_store_settings(config_path)
    settings = load_yaml_model(Path(config_path) / "knowledge.yaml", KnowledgeSettings)
    sections = await MarkdownKnowledgeBase(data_path / store.knowledge_base).sections()
    refs = {s.ref for s in sections}
    assert [c.section for c in settings.cases if c.section and c.section not in refs] == []
    categories = FileInventory(data_path, store.inventory).distinct("category")
    words = config.intents.slots["device"].values
    result = calibrate(sections, categories, words, WordLlamaScorer(128, 2), settings.cases)
    assert settings.thresholds == result.thresholds, f"recalibrated: {result.thresholds!r}"
    # Devices and store policies never mix; at most one labelled problem reads as another section.
    assert result.separations["device"].errors == 0
    assert result.separations["same_device"].errors == 0
    assert len(result.misses) + result.separations["symptom"].errors <= 2, result
