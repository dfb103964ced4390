"""Baselines: save an eval run's metrics under a name, compare a later run, flag regressions.

A quality score (pass rate, task completion, tool usage, goal completion, goal-stack
correctness, judge) regresses when it drops more than 5% relative to the baseline. A rate where
lower is better (fallback, handoff) regresses when it rises more than 5 points; a count or cost
(LLM calls, tokens, cost, turns to resolution) when it rises more than 5%. Latency is reported as
a change but never fails a run: it depends on the machine, not on the agent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agent.domain.types import utcnow
from agent.errors import ConfigError

THRESHOLD = 0.05
HIGHER_IS_BETTER = ("pass_rate", "task_completion", "tool_usage", "goal_completion", "goal_stack_correctness", "judge")
LOWER_RATES = ("fallback_rate", "handoff_rate")
LOWER_COUNTS = ("llm_calls", "tokens_in", "tokens_out", "cost", "turns_to_resolution")
INFORMATIONAL = ("latency_ms_mean",)


class Baseline(BaseModel):
    name: str
    created_at: str = Field(default_factory=lambda: utcnow().isoformat())
    overall: dict[str, Any]
    suites: dict[str, dict[str, Any]] = Field(default_factory=dict)
    scenarios: dict[str, dict[str, Any]] = Field(default_factory=dict)  # "suite/id" -> passed, scores


class MetricChange(BaseModel):
    scope: str  # "overall", a suite name, or "suite/scenario"
    metric: str
    baseline: float | bool | None
    current: float | bool | None
    change: float | None = None  # relative for scores and counts, absolute points for rates


class Comparison(BaseModel):
    baseline: str
    regressions: list[MetricChange] = Field(default_factory=list)
    improvements: list[MetricChange] = Field(default_factory=list)
    changes: list[MetricChange] = Field(default_factory=list)  # informational (latency)


def _path(directory: str | Path, name: str) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,100}", name) or name.startswith("."):
        raise ConfigError(name, "a baseline name uses letters, digits, '.', '_' and '-' only")
    return Path(directory) / f"{name}.json"


def save(baseline: Baseline, directory: str | Path) -> Path:
    path = _path(directory, baseline.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(baseline.model_dump_json(indent=2))
    return path


def load(name: str, directory: str | Path) -> Baseline:
    path = _path(directory, name)
    if not path.exists():
        raise ConfigError(str(path), f"no baseline named {name!r} (save one with --save-baseline {name})")
    try:
        return Baseline.model_validate(json.loads(path.read_text()))
    except (ValueError, TypeError) as e:
        raise ConfigError(str(path), f"not a baseline file ({e})") from e


def _metric(scope: str, name: str, base: Any, cur: Any, out: Comparison) -> None:
    if not isinstance(base, int | float) or not isinstance(cur, int | float) or base == cur:
        return
    delta: float | None
    if name in LOWER_RATES:
        delta = round(cur - base, 4)
        bucket = out.regressions if delta > THRESHOLD else out.improvements if delta < -THRESHOLD else None
    elif name in HIGHER_IS_BETTER or name in LOWER_COUNTS:
        # From nothing to something is always notable.
        delta = 1.0 if base == 0 else round((cur - base) / abs(base), 4)
        worse = -delta if name in HIGHER_IS_BETTER else delta
        bucket = out.regressions if worse > THRESHOLD else out.improvements if worse < -THRESHOLD else None
    else:
        bucket, delta = out.changes, round((cur - base) / base, 4) if base else None
    if bucket is not None:
        bucket.append(MetricChange(scope=scope, metric=name, baseline=base, current=cur, change=delta))


def compare(current: Baseline, baseline: Baseline) -> Comparison:
    """Every metric of the overall run, each suite and each scenario, against the baseline."""
    out = Comparison(baseline=baseline.name)
    metrics = HIGHER_IS_BETTER + LOWER_RATES + LOWER_COUNTS + INFORMATIONAL
    for name in metrics:
        _metric("overall", name, baseline.overall.get(name), current.overall.get(name), out)
    for suite, base in baseline.suites.items():
        if suite in current.suites:
            for name in metrics:
                if name not in INFORMATIONAL:
                    _metric(suite, name, base.get(name), current.suites[suite].get(name), out)
    for key, base in baseline.scenarios.items():
        cur = current.scenarios.get(key)
        if cur is None:
            continue
        if base.get("passed") and not cur.get("passed"):
            out.regressions.append(MetricChange(scope=key, metric="passed", baseline=True, current=False))
        elif cur.get("passed") and not base.get("passed"):
            out.improvements.append(MetricChange(scope=key, metric="passed", baseline=False, current=True))
    return out
