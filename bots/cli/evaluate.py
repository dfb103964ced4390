"""`agentbot eval`: suites -> metrics, the spec's report, baselines and regression detection.

Exit codes: 0 all passed; 1 a scenario failed; 3 a regression against `--baseline` (a quality
score dropped more than 5%, or a cost/fallback measure rose past its threshold); 2 bad input.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from adapters.llm.recording import RecordedRun, RecordingProvider, ReplayProvider, recorded_run
from agent.app import App
from agent.context.telemetry import TelemetrySink
from agent.domain.types import ClockFrom
from agent.errors import ConfigError
from agent.eval import baseline as baselines
from agent.eval.runner import ScenarioResult, llm_totals, run_suites
from agent.eval.suite import Suite, load_suite
from agent.eval.suite import summary as suite_summary
from agent.llm.models import LLMRequest, LLMResponse
from agent.llm.provider import LLMProvider
from bots.alerts import AlertFanout
from bots.app import build_app
from bots.cli.eval_report import current_baseline, print_metrics, spec_report, warn_regressions
from bots.settings import DeploySettings
from bots.wiring import REPO

REGRESSED = 3


def recorded_llm(
    args: argparse.Namespace, config_dir: str | Path | None, run: RecordedRun | None = None
) -> LLMProvider | None:
    """--replay: answers from the recording only; --record: the configured provider, recorded."""
    if args.replay:
        return ReplayProvider(args.replay)
    if args.record:
        from bots.llm_wiring import configured_provider

        inner = configured_provider(
            DeploySettings.from_env(), str(config_dir) if config_dir else None, args.provider, args.model
        )
        return RecordingProvider(inner, args.record, run)
    return None


def judge_provider(config_dir: str | None = None) -> LLMProvider:
    """The judge's provider: the configured LLM (settings `llm:`), its key from the environment."""
    from bots.llm_wiring import configured_provider

    try:
        return configured_provider(DeploySettings.from_env(), config_dir)
    except ConfigError as e:
        print(f"agentbot: --judge needs an LLM provider: {e}", file=sys.stderr)
        raise SystemExit(2) from e


class ProgressBar:
    def __init__(self, out: TextIO, width: int = 30):
        self.out, self.width = out, width

    def __call__(self, done: int, total: int, label: str) -> None:
        filled = self.width * done // max(total, 1)
        bar = "#" * filled + "-" * (self.width - filled)
        self.out.write(f"\r[{bar}] {done}/{total} {label[:50]:<50}")
        if done == total:
            self.out.write("\n")
        self.out.flush()


class RunProvider:
    """The run's provider as each app sees it: closing an app (a restart) leaves it open for the run."""

    def __init__(self, inner: LLMProvider):
        self.inner = inner
        self.capabilities = inner.capabilities

    async def generate(self, request: LLMRequest) -> LLMResponse:
        return await self.inner.generate(request)

    def get_cost(self, tokens_in: int, tokens_out: int) -> float:
        return self.inner.get_cost(tokens_in, tokens_out)

    def estimate_tokens(self, text: str) -> int:
        return self.inner.estimate_tokens(text)

    async def aclose(self) -> None:
        return None  # the run closes the provider once, after its last scenario


async def run_groups(
    args: argparse.Namespace,
    suites: list[Suite],
    url: str,
    build_args: dict[str, Any],
    progress: ProgressBar | None,
    judge: LLMProvider | None,
) -> list[ScenarioResult]:
    """Suites on the same store share one app (built once); each scenario gets a fresh session."""
    # A recorded run and its replay share their session names and clock, so the ids and dates
    # tools generate match.
    run = recorded_run(args.replay) if args.replay else RecordedRun() if args.record else None
    if args.replay and run:
        build_args = {**build_args, "clock": ClockFrom(run.started_at)}
    return await _run_groups(args, suites, url, build_args, progress, judge, run)


