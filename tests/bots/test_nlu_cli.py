"""`agentbot eval --nlu`: the report on stdout, --json, the heat map, and the bank-overlap warning."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bots.test_cli import agentbot


def test_eval_nlu_reports_json_and_draws_the_heat_map(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    lines = [
        {"text": "where is my order O-12345?", "intent": "order_status", "slots": {"order_id": "O-12345"}},
        {
            "text": "please refund $20 on O-23456",
            "intent": "refund_request",
            "slots": {"order_id": "O-23456", "amount": "20"},
        },
        {"text": "I forgot my password", "intent": "out_of_scope", "slots": {}},
        {"text": "invoice 88213 is wrong", "intent": "out_of_scope", "slots": {}},
        # Also a bank sentence: counted, and warned about.
        {"text": "I can't remember my password", "intent": "out_of_scope", "slots": {}},
    ]
    corpus.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    png = tmp_path / "confusion.png"
    out = agentbot("eval", "--nlu", str(corpus), "--json", "--confusion-png", str(png))
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["cases"] == 5
    assert report["intent_accuracy"] == 1.0
    assert report["order_id_accuracy"] == 1.0
    assert report["slot_accuracy"] == 1.0
    assert report["stray_order_ids"] == 0
    assert report["false_actions"] == 0
    assert report["per_intent"]["out_of_scope"]["support"] == 3
    assert report["labels"] == ["order_status", "out_of_scope", "refund_request"]
    assert report["confusion"] == [[1, 0, 0], [0, 3, 0], [0, 0, 1]]
    assert report["bank_overlap"] == ["I can't remember my password"]
    assert "warning: corpus line also in an example bank" in out.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_nlu_prints_the_figures_and_fails_below_target(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"text": "what's the weather tomorrow", "intent": "order_status", "slots": {}}) + "\n")
    out = agentbot("eval", "--nlu", str(corpus), "--confusion-png", str(tmp_path / "c.png"))
    assert out.returncode == 1
    assert "intent accuracy                0.00%" in out.stdout
    assert "order_status     -> out_of_scope     what's the weather tomorrow" in out.stdout


def test_eval_nlu_names_a_bad_corpus_line(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"text": "hi", "intent": "greeting"}\nnot json\n')
    out = agentbot("eval", "--nlu", str(corpus))
    assert out.returncode != 0
    assert "line 2" in out.stderr


def test_eval_nlu_reads_a_mapped_corpus_and_prints_corpora_side_by_side(tmp_path: Path) -> None:
    own = tmp_path / "own.jsonl"
    own.write_text(json.dumps({"text": "where is my order O-12345?", "intent": "order_status"}) + "\n")
    mapped = tmp_path / "mapped.jsonl"
    rows = [
        # Several answers count; "unknown" is out of scope.
        {"text": "where is my order O-12345?", "expected": ["order_status", "unknown"], "source_split": "test"},
        {"text": "what's the weather tomorrow", "expected": ["unknown"], "source_split": "val"},
        # Training rows may be in the banks: never measured.
        {"text": "book me a flight to rome", "expected": ["order_status"], "source_split": "train"},
    ]
    mapped.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = agentbot("eval", "--nlu", str(own), str(mapped), "--json", "--confusion-png", str(tmp_path / "c.png"))
    reports = json.loads(out.stdout)
    assert [r["cases"] for r in reports] == [1, 2]
    assert reports[1]["intent_accuracy"] == 1.0
    assert reports[1]["per_intent"]["out_of_scope"]["support"] == 1
    text = agentbot("eval", "--nlu", str(own), str(mapped), "--confusion-png", str(tmp_path / "c.png")).stdout
    header = text.splitlines()[0]
    assert "own.jsonl" in header and "mapped.jsonl" in header
    assert "intent accuracy" in text.splitlines()[2]


def test_counts_in_the_heat_map_contrast_with_their_cell() -> None:
    import matplotlib

    from bots.cli.nlu import ink

    blues = matplotlib.colormaps["Blues"]
    assert ink(blues(0.15)) == "black"  # a small count on the diagonal: pale blue, dark ink
    assert ink(blues(1.0)) == "white"


def test_nlu_explain_shows_values_moves_intents_and_the_decision() -> None:
    out = agentbot("nlu", "explain", "--json", "pls refund 20 dollars on my order 23456, it came broken")
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert found["values"]["order_ids"] == ["O-23456"]
    assert found["slots"]["order_id"] == "O-23456" and found["slots"]["amount"] == "20"
    assert "order" in found["read_as"] and "23456" not in found["read_as"]  # what the model read
    top = found["intents"][0]
    assert top["intent"] == "refund_request" and top["score"] > found["intents"][1]["score"]
    assert top["acts_at"] > found["levels"]["threshold"]  # its calibrated level for acting without asking
    assert found["decision"]["acts_on"] == "refund_request" and found["decision"]["why"]
    assert {"move", "score", "level"} <= set(found["moves"][0])
    # In words, for a person at a terminal: a reply move is acted on as a reply.
    text = agentbot("nlu", "explain", "alright, let's do that then")
    assert text.returncode == 0, text.stderr
    assert "acts on      move/assent" in text.stdout
    assert "intents      " in text.stdout and "levels       threshold" in text.stdout


def test_nlu_explain_without_a_message_says_what_to_give() -> None:
    out = agentbot("nlu", "explain", "  ")
    assert out.returncode != 0
    assert "give the message to read" in out.stderr
