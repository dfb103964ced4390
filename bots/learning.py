"""A label becomes an example: the sentence written into the store's reviewed bank, the levels
recalibrated, and the effect measured on the project's own corpus before anything is kept.

A label that makes the corpus read worse (intent accuracy or out-of-scope recall lower than before)
is shown and not kept unless the person insists (`--force`, or the page's "keep it anyway"). A kept
label changes files only; a running bot reads them on `agentbot review apply` (bots/reload.py).
Runs synchronously (fitting and measuring take seconds): the page calls it on a worker thread.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from agent.config.files import load_config
from agent.errors import ConfigError
from agent.eval.nlu import NluReport
from agent.review.banks import ReviewedBank, include_reviewed
from agent.review.items import OUT_OF_SCOPE_LABEL, ReviewItem
from agent.review.reload import LEVELS
from agent.understanding.banks import load_banks
from agent.understanding.reading import BankReader
from bots.cli.nlu import ConfiguredUnderstanding, calibrated, write_levels
from bots.wiring import resolve_dir


class CorpusEffect(BaseModel):
    corpus: str
    cases: int
    intent_accuracy: tuple[float, float]  # before, after
    out_of_scope_recall: tuple[float, float]

    @property
    def worse(self) -> bool:
        return (
            self.intent_accuracy[1] < self.intent_accuracy[0]
            or self.out_of_scope_recall[1] < self.out_of_scope_recall[0]
        )


class LabelOutcome(BaseModel):
    item_id: str
    label: str
    sentence: str
    added: bool  # False: the banks already held it under that label
    kept: bool = False  # written to the store's config (False when it made the corpus worse)
    levels: dict[str, tuple[float, float]] = Field(default_factory=dict)  # level -> before, after
    corpus: list[CorpusEffect] = Field(default_factory=list)
    reads_as: tuple[str, str] = ("", "")  # how the message read before and after (an intent or out_of_scope)

    @property
    def worse(self) -> bool:
        return any(c.worse for c in self.corpus)

    def lines(self) -> list[str]:
        """What the person is told, in a few lines."""
        if not self.added:
            return [f"{self.item_id}: the banks already hold {self.sentence!r} as {self.label}; nothing written"]
        out = [
            f"{self.item_id}: {self.sentence!r} -> {self.label} (read as {self.reads_as[0]}, now {self.reads_as[1]})"
        ]
        changed = [f"{k} {a:g} -> {b:g}" for k, (a, b) in self.levels.items() if a != b]
        out.append("levels: " + (", ".join(changed) if changed else "unchanged"))
        for c in self.corpus:
            out.append(
                f"{c.corpus} ({c.cases} messages): intent accuracy {c.intent_accuracy[0]:.2%} -> "
                f"{c.intent_accuracy[1]:.2%}, out-of-scope recall {c.out_of_scope_recall[0]:.2%} -> "
                f"{c.out_of_scope_recall[1]:.2%}" + ("  WORSE" if c.worse else "")
            )
        if not self.kept:
            out.append("not kept: this label makes your corpus read worse (label again with --force to keep it)")
        else:
            out.append("kept in config/banks/reviewed.yaml; `agentbot review apply` makes a running bot read it")
        return out


def note(item: ReviewItem) -> str:
    """Where a sentence came from, as the bank file's comment says it."""
    where = ", ".join(p for p in (item.channel, item.workspace) if p)
    return f"review {item.id}, {where}, {item.created_at:%Y-%m-%d}"


def _reading(
    config_dir: Path, data_dir: str | Path | None, text: str, corpora: list[Path]
) -> tuple[str, list[NluReport]]:
    """How the message reads with the banks on disk, and each corpus's report."""
    understanding = ConfiguredUnderstanding(config_dir, data_dir)
    return understanding.intent_of(text), [understanding.measure(corpus) for corpus in corpora]


def label(
    item: ReviewItem,
    chosen: str,
    config_dir: str | Path | None = None,
    data_dir: str | Path | None = None,
    corpora: list[Path] | None = None,
    *,
    force: bool = False,
) -> LabelOutcome:
    """Write the item's sentence into the reviewed bank under `chosen` (an intent id, or
    `out-of-scope[:topic]`), recalibrate, and measure; undo it when it made a corpus worse unless forced.

    Args:
        item: the review item labelled.
        chosen: the label.
        config_dir, data_dir: the project (as for `build_app`).
        corpora: the project's own labelled corpora (JSONL) to measure the effect on.
        force: keep the label even when a corpus reads worse with it.
    """
    config_path = resolve_dir(config_dir, "config")
    config = load_config(config_path)
    known_intents = {i.id for i in config.intents.intents}
    if not (chosen in known_intents or chosen == OUT_OF_SCOPE_LABEL or chosen.startswith(OUT_OF_SCOPE_LABEL + ":")):
        raise ConfigError(
            str(config_path / "intents.yaml"),
            f"{chosen!r} is not an intent; choose one of {', '.join(sorted(known_intents))}, or {OUT_OF_SCOPE_LABEL}",
        )
    corpora = [c for c in corpora or [] if c.is_file()]
    bank = ReviewedBank.open(config_path)
    nlu_path = config_path / "nlu.yaml"
    saved = {p: p.read_text(encoding="utf-8") if p.exists() else None for p in (bank.path, nlu_path)}
    outcome = LabelOutcome(item_id=item.id, label=chosen, sentence=item.text, added=False)
    if not bank.add(item.text, chosen, note(item), load_banks(config_path, config.intents)):
        return outcome
    before_banks = load_banks(config_path, config.intents)
    read_before, reports_before = _reading(config_path, data_dir, item.text, corpora)
    try:
        bank.save()
        include_reviewed(nlu_path)
        write_levels(nlu_path, calibrated(config_path, data_dir))
        after_banks = load_banks(config_path, load_config(config_path).intents)
        read_after, reports_after = _reading(config_path, data_dir, item.text, corpora)
    except BaseException:
        _restore(saved)
        raise
    outcome.added = True
    outcome.reads_as = (read_before, read_after)
    outcome.levels = {k: (float(getattr(before_banks, k)), float(getattr(after_banks, k))) for k in LEVELS}
    outcome.corpus = [
        CorpusEffect(
            corpus=str(path),
            cases=a.cases,
            intent_accuracy=(b.intent_accuracy, a.intent_accuracy),
            out_of_scope_recall=(b.out_of_scope_recall, a.out_of_scope_recall),
        )
        for path, b, a in zip(corpora, reports_before, reports_after, strict=True)
    ]
    outcome.kept = force or not outcome.worse
    if not outcome.kept:
        _restore(saved)
    return outcome


def _restore(saved: dict[Path, str | None]) -> None:
    for path, text in saved.items():
        if text is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(text, encoding="utf-8")


def with_candidates(items: list[ReviewItem], reader: BankReader, k: int = 3) -> list[ReviewItem]:
    """Items whose turn recorded no ranked intents get them from the banks now, so each has a
    likeliest intent to offer (the reading at record time is kept where it exists)."""
    intents = set(reader.banks.intents)
    out = []
    for item in items:
        if not item.reading.candidates:
            scores = reader.read(item.text).scores
            ranked = sorted(
                ((label, round(float(v), 3)) for label, v in scores.items() if label in intents), key=lambda x: -x[1]
            )
            item = item.model_copy(update={"reading": item.reading.model_copy(update={"candidates": ranked[:k]})})
        out.append(item)
    return out
