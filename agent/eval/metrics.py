"""Evaluation metrics per scenario and per suite (detective spec: tool usage, decision quality...).

Rates are 0..1. A metric that does not apply (no turn stated the tools it expected, no goal could
complete) is None and is left out of averages rather than counted as perfect or as zero.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, Field

from agent.conversation.session import GoalStatus, SessionState
from agent.llm.models import Usage

# Quality scores: the spec report's "scores"; higher is better.
SCORES = ("task_completion", "tool_usage", "goal_completion", "goal_stack_correctness", "judge")


class TurnObservation(BaseModel):
    turn: int
    latency_ms: float
    tools: list[str] = Field(default_factory=list)
    expected: list[str] = Field(default_factory=list)  # expectation keys the suite stated
    failed: list[str] = Field(default_factory=list)  # expectation keys that did not hold
    fallback: bool = False
    handoff: bool = False
    goals_done: int = 0  # finished goals in the session after this turn
    llm: Usage = Field(default_factory=Usage)


class ScenarioMetrics(BaseModel):
    turns: int
    task_completion: float
    tool_usage: float | None = None
    turns_to_resolution: int | None = None
    fallback_rate: float = 0.0
    handoff: bool = False
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    latency_ms_mean: float = 0.0
    latency_ms_p95: float = 0.0
    goals_completed: int = 0
    goals_completable: int = 0
    goal_completion: float | None = None
    goal_stack_checks: int = 0
    goal_stack_correct: int = 0
    goal_stack_correctness: float | None = None
    judge: float | None = None

    def scores(self) -> dict[str, float]:
        dumped = self.model_dump(include=set(SCORES))
        return {k: dumped[k] for k in SCORES if dumped[k] is not None}


def p95(values: list[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)], 3)


def _share(hits: int, total: int) -> float | None:
    return round(hits / total, 4) if total else None


def goal_counts(state: SessionState | None) -> tuple[int, int]:
    """(done, completable). Dependency-aware: a goal still blocked on a slot the user never gave,
    or one the user replaced, could not complete and is left out; failed, suspended or stalled
    goals count against completion."""
    if state is None:
        return 0, 0
    done = completable = 0
    for goal in state.every_goal:
        if goal.status in (GoalStatus.cancelled, GoalStatus.blocked) or (goal.missing and goal.status != "done"):
            continue
        completable += 1
        done += goal.status == GoalStatus.done
    return done, completable


def scenario_metrics(turns: list[TurnObservation], state: SessionState | None, passed: bool) -> ScenarioMetrics:
    n = len(turns)
    tool_turns = [t for t in turns if "tools" in t.expected]
    stack_turns = [t for t in turns if {"active_goal", "goal_stack"} & set(t.expected)]
    stack_ok = sum(1 for t in stack_turns if not {"active_goal", "goal_stack"} & set(t.failed))
    done, completable = goal_counts(state)
    resolved = next((t.turn for t in turns if t.goals_done > 0), None)
    latencies = [t.latency_ms for t in turns]
    goal_completion = _share(done, completable)
    return ScenarioMetrics(
        turns=n,
        task_completion=1.0 if passed and goal_completion in (None, 1.0) else 0.0,
        tool_usage=_share(sum(1 for t in tool_turns if "tools" not in t.failed), len(tool_turns)),
        turns_to_resolution=resolved,
        fallback_rate=_share(sum(t.fallback for t in turns), n) or 0.0,
        handoff=any(t.handoff for t in turns),
        llm_calls=sum(t.llm.calls for t in turns),
        tokens_in=sum(t.llm.tokens_in for t in turns),
        tokens_out=sum(t.llm.tokens_out for t in turns),
        cost=round(sum(t.llm.cost for t in turns), 8),
        latency_ms_mean=round(sum(latencies) / n, 3) if n else 0.0,
        latency_ms_p95=p95(latencies),
        goals_completed=done,
        goals_completable=completable,
        goal_completion=goal_completion,
        goal_stack_checks=len(stack_turns),
        goal_stack_correct=stack_ok,
        goal_stack_correctness=_share(stack_ok, len(stack_turns)),
    )


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(sum(present) / len(present), 4) if present else None


def aggregate(results: list[Any]) -> dict[str, Any]:
    """Suite-level metrics over ScenarioResults (each with `.passed` and `.metrics`)."""
    ms: list[ScenarioMetrics] = [r.metrics for r in results if r.metrics is not None]
    turns = sum(m.turns for m in ms)
    resolved = [float(m.turns_to_resolution) for m in ms if m.turns_to_resolution is not None]
    weighted_latency = sum(m.latency_ms_mean * m.turns for m in ms)
    return {
        "scenarios": len(results),
        "pass_rate": round(sum(r.passed for r in results) / len(results), 4) if results else 0.0,
        "task_completion": _mean([m.task_completion for m in ms]),
        "tool_usage": _mean([m.tool_usage for m in ms]),
        "turns_to_resolution": round(sum(resolved) / len(resolved), 3) if resolved else None,
        "fallback_rate": round(sum(m.fallback_rate * m.turns for m in ms) / turns, 4) if turns else 0.0,
        "handoff_rate": round(sum(m.handoff for m in ms) / len(ms), 4) if ms else 0.0,
        "llm_calls": sum(m.llm_calls for m in ms),
        "tokens_in": sum(m.tokens_in for m in ms),
        "tokens_out": sum(m.tokens_out for m in ms),
        "cost": round(sum(m.cost for m in ms), 8),
        "latency_ms_mean": round(weighted_latency / turns, 3) if turns else 0.0,
        "goal_completion": _share(sum(m.goals_completed for m in ms), sum(m.goals_completable for m in ms)),
        "goal_stack_correctness": _share(sum(m.goal_stack_correct for m in ms), sum(m.goal_stack_checks for m in ms)),
        "judge": _mean([m.judge for m in ms]),
    }
