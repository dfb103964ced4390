"""A label is local: it moves no level, and the sentences of the project's own corpus it makes read
otherwise are shown one by one, before -> after, for the person to decide on."""

from __future__ import annotations

import json
import re
from pathlib import Path

from agent.review.items import ReviewItem
from bots.learning import label
from tests.bots.review_project import review_project
from tests.helpers import REPO

LEVEL = re.compile(r"^(threshold|margin|confident|topic|clarify|gates|moves_at):.*$", re.M)


def test_a_label_moves_no_level_and_shows_the_corpus_sentences_it_flips(tmp_path: Path) -> None:
    config, _ = review_project(tmp_path)
    levels_before = LEVEL.findall((config / "nlu.yaml").read_text(encoding="utf-8"))
    levels_text = [m.group(0) for m in LEVEL.finditer((config / "nlu.yaml").read_text(encoding="utf-8"))]
    corpus = tmp_path / "own.jsonl"
    # Out of scope for a shop; labelled as a ticket request, the jokes near it read as tickets too.
    lines = [
        {"text": "tell me a joke about penguins", "intent": "out_of_scope"},
        {"text": "do you know any good penguin jokes", "intent": "out_of_scope"},
        {"text": "where is my order O-12345", "intent": "order_status"},
    ]
    corpus.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    wrong = ReviewItem(
        id="abc123def456",
        kind="fallback",
        text="tell me a funny joke about penguins",
        session_id="s",
        interaction_id="i",
        channel="console",
    )
    outcome = label(wrong, "create_ticket", config, REPO / "data", [corpus])
    assert outcome.added and outcome.kept  # the person decides; nothing is refused on an aggregate
    assert outcome.reads_as[1] == "create_ticket"
    flipped = {f.text: f for f in outcome.flips}
    assert "tell me a joke about penguins" in flipped, outcome.lines()
    joke = flipped["tell me a joke about penguins"]
    assert joke.after == "create_ticket" and joke.before != "create_ticket"
    assert "where is my order O-12345" not in flipped  # far from the label: read as before
    said = "\n".join(outcome.lines())
    assert (
        f"{joke.before} -> create_ticket (" in said and "means out_of_scope): 'tell me a joke about penguins'" in said
    )
    assert "levels: unchanged" in said
    assert "tell me a funny joke about penguins" in (config / "banks/reviewed.yaml").read_text(encoding="utf-8")
    after = (config / "nlu.yaml").read_text(encoding="utf-8")
    assert [m.group(0) for m in LEVEL.finditer(after)] == levels_text and levels_before


def test_calibrate_says_every_level_it_moves() -> None:
    from agent.config.files import load_config
    from agent.understanding.banks import load_banks
    from agent.understanding.calibration import Levels
    from bots.cli.nlu import moved_levels

    config = REPO / "config"
    banks = load_banks(config, load_config(config).intents)
    same = Levels(
        threshold=banks.threshold,
        margin=banks.margin,
        confident=banks.confident,
        gates=dict(banks.gates),
        topic=banks.topic,
        clarify=banks.clarify,
        moves=dict(banks.moves_at),
        in_scope_accuracy=1.0,
        out_of_scope_recall=1.0,
        sentences=1,
        out_of_scope_sentences=0,
    )
    assert moved_levels(banks, same) == []
    gate = sorted(banks.gates)[0]
    moved = same.model_copy(update={"clarify": 0.02, "gates": banks.gates | {gate: 0.5}})
    assert moved_levels(banks, moved) == [
        f"clarify {banks.clarify} -> 0.02",
        f"gates.{gate} {banks.gates[gate]} -> 0.5",
    ]
