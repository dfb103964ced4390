"""Example banks (config/nlu.yaml): sentences per intent and per out-of-scope topic, validated at startup."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field, model_validator

from agent.config import IntentsFile, Strict, load_yaml_model
from agent.errors import ConfigError

OUT_OF_SCOPE = "out_of_scope"


class OutOfScopeTopic(Strict):
    answer: str  # the honest short answer ("I can't change account settings here.")
    examples: list[str] = Field(min_length=1)


class NluBanks(Strict):
    """What the embedded semantic model compares a message with."""

    threshold: float = Field(0.42, ge=0, le=1)  # best fused score below this: out of scope
    margin: float = Field(0.02, ge=0, le=1)  # in scope must beat the best out-of-scope topic by this
    confident: float = Field(0.55, ge=0, le=1)  # a side-effecting intent acts only at or above this
    intents: dict[str, list[str]] = Field(default_factory=dict)
    out_of_scope: dict[str, OutOfScopeTopic] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _labels(self) -> NluBanks:
        if OUT_OF_SCOPE in self.intents:
            raise ValueError(f"'{OUT_OF_SCOPE}' is not an intent; list its topics under out_of_scope")
        return self

    def examples(self) -> list[tuple[str, str]]:
        """(label, sentence) pairs; every out-of-scope topic is labelled out_of_scope."""
        pairs = [(intent, s) for intent, sentences in self.intents.items() for s in sentences]
        pairs += [(OUT_OF_SCOPE, s) for topic in self.out_of_scope.values() for s in topic.examples]
        return pairs

    def topic_of(self, sentence: str) -> str | None:
        for name, topic in self.out_of_scope.items():
            if sentence in topic.examples:
                return name
        return None


def normalized(sentence: str) -> str:
    """The form two sentences are compared in for overlap: lowercase words only."""
    return " ".join(re.findall(r"[a-z0-9]+", sentence.lower()))


def load_banks(config_dir: Path, intents: IntentsFile) -> NluBanks:
    """config_dir/nlu.yaml, or banks drawn from intents.yaml's examples when the file is absent."""
    path = config_dir / "nlu.yaml"
    known = {i.id for i in intents.intents}
    if not path.exists():
        return NluBanks(intents={i.id: list(i.examples) for i in intents.intents if i.examples})
    banks = load_yaml_model(path, NluBanks)
    unknown = sorted(set(banks.intents) - known)
    if unknown:
        raise ConfigError(str(path), f"intents not in intents.yaml: {', '.join(unknown)}", field="intents")
    return banks
