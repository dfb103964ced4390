"""The conversation-suite format (a public contract; see README). Unknown keys are errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent.config import load_yaml_model
from agent.errors import ConfigError
from agent.types import ChannelType


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Expect(Strict):
    intent: str | None = None
    needs_input: bool | None = None
    asks_for: str | None = None
    tools: list[str] | None = None
    pre_message: bool | None = None
    reply_contains: list[str] = Field(default_factory=list)
    reply_not_contains: list[str] = Field(default_factory=list)
    active_goal: str | None = None
    goal_stack: list[str] | None = None
    handoff: bool | None = None
    stages: list[str] | None = None
    alerts: list[str] | None = None  # admin alert kinds raised this turn, e.g. [risk_report]

    def given(self) -> set[str]:
        """Keys the suite wrote, so `intent: null` (expect unknown) differs from no expectation."""
        return set(self.model_fields_set)


class Turn(Strict):
    user: str | None = None
    restart: bool = False
    expect: Expect = Field(default_factory=Expect)

    @model_validator(mode="after")
    def _one_kind(self) -> Turn:
        if (self.user is None) == (not self.restart):
            raise ValueError("a turn is either `user: TEXT` or `restart: true`")
        if self.restart and self.expect.given():
            raise ValueError("a restart turn has no expectations")
        return self


class Scenario(Strict):
    id: str
    customer: str | None = None
    channel: ChannelType = ChannelType.console
    turns: list[Turn] = Field(min_length=1)
    rubric: str | None = None  # for the optional LLM judge (agentbot eval --judge)


class Suite(Strict):
    name: str
    scenarios: list[Scenario] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> Suite:
        ids = [s.id for s in self.scenarios]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate scenario ids: {', '.join(dupes)}")
        return self


def load_suite(path: str | Path) -> Suite:
    suite = load_yaml_model(Path(path), Suite)
    if not suite.scenarios:
        raise ConfigError(str(path), "no scenarios")
    return suite


def summary(results: list[Any]) -> dict[str, Any]:
    passed = sum(1 for r in results if r.passed)
    return {
        "scenarios": len(results),
        "passed": passed,
        "failed": len(results) - passed,
        "pass_rate": round(passed / len(results), 4) if results else 0.0,
        "turns": sum(r.turns for r in results),
    }
