"""A project of its own for tests that label: the shipped config copied, so labels never touch the
checkout's banks, with the general CLINC bank left out so that recalibrating takes seconds."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.helpers import REPO

# Said in no bank: a complaint in a customer's own words, which the banks read as out of scope.
MISSED = "nobody answered my emails for a week"


def review_project(folder: Path, corpus_lines: int = 120) -> tuple[Path, Path]:
    """(config folder, a small slice of the project's corpus to measure labels on)."""
    config = folder / "config"
    shutil.copytree(REPO / "config", config, ignore=shutil.ignore_patterns("stores", ".reload*", "reviewed.yaml"))
    nlu = config / "nlu.yaml"
    nlu.write_text(nlu.read_text(encoding="utf-8").replace("banks/clinc150_train.yaml, ", ""), encoding="utf-8")
    corpus = folder / "corpus.jsonl"
    lines = (REPO / "tests/nlu/corpus.jsonl").read_text(encoding="utf-8").splitlines()
    corpus.write_text("\n".join(lines[:: max(1, len(lines) // corpus_lines)]) + "\n", encoding="utf-8")
    return config, corpus
