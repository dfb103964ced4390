"""A label becomes an example: the sentence written into the store's reviewed bank, learned by the
model on top of the rest of the banks, and shown by the sentences of the project's own corpus whose
reading it changes.

A label is local: the reader learns the labelled sentence without fitting the model again
(`ExampleScorer.add`), so it changes how that sentence and the messages near it read, and no level
moves; the levels move only through an explicit `agentbot nlu calibrate`. Nothing is refused on an
aggregate: the person sees each corpus sentence the label flips, before -> after, and decides (a
label is undone by removing its line from the bank file). A kept label changes files only; a running
bot reads them on `agentbot review apply` (bots/reload.py). Runs synchronously (a second or two of
CPU for each reading of the banks): the page calls it on a worker thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path

from pydantic import BaseModel, Field
from threadpoolctl import threadpool_limits

from agent.config.files import load_config
from agent.errors import ConfigError
from agent.eval.nlu import load_corpus
from agent.review.banks import ReviewedBank, include_reviewed
from agent.review.items import OUT_OF_SCOPE_LABEL, ReviewItem
from agent.understanding.banks import OUT_OF_SCOPE, load_banks
from agent.understanding.reading import BankReader
from bots.app import MODEL_CACHE
from bots.cli.nlu import ConfiguredUnderstanding
from bots.wiring import resolve_dir


class Flip(BaseModel):
    """A corpus sentence the label makes read otherwise."""

    corpus: str
    text: str
    expected: str  # what the corpus says it means
    before: str
    after: str

    @property
    def now_right(self) -> bool:
        return self.after == self.expected

    @property
    def now_wrong(self) -> bool:
        return self.before == self.expected


class LabelOutcome(BaseModel):
    item_id: str
    label: str
    sentence: str
    added: bool  # False: the banks already held it under that label
    kept: bool = False  # written to the store's config
    reads_as: tuple[str, str] = ("", "")  # how the message read before and after (an intent or out_of_scope)
    corpus: dict[str, int] = Field(default_factory=dict)  # each corpus read, with its number of sentences
    flips: list[Flip] = Field(default_factory=list)
    seconds: float = 0.0

    @property
    def worse(self) -> bool:
        """Whether any corpus sentence read right before and reads wrong now."""
        return any(f.now_wrong for f in self.flips)

    def lines(self) -> list[str]:
        """What the person is told: the label, then every corpus sentence it flips."""
        if not self.added:
            return [f"{self.item_id}: the banks already hold {self.sentence!r} as {self.label}; nothing written"]
        out = [
            f"{self.item_id}: {self.sentence!r} -> {self.label} (read as {self.reads_as[0]}, now {self.reads_as[1]})",
            "levels: unchanged (they move only with `agentbot nlu calibrate`)",
        ]
        for corpus, cases in self.corpus.items():
            mine = [f for f in self.flips if f.corpus == corpus]
            out.append(f"{corpus} ({cases} messages): {len(mine)} read otherwise" + (":" if mine else ""))
            for f in mine:
                verdict = "now right" if f.now_right else "now wrong" if f.now_wrong else "still wrong"
                out.append(f"  {f.before} -> {f.after} ({verdict}; means {f.expected}): {f.text!r}")
        out.append("kept in config/banks/reviewed.yaml; `agentbot review apply` makes a running bot read it")
        return out


def note(item: ReviewItem) -> str:
    """Where a sentence came from, as the bank file's comment says it."""
    where = ", ".join(p for p in (item.channel, item.workspace) if p)
    return f"review {item.id}, {where}, {item.created_at:%Y-%m-%d}"


def _readings(understanding: ConfiguredUnderstanding, texts: list[str]) -> list[str]:
    # One thread for the arithmetic: each message is a few small products, which several BLAS
    # threads only slow down on a busy machine (three times over on two shared cores).
    with threadpool_limits(limits=1):
        return [understanding.intent_of(text) for text in texts]


