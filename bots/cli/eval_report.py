"""What `agentbot eval` prints and stores: the run as a baseline, the spec's report, the metrics
table and the regression warnings."""

from __future__ import annotations

from typing import Any, TextIO

from agent.eval import baseline as baselines
from agent.eval.metrics import SCORES, aggregate
from agent.eval.runner import ScenarioResult


def current_baseline(name: str, results: list[ScenarioResult]) -> baselines.Baseline:
    suites: dict[str, list[ScenarioResult]] = {}
    for r in results:
        suites.setdefault(r.suite, []).append(r)
    return baselines.Baseline(
        name=name,
        overall=aggregate(results),
        suites={s: aggregate(rs) for s, rs in suites.items()},
        scenarios={
            f"{r.suite}/{r.id}": {"passed": r.passed, "scores": r.metrics.scores() if r.metrics else {}}
            for r in results
        },
    )


def spec_report(run: baselines.Baseline, results: list[ScenarioResult], cmp: baselines.Comparison | None) -> dict:
    """The detective spec's report: summary with average scores, scenarios, regression analysis."""
    avg = {k: v for k in SCORES if (v := run.overall.get(k)) is not None}
    return {
        "summary": {
            "pass_rate": run.overall["pass_rate"],
            "total_scenarios": len(results),
            "avg_scores": avg,
            "metrics": run.overall,
        },
        "scenarios": [
            {
                "id": r.id,
                "suite": r.suite,
                "status": "passed" if r.passed else "failed",
                "scores": r.metrics.scores() if r.metrics else {},
                "metrics": r.metrics.model_dump() if r.metrics else None,
            }
            for r in results
        ],
        "regression_analysis": _analysis(cmp),
    }


def _analysis(cmp: baselines.Comparison | None) -> dict[str, Any]:
    if cmp is None:
        return {"baseline": None, "regressions": [], "improvements": [], "changes": []}
    return cmp.model_dump()


def _fmt(v: Any) -> str:
    return "-" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)


METRIC_ROWS = (
    "pass_rate",
    "task_completion",
    "tool_usage",
    "turns_to_resolution",
    "fallback_rate",
    "handoff_rate",
    "goal_completion",
    "goal_stack_correctness",
    "llm_calls",
    "tokens_in",
    "tokens_out",
    "cost",
    "latency_ms_mean",
    "judge",
)


WIDTH, LABEL, COLUMN = 100, 24, 12  # the table fits a 100-column terminal


def _blocks(names: list[str]) -> list[list[tuple[int, int]]]:
    """Columns (index, width) grouped into blocks that fit WIDTH; a column is as wide as its whole name."""
    blocks: list[list[tuple[int, int]]] = [[]]
    used = LABEL + 2
    for i, name in enumerate(names):
        width = max(COLUMN, len(name) + 2)
        if blocks[-1] and used + width > WIDTH:
            blocks.append([])
            used = LABEL + 2
        blocks[-1].append((i, width))
        used += width
    return blocks


def print_metrics(run: baselines.Baseline, out: TextIO) -> None:
    """One column per suite plus the overall run, as many to a block as fit; `-` where a metric does not apply."""
    columns = [("overall", run.overall), *run.suites.items()]
    for block in _blocks([name for name, _ in columns]):
        header = "".join(f"{columns[i][0]:>{w}}" for i, w in block)
        print("\n  " + f"{'metric':<{LABEL}}" + header, file=out)
        for key in METRIC_ROWS:
            cells = "".join(f"{_fmt(columns[i][1].get(key)):>{w}}" for i, w in block)
            print(f"  {key:<{LABEL}}" + cells, file=out)


def warn_regressions(cmp: baselines.Comparison, err: TextIO) -> None:
    for c in cmp.regressions:
        change = f" ({c.change:+.1%})" if isinstance(c.change, float) else ""
        print(
            f"WARNING: regression vs baseline {cmp.baseline!r}: {c.scope} {c.metric} "
            f"{_fmt(c.baseline)} -> {_fmt(c.current)}{change}",
            file=err,
        )
