"""A fitted lexical model is kept between starts: the same banks load the same arrays, and a bad
or unwritable cache costs only a fit."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.nlu.lexical import LexicalScorer

EXAMPLES = [
    ("order_status", "where is my order"),
    ("order_status", "has my parcel shipped yet"),
    ("refund_request", "i want my money back"),
    ("refund_request", "please refund this purchase"),
    ("greeting", "hello there"),
    ("greeting", "good morning"),
]
MESSAGES = ["where is my parcel", "money back please", "hello", "zzzz"]


class NoFit(LexicalScorer):
    """A scorer that can only load: fitting fails the test."""

    def _fitted(self, examples: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
        raise AssertionError("fitted again instead of loading the kept model")


def fitted(cache: Path | None, examples: list[tuple[str, str]] = EXAMPLES) -> LexicalScorer:
    scorer = LexicalScorer(cache=cache)
    scorer.fit(examples)
    return scorer


def test_a_second_start_loads_the_same_model(tmp_path: Path) -> None:
    first = fitted(tmp_path / "models")
    [kept] = (tmp_path / "models").glob("lexical-*")
    again = NoFit(cache=tmp_path / "models")
    again.fit(EXAMPLES)
    assert again.labels == first.labels
    for text in MESSAGES:
        assert again.scores(text) == first.scores(text)
        assert again.similarities(text) == first.similarities(text)
    assert list((tmp_path / "models").iterdir()) == [kept]  # no partial folder left beside it
    assert not again._weights.flags.writeable  # read from the kept file, shared with other workers


def test_the_kept_arrays_are_mapped_not_copied(tmp_path: Path) -> None:
    fitted(tmp_path)
    again = NoFit(cache=tmp_path)
    again.fit(EXAMPLES)
    [kept] = tmp_path.glob("lexical-*")
    mapped = Path("/proc/self/maps").read_text() if Path("/proc/self/maps").exists() else None
    if mapped is None:
        pytest.skip("no /proc to list a process's mapped files")
    assert str(kept / "weights.npy") in mapped


def test_other_sentences_are_another_model(tmp_path: Path) -> None:
    fitted(tmp_path)
    more = fitted(tmp_path, [*EXAMPLES, ("greeting", "hiya")])
    assert len(list(tmp_path.glob("lexical-*"))) == 2
    assert more.scores("hiya")["greeting"] > fitted(None).scores("hiya")["greeting"]


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_an_unreadable_file_is_fitted_again_and_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    plain = fitted(None)
    fitted(tmp_path)
    [kept] = tmp_path.glob("lexical-*")
    weights = kept / "weights.npy"  # the largest of the model's arrays
    whole = weights.read_bytes()
    weights.write_bytes(b"not a model" if damage == "garbage" else whole[: len(whole) // 2])
    repaired = fitted(tmp_path)
    assert repaired.scores(MESSAGES[0]) == plain.scores(MESSAGES[0])
    assert "unreadable" in caplog.text
    NoFit(cache=tmp_path).fit(EXAMPLES)  # the file was written whole again


def test_a_cache_that_cannot_be_written_only_costs_a_fit(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    scorer = fitted(blocked / "models")
    assert scorer.scores(MESSAGES[0]) == fitted(None).scores(MESSAGES[0])
    assert "not kept" in caplog.text and blocked.read_text() == "not a folder"


def test_only_the_most_recently_used_models_are_kept(tmp_path: Path) -> None:
    for n in range(6):
        fitted(tmp_path, [*EXAMPLES, ("greeting", f"hello number {n}")])
    assert len(list(tmp_path.glob("lexical-*"))) == 4
    NoFit(cache=tmp_path).fit([*EXAMPLES, ("greeting", "hello number 5")])  # the newest is among them
