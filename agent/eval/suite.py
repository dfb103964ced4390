"""The conversation-suite format (a public contract; see docs/evaluation.md). Unknown keys are errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from agent.config.files import load_yaml_model
from agent.config.schema import Strict
from agent.domain.types import ChannelType
from agent.errors import ConfigError


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
    confirmation: bool | None = None  # an action waits for the user's confirm or cancel
    alerts: list[str] | None = None  # admin alert kinds raised this turn, in order
    choices: list[str] | None = None  # what a question offered to pick from this turn, as shown, in order

    def given(self) -> set[str]:
        """Keys the suite wrote, so `intent: null` (expect unknown) differs from no expectation."""
        return set(self.model_fields_set)


# A button click by the user (confirm, cancel), an admin action (claim, release), or the re-alert
# sweep running `after_seconds` later than now (realert).
Action = Literal["confirm", "cancel", "claim", "release", "realert"]


class SuiteTurn(Strict):
    user: str | None = None
    restart: bool = False
    action: Action | None = None
    after_seconds: float | None = Field(None, ge=0)  # realert only; default: just past the interval
    expect: Expect = Field(default_factory=Expect)

    @model_validator(mode="after")
    def _one_kind(self) -> SuiteTurn:
        if [self.user is not None, self.restart, self.action is not None].count(True) != 1:
            raise ValueError("a turn is one of `user: TEXT`, `action: ACTION` or `restart: true`")
        if self.after_seconds is not None and self.action != "realert":
            raise ValueError("`after_seconds` goes with `action: realert`")
        if self.restart and self.expect.given():
            raise ValueError("a restart turn has no expectations")
        return self


class Scenario(Strict):
    id: str
    customer: str | None = None
    channel: ChannelType = ChannelType.console
    turns: list[SuiteTurn] = Field(min_length=1)
    rubric: str | None = None  # for the optional LLM judge (agentbot eval --judge)


class Suite(Strict):
    name: str
    # The store this suite talks to: config and data folders, relative to the repository root
    # (absolute paths as given). Unset: the shipped config/ and data/ (or the CLI's flags).
    config_dir: str | None = None
    data_dir: str | None = None
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
