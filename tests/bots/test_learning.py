"""A label that makes the project's own corpus read worse is shown, and not kept unless insisted on."""

from __future__ import annotations

import json
from pathlib import Path

from agent.review.items import ReviewItem
from bots.learning import label
from tests.bots.review_project import review_project
from tests.helpers import REPO


def test_a_label_that_makes_the_corpus_worse_is_shown_and_not_kept(tmp_path: Path) -> None:
    config, _ = review_project(tmp_path)
    nlu_before = (config / "nlu.yaml").read_text(encoding="utf-8")
    corpus = tmp_path / "own.jsonl"
    # Out of scope for a shop; labelled as a ticket request, the joke opens tickets.
    lines = [
        {"text": "tell me a joke about penguins", "intent": "out_of_scope"},
        {"text": "do you know any good penguin jokes", "intent": "out_of_scope"},
        {"text": "make me laugh with a penguin joke", "intent": "out_of_scope"},
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
    assert outcome.added and outcome.worse and not outcome.kept
    said = "\n".join(outcome.lines())
    assert "WORSE" in said and "not kept" in said
    assert not (config / "banks/reviewed.yaml").exists()  # nothing of it stays
    assert (config / "nlu.yaml").read_text(encoding="utf-8") == nlu_before
