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
    lines = [
        {"text": "could you tell me where my parcel is at the moment", "intent": "order_status"},
        {"text": "where's my parcel got to, it should be here", "intent": "order_status"},
        {"text": "any idea where my parcel is right now", "intent": "order_status"},
    ]
    corpus.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    wrong = ReviewItem(
        id="abc123def456",
        kind="fallback",
        text="where my parcel is right now",
        session_id="s",
        interaction_id="i",
        channel="console",
    )
    outcome = label(wrong, "task_delete", config, REPO / "data", [corpus])
    assert outcome.added and outcome.worse and not outcome.kept
    said = "\n".join(outcome.lines())
    assert "WORSE" in said and "not kept" in said
    assert not (config / "banks/reviewed.yaml").exists()  # nothing of it stays
    assert (config / "nlu.yaml").read_text(encoding="utf-8") == nlu_before
