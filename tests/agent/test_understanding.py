"""The embedded understanding: typed values, typo repair, banks, and the thresholds on the corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.config_files import load_config
from agent.errors import ConfigError
from agent.eval.nlu import load_corpus, overlap
from agent.understanding.banks import OUT_OF_SCOPE, load_banks
from agent.understanding.entities import EntityReader
from agent.understanding.reading import problem_summary
from agent.understanding.spelling import Speller
from bots.cli.nlu import measure
from tests.helpers import REPO
from tests.nlu.build_corpus import build

CORPUS = REPO / "tests" / "nlu" / "corpus.jsonl"
STORES = [
    (REPO / "config", REPO / "data"),
    (REPO / "config" / "stores" / "outdoor", REPO / "data" / "stores" / "outdoor"),
]


@pytest.mark.parametrize(
    ("text", "order_ids", "references"),
    [
        ("where is O-12345", ["O-12345"], []),
        ("order no. 12345 and O\u201341122", ["O-12345", "O-41122"], []),
        ("track #O-60214 or o 62201, order id: O-51261", ["O-60214", "O-62201", "O-51261"], []),
        ("invoice INV-4471 is wrong", [], ["INV-4471"]),
        ("bill 88213 was charged twice", [], ["88213"]),
        ("resend receipt #55123", [], ["55123"]),
        ("reference REF-2231 and B-3391", [], ["REF-2231", "B-3391"]),
    ],
)
def test_references_never_become_order_ids(text: str, order_ids: list[str], references: list[str]) -> None:
    found = EntityReader().read(text)
    assert found.order_ids == order_ids
    assert found.references == references


@pytest.mark.parametrize(
    ("text", "amount", "currency"),
    [
        ("refund $45.99", "45.99", "USD"),
        ("give me back sixty dollars", "60", "USD"),
        ("30 bucks please", "30", "USD"),
        ("USD 25 on it", "25", "USD"),
        ("it cost \u0e3f1,290", "1290", "THB"),
        ("\u20ac30 too much", "30", "EUR"),
    ],
)
def test_money_carries_its_currency(text: str, amount: str, currency: str) -> None:
    money = EntityReader().read(text).money
    assert [(m.amount, m.currency) for m in money] == [(amount, currency)]


def test_models_and_dates_are_typed_and_masked() -> None:
    found = EntityReader(["Lenovo Legion 5"]).read("my lenovo legion 5 froze on monday, mark 2 done")
    assert found.models == ["lenovo legion 5"]
    assert found.dates == ["monday"]
    assert found.masked == "my product froze on date , mark 2 done"


def test_typo_repair_leaves_dictionary_words_alone() -> None:
    speller = Speller(["track", "refund", "thank", "order", "where"], known=["think", "were"])
    assert speller("tarck my ordr, refud please") == "track my order, refund please"
    assert speller("wher is it") == "where is it"  # four letters are repaired too
    assert speller("I think so, they were") == "I think so, they were"  # real words never are


def test_typo_repair_leaves_names_inside_a_sentence_alone() -> None:
    speller = Speller(["change", "track", "order"])
    assert speller("do you ship to Chiang Mai?") == "do you ship to Chiang Mai?"  # a place, not "change"
    assert speller("Chnage my order. Tarck it") == "change my order. track it"  # sentence-initial: a typo
    assert speller("WHERE IS MY ORDRE") == "WHERE IS MY order"  # shouting is not a name


def test_a_ticket_summary_is_the_problem_not_the_request() -> None:
    assert problem_summary("Hi! Can you open a ticket: the box was empty. Thanks!") == "The box was empty"
    assert problem_summary("I want to open a ticket") is None
    assert problem_summary("please file a complaint about the scratched monitor") == "The scratched monitor"


def test_banks_name_only_known_intents(tmp_path: Path) -> None:
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    for name in ("intents.yaml", "agents.yaml", "settings.yaml", "policies.yaml", "store.yaml"):
        (config_dir / name).write_text((REPO / "config" / name).read_text())
    (config_dir / "nlu.yaml").write_text("intents:\n  teleport: [beam me up]\n")
    with pytest.raises(ConfigError, match="teleport"):
        load_banks(config_dir, load_config(config_dir).intents)


def test_the_corpus_is_large_varied_and_mostly_labelled_in_scope_or_out() -> None:
    cases = load_corpus(CORPUS)
    intents = {i.id for i in load_config(REPO / "config").intents.intents}
    assert len(cases) >= 1500
    assert sum(c.intent == OUT_OF_SCOPE for c in cases) / len(cases) >= 0.40
    assert {c.intent for c in cases} <= intents | {OUT_OF_SCOPE}
    assert sum("order_id" in c.slots for c in cases) >= 300
    assert len({c.text.lower() for c in cases}) == len(cases)
    for line in CORPUS.read_text().splitlines():
        assert set(json.loads(line)) == {"text", "intent", "slots"}


def test_the_checked_in_corpus_is_what_its_generator_writes() -> None:
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    assert rows == build()


@pytest.mark.parametrize(("config_dir", "data_dir"), STORES)
def test_no_corpus_line_is_in_an_example_bank(config_dir: Path, data_dir: Path) -> None:
    banks = load_banks(config_dir, load_config(config_dir).intents)
    assert overlap(load_corpus(CORPUS), [s for _, s in banks.examples()]) == []


def test_the_shipped_understanding_meets_its_targets_on_the_corpus() -> None:
    result = measure(CORPUS, REPO / "config", REPO / "data")
    assert result.intent_accuracy >= 0.95, result.misses[:20]
    assert result.out_of_scope_recall >= 0.95
    assert result.false_actions == 0, result.false_action_examples
    assert result.order_id_accuracy >= 0.99
    assert result.stray_order_ids == 0
    assert result.bank_overlap == []