def _project_digest(config_path: Path, data_dir: str | Path | None, texts: list[str]) -> str:
    """What a corpus's readings depend on: every config file, the data files, and the texts."""
    data_path = resolve_dir(data_dir, "data")
    h = hashlib.sha256()
    for path in sorted([*config_path.rglob("*.yaml"), *data_path.rglob("*")]):
        if path.is_file():
            h.update(str(path).encode() + b"\0")
            h.update(path.read_bytes() if path.suffix == ".yaml" else str(path.stat().st_mtime_ns).encode())
    h.update(json.dumps(texts, ensure_ascii=False).encode())
    return h.hexdigest()[:32]


class _KeptReadings:
    """Each label reads the corpus once: its readings after one label are the next one's before,
    kept beside the fitted models under a digest of everything they depend on."""

    def __init__(self, folder: Path = MODEL_CACHE):
        self.folder = folder

    def get(self, key: str) -> list[str] | None:
        try:
            found = json.loads((self.folder / f"readings-{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return [str(x) for x in found] if isinstance(found, list) else None

    def put(self, key: str, readings: list[str]) -> None:
        with contextlib.suppress(OSError):
            self.folder.mkdir(parents=True, exist_ok=True)
            for old in sorted(self.folder.glob("readings-*.json"), key=lambda p: p.stat().st_mtime)[:-4]:
                old.unlink(missing_ok=True)
            part = self.folder / f"readings-{key}.{os.getpid()}.part"
            part.write_text(json.dumps(readings), encoding="utf-8")
            os.replace(part, self.folder / f"readings-{key}.json")


def label(
    item: ReviewItem,
    chosen: str,
    config_dir: str | Path | None = None,
    data_dir: str | Path | None = None,
    corpora: list[Path] | None = None,
) -> LabelOutcome:
    """Write the item's sentence into the reviewed bank under `chosen` (an intent id, or
    `out-of-scope[:topic]`) and say which corpus sentences read otherwise with it.

    Args:
        item: the review item labelled.
        chosen: the label.
        config_dir, data_dir: the project (as for `build_app`).
        corpora: the project's own labelled corpora (JSONL) whose sentences are read before and after.
    """
    started = time.perf_counter()
    config_path = resolve_dir(config_dir, "config")
    config = load_config(config_path)
    known_intents = {i.id for i in config.intents.intents}
    if not (chosen in known_intents or chosen == OUT_OF_SCOPE_LABEL or chosen.startswith(OUT_OF_SCOPE_LABEL + ":")):
        raise ConfigError(
            str(config_path / "intents.yaml"),
            f"{chosen!r} is not an intent; choose one of {', '.join(sorted(known_intents))}, or {OUT_OF_SCOPE_LABEL}",
        )
    corpora = [c for c in corpora or [] if c.is_file()]
    cases = {str(path): load_corpus(path) for path in corpora}
    bank = ReviewedBank.open(config_path)
    nlu_path = config_path / "nlu.yaml"
    saved = {p: p.read_text(encoding="utf-8") if p.exists() else None for p in (bank.path, nlu_path)}
    outcome = LabelOutcome(item_id=item.id, label=chosen, sentence=item.text, added=False)
    if not bank.add(item.text, chosen, note(item), load_banks(config_path, config.intents)):
        return outcome
    texts = [case.text for found in cases.values() for case in found]
    kept = _KeptReadings()
    before = kept.get(_project_digest(config_path, data_dir, texts))
    if before is None:  # the first label since the banks changed otherwise: the corpus read as they are
        before = _readings(ConfiguredUnderstanding(config_path, data_dir), [item.text, *texts])
    else:  # the message read as the bot read it when it was kept
        before = [item.reading.intent or OUT_OF_SCOPE, *before]
    try:
        bank.save()
        include_reviewed(nlu_path)
        after = _readings(ConfiguredUnderstanding(config_path, data_dir), [item.text, *texts])
    except BaseException:
        _restore(saved)
        raise
    kept.put(_project_digest(config_path, data_dir, texts), after[1:])
    outcome.added = outcome.kept = True
    outcome.reads_as = (before[0], after[0])
    outcome.corpus = {name: len(found) for name, found in cases.items()}
    n = 1
    for name, found in cases.items():
        for case in found:
            if before[n] != after[n]:
                flip = Flip(corpus=name, text=case.text, expected=case.intent, before=before[n], after=after[n])
                outcome.flips.append(flip)
            n += 1
    outcome.seconds = round(time.perf_counter() - started, 2)
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
