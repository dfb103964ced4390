"""The troubleshooting thresholds in config are the ones their labelled cases calibrate to, on the
real knowledge base and the real embedded model; and the search returns only what fits."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.data.store_files import FileInventory, MarkdownKnowledgeBase
from adapters.nlu.wordllama import WordLlamaScorer
from agent.config.files import load_config, load_yaml_model
from agent.domain.catalog import load_store_settings
from agent.domain.contexts import ToolContext
from agent.tools.knowledge import KBSearchParams, knowledge_tools
from agent.tools.registry import Tool, ToolDeps
from agent.tools.section_fit import KnowledgeSettings, calibrate
from bots.app import build_app
from tests.helpers import REPO, say

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


def troubleshooting_search() -> Tool:
    """The shipped store's knowledge_base_search, on its real data and embedded model."""
    config = load_config(REPO / "config")
    store = load_store_settings(REPO / "config")
    settings = load_yaml_model(REPO / "config" / "knowledge.yaml", KnowledgeSettings)
    words = config.intents.slots["device"].values
    kb = MarkdownKnowledgeBase(REPO / "data" / store.knowledge_base)
    inventory = FileInventory(REPO / "data", store.inventory)
    deps = ToolDeps(
        knowledge=kb,
        inventory=inventory,
        meaning=WordLlamaScorer(128, 2),
        device_words=tuple(words),
        fit=settings.thresholds,
    )
    return knowledge_tools(deps)[0]


CTX = ToolContext(session_id="s", interaction_id="i", agent="support", intent_id="troubleshoot")


@pytest.mark.parametrize(
    ("params", "document", "heading"),
    [
        (
            {"symptom": "keeps cutting out", "model": "HyperX Cloud II"},
            "headset.md",
            "Headset sound cutting out or dropping",
        ),
        ({"symptom": "battery is draining way too fast", "device": "laptop"}, "power.md", "Battery drains fast"),
        (
            {"symptom": "freezes when chrome opens", "model": "Dell Inspiron 14"},
            "laptop-freezing.md",
            "Freezes when an app or the browser opens",
        ),
        (
            {"symptom": "wireless signal keeps dropping out", "device": "mouse"},
            "mouse.md",
            "Wireless mouse lagging or disconnecting",
        ),
    ],
)
async def test_only_the_fix_for_this_device_and_symptom_comes_back(params: dict, document: str, heading: str) -> None:
    tool = troubleshooting_search()
    out = await tool.handler(KBSearchParams(**params), CTX)
    hits = out.data["hits"]
    assert hits and hits[0]["heading"] == heading
    assert {h["ref"].split("#")[0] for h in hits} == {document}


@pytest.mark.parametrize(
    "params",
    [
        {"symptom": "image is grainy", "device": "webcam"},  # a device the knowledge base does not cover
        {"symptom": "the ear cushions are cracking", "model": "HyperX Cloud II"},  # a problem it does not cover
        {"symptom": "keeps cutting out", "model": "Logitech G502 HERO"},  # a mouse has no sound to cut out
    ],
)
async def test_no_fix_when_nothing_fits(params: dict) -> None:
    out = await troubleshooting_search().handler(KBSearchParams(**params), CTX)
    assert out.data["hits"] == []


async def test_a_policy_question_is_still_a_word_search() -> None:
    out = await troubleshooting_search().handler(KBSearchParams(query="how long does delivery take"), CTX)
    assert out.data["hits"][0]["ref"].startswith("delivery.md#")
    assert out.data["hits"][0]["about"] is None  # a store policy, about no kind of device
    fix = await troubleshooting_search().handler(KBSearchParams(query="laptop too hot"), CTX)
    assert fix.data["hits"][0]["about"] == "laptop"


async def test_a_search_among_the_policies_gets_no_device_fix() -> None:
    """Asked for policies only, the search leaves out the fixes a word search ranks higher."""
    question = "under which conditions do you hand money back to a buyer?"
    anything = await troubleshooting_search().handler(KBSearchParams(query=question), CTX)
    policies = await troubleshooting_search().handler(KBSearchParams(query=question, sections="policies"), CTX)
    assert anything.data["hits"][0]["about"] is not None  # a keyboard fix shares a word or two
    assert policies.data["hits"] and all(h["about"] is None for h in policies.data["hits"])
    assert policies.data["hits"][0]["ref"].startswith("returns.md#")


async def test_a_policy_question_the_policies_do_not_answer_gets_no_device_fix(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        r, delivered = await say(app.router, "is there a warranty on laptops?")
    # The word search's best section was how to cool a laptop: a fix is no policy.
    assert r.intent_id == "policy_question" and [t.tool for t in r.tool_results] == ["knowledge_base_search"]
    assert delivered[-1].text.startswith("I couldn't find that in our store policies.")
    assert "Source:" not in delivered[-1].text


@pytest.mark.parametrize(
    ("said", "summary", "filler"),
    [
        ("No. the freezing", '"the freezing"', "No. the freezing"),
        ("Nope, it still keeps disconnecting", '"it still keeps disconnecting"', "Nope"),
    ],
)
async def test_a_ticket_summary_is_the_problem_not_the_reply(said: str, summary: str, filler: str, db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        asked, _ = await say(app.router, "open a ticket")
        opened, _ = await say(app.router, said)
    assert asked.missing_param == "summary"
    assert [r.tool for r in opened.tool_results] == ["create_ticket"]
    assert summary in opened.text and filler not in opened.text