async def _run_groups(
    args: argparse.Namespace,
    suites: list[Suite],
    url: str,
    build_args: dict[str, Any],
    progress: ProgressBar | None,
    judge: LLMProvider | None,
    run: RecordedRun | None,
) -> list[ScenarioResult]:
    run_id = run.run_id if run else None
    groups: dict[tuple[str | Path | None, str | Path | None], list[Suite]] = {}
    for suite in suites:
        # A suite may name its store's folders; the command line's flags win.
        config_dir = args.config_dir or (REPO / suite.config_dir if suite.config_dir else None)
        data_dir = args.data_dir or (REPO / suite.data_dir if suite.data_dir else None)
        groups.setdefault((config_dir, data_dir), []).append(suite)
    total, done = sum(len(s.scenarios) for s in suites), 0
    results: list[ScenarioResult] = []
    for (config_dir, data_dir), group in groups.items():
        # One recording (or replay) per run: an app rebuilt for a restart turn writes to the same one.
        recorded = recorded_llm(args, config_dir, run)
        llm = RunProvider(recorded) if recorded is not None else None

        async def factory(
            sink: TelemetrySink,
            c: str | Path | None = config_dir,
            d: str | Path | None = data_dir,
            llm: LLMProvider | None = llm,
        ) -> App:
            # Alerts are counted in each response; eval posts them nowhere.
            return build_app(c, d, url, telemetry=sink, alerts=AlertFanout([]), llm=llm, **build_args)

        def step(n: int, _total: int, label: str, offset: int = done) -> None:
            if progress is not None:
                progress(offset + n, total, label)

        try:
            results += (await run_suites(group, factory, progress=step, judge_provider=judge, run_id=run_id))[0]
        finally:
            if recorded is not None:
                await recorded.aclose()
        done += sum(len(s.scenarios) for s in group)
    return results


def run_eval(args: argparse.Namespace, print_results: Any, llm_args: dict[str, Any] | None = None) -> int:
    suites = [load_suite(p) for p in args.suites]
    directory = args.baselines_dir or DeploySettings.from_env().observability.baselines_dir or "var/baselines"
    base = baselines.load(args.baseline, directory) if args.baseline else None  # fail before a long run
    judge = judge_provider(args.config_dir) if args.judge else None
    show_progress = args.progress or sys.stderr.isatty()
    progress = ProgressBar(sys.stderr) if show_progress else None
    build_args = _build_args(args, llm_args)
    with tempfile.TemporaryDirectory(prefix="agentbot-eval-") as tmp:
        url = args.db_url or f"sqlite+aiosqlite:///{Path(tmp) / 'eval.db'}"
        results = asyncio.run(run_groups(args, suites, url, build_args, progress, judge))
    summary = suite_summary(results)
    run = current_baseline(args.save_baseline or "current", results)
    cmp = baselines.compare(run, base) if base else None
    if args.save_baseline:
        path = baselines.save(run, directory)
        print(f"saved baseline {args.save_baseline!r} to {path}", file=sys.stderr)
    report = spec_report(run, results, cmp)
    if args.report:
        Path(args.report).parent.mkdir(parents=True, exist_ok=True)
        Path(args.report).write_text(json.dumps(report, indent=2, default=str))
    if args.json:
        print(json.dumps(_json_output(results, summary, run, report), indent=2, default=str))
    else:
        print_results(results, summary)
        print_metrics(run, sys.stdout)
    if cmp is not None:
        warn_regressions(cmp, sys.stderr)
        if cmp.regressions:
            return REGRESSED
    return 0 if summary["failed"] == 0 else 1


def _build_args(args: argparse.Namespace, llm_args: dict[str, Any] | None) -> dict[str, Any]:
    """What every app of the run is built with besides its folders and database."""
    build_args = dict(llm_args or {})
    if args.record or args.replay:
        build_args["understanding"] = build_args.get("understanding") or "llm"
    if not args.db_url and not DeploySettings.from_env().observability.traces_dir:
        # The run's database and the traces beside it are deleted when the run ends: nobody could
        # read them, so none are written (set AGENTBOT_TRACES_DIR or --db-url to keep them).
        build_args["env"] = {**os.environ, "AGENTBOT_TRACING": "off"}
    return build_args


def _json_output(
    results: list[ScenarioResult], summary: dict[str, Any], run: baselines.Baseline, report: dict[str, Any]
) -> dict[str, Any]:
    """`--json`: the summary, every scenario with its failures, scores and LLM use, and the metrics."""
    return {
        "summary": summary,
        "llm": llm_totals(results),
        "scenarios": [
            {
                "id": r.id,
                "suite": r.suite,
                "status": "pass" if r.passed else "fail",
                "failures": [f.model_dump(mode="json") for f in r.failures],
                "scores": r.metrics.scores() if r.metrics else {},
                "metrics": r.metrics.model_dump() if r.metrics else None,
                "judge_reasons": r.judge_reasons,
                "llm": r.llm,
                "llm_turns": r.llm_turns,
            }
            for r in results
        ],
        "metrics": {"overall": run.overall, "suites": run.suites},
        "regression_analysis": report["regression_analysis"],
    }
