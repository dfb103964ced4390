"""The reviewed bank: sentences people labelled from real conversations, in the store's `config/banks/`.

The file is a bank file like any other (`agent.understanding.banks.BankFile`), included by
`nlu.yaml`, and written so that a diff reads as what was learned: one sentence a line, quoted,
with where it came from in a comment after it::

    intents:
      create_ticket:
      - "the screen arrived with a crack across it"  # review 3f2a9c01d4e7, slack T0123, 2026-11-28

Out-of-scope labels go under `out_of_scope`, by topic (`reviewed` when none is named); a topic that
`nlu.yaml` answers gets these sentences added to its own.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from agent.errors import ConfigError
from agent.understanding.banks import OUT_OF_SCOPE, BankFile, NluBanks, normalized
from agent.understanding.reading import TOPIC_SEP

REVIEWED_FILE = "banks/reviewed.yaml"  # relative to the store's nlu.yaml
DEFAULT_TOPIC = "reviewed"
HEADER = (
    "# Sentences people labelled from real conversations (`agentbot review`, /admin/review).\n"
    "# One sentence a line, with where it came from. Edit or remove lines freely; then run\n"
    "# `agentbot review apply` (a label moves no level; `agentbot nlu calibrate` does).\n"
)
_LINE = re.compile(r'^\s*-\s+(?P<sentence>"(?:[^"\\]|\\.)*"|[^#]*?)\s*(?:#\s*(?P<note>.*))?$')


@dataclass
class ReviewedBank:
    """The reviewed bank file of one store: its sentences by label, and each one's source note."""

    path: Path
    intents: dict[str, list[str]] = field(default_factory=dict)
    topics: dict[str, list[str]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)  # sentence -> where it came from

    @classmethod
    def open(cls, config_dir: Path) -> ReviewedBank:
        path = config_dir / REVIEWED_FILE
        bank = cls(path)
        if not path.exists():
            return bank
        text = path.read_text(encoding="utf-8")
        try:
            parsed = BankFile.model_validate(yaml.safe_load(text) or {})
        except (yaml.YAMLError, ValueError) as e:
            raise ConfigError(str(path), f"not a bank file: {e}") from e
        bank.intents = {k: list(v) for k, v in parsed.intents.items()}
        bank.topics = {k: list(t.examples) for k, t in parsed.out_of_scope.items()}
        for line in text.splitlines():
            m = _LINE.match(line)
            if m and m.group("note"):
                sentence = m.group("sentence")
                sentence = json.loads(sentence) if sentence.startswith('"') else sentence
                bank.notes[sentence] = m.group("note").strip()
        return bank

    def add(self, sentence: str, label: str, note: str, known: NluBanks | None = None) -> bool:
        """Add the sentence under an intent or `out-of-scope[:topic]`; False when the banks (this
        file, or the store's others in `known`) already hold it under that label."""
        key = normalized(sentence)
        if not key:
            return False
        if label.startswith("out-of-scope"):
            topic = label.partition(":")[2] or DEFAULT_TOPIC
            held = [s for t in (known.out_of_scope.values() if known else []) for s in t.examples]
            target = self.topics.setdefault(topic, [])
        else:
            held = list(known.intents.get(label, [])) if known else []
            target = self.intents.setdefault(label, [])
        if any(normalized(s) == key for s in [*held, *target]):
            return False
        target.append(sentence)
        self.notes[sentence] = note
        return True

    def pairs(self) -> list[tuple[str, str]]:
        """The sentences as the reader labels them (an intent, or `out_of_scope/<topic>`), in the
        order they were labelled within each label."""
        out = [(label, s) for label, sentences in self.intents.items() for s in sentences]
        return out + [(f"{OUT_OF_SCOPE}{TOPIC_SEP}{t}", s) for t, sentences in self.topics.items() for s in sentences]

    @property
    def sentences(self) -> int:
        return sum(len(v) for v in self.intents.values()) + sum(len(v) for v in self.topics.values())

    def render(self) -> str:
        out = [HEADER]
        if self.intents:
            out.append("intents:\n")
            for label in sorted(self.intents):
                out.append(f"  {label}:\n")
                out += [self._line("  ", s) for s in self.intents[label]]
        if self.topics:
            out.append("out_of_scope:\n")
            for topic in sorted(self.topics):
                out.append(f"  {topic}:\n    examples:\n")
                out += [self._line("    ", s) for s in self.topics[topic]]
        return "".join(out)

    def _line(self, indent: str, sentence: str) -> str:
        note = self.notes.get(sentence)
        quoted = json.dumps(sentence, ensure_ascii=False)
        return f"{indent}- {quoted}" + (f"  # {note}" if note else "") + "\n"

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(self.render(), encoding="utf-8")


_INCLUDE = re.compile(r"^include:[ \t]*\[(?P<names>[^\]\n]*)\]", re.M)


def without_reviewed(nlu_path: Path) -> None:
    """Drop the reviewed bank from nlu.yaml's one-line `include` (a new project starts without labels)."""
    if not nlu_path.is_file():
        return
    text = nlu_path.read_text(encoding="utf-8")
    m = _INCLUDE.search(text)
    if m is None:
        return
    names = [n.strip() for n in m.group("names").split(",") if n.strip() and n.strip() != REVIEWED_FILE]
    nlu_path.write_text(text[: m.start()] + "include: [" + ", ".join(names) + "]" + text[m.end() :], encoding="utf-8")


def include_reviewed(nlu_path: Path) -> bool:
    """Make nlu.yaml include the reviewed bank; True when it had to be added."""
    if not nlu_path.is_file():
        raise ConfigError(str(nlu_path), "labels go into the example banks, and this store has no nlu.yaml")
    text = nlu_path.read_text(encoding="utf-8")
    m = _INCLUDE.search(text)
    if m:
        names = [n.strip() for n in m.group("names").split(",") if n.strip()]
        if REVIEWED_FILE in names:
            return False
        line = "include: [" + ", ".join([*names, REVIEWED_FILE]) + "]"
        text = text[: m.start()] + line + text[m.end() :]
    elif re.search(r"^include:", text, re.M):
        raise ConfigError(str(nlu_path), f"add {REVIEWED_FILE} to `include` (a one-line list is edited for you)")
    else:
        text = text.rstrip("\n") + f"\ninclude: [{REVIEWED_FILE}]\n"
    nlu_path.write_text(text, encoding="utf-8")
    return True
