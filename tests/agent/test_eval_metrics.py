"""Eval metrics, baselines and regression detection, the LLM judge, and record/replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapters.llm.recording import RecordingProvider, ReplayProvider
from agent.app import App
from agent.context.telemetry import TelemetrySink
from agent.conversation.session import Goal, GoalStatus, SessionState
from agent.errors import ProviderUnavailable, RecordingMissing
from agent.eval import baseline as baselines
from agent.eval.judge import judge
from agent.eval.metrics import TurnObservation, goal_counts, scenario_metrics
from agent.eval.runner import run_scenario
from agent.eval.suite import load_suite
from agent.llm.models import LLMRequest, LLMResponse
from bots.app import build_app
from tests.adapters.test_otel import ScriptedProvider
from tests.helpers import REPO


def goal(gid: str, status: GoalStatus, missing: list[str] | None = None) -> Goal:
    return Goal(id=gid, type="a.b", agent="a", intent_id="b", status=status, missing=missing or [])


def test_goal_completion_leaves_out_goals_waiting_on_the_user() -> None:
    state = SessionState(
        session_id="s",
        goals={
            "1": goal("1", GoalStatus.done),
            "2": goal("2", GoalStatus.blocked, ["order_id"]),  # the user never gave the slot
            "3": goal("3", GoalStatus.cancelled),  # the user moved on
            "4": goal("4", GoalStatus.failed),
            "5": goal("5", GoalStatus.suspended),  # never resumed
        },
    )
    assert goal_counts(state) == (1, 3)


def test_scenario_metrics() -> None:
    turns = [
        TurnObservation(turn=1, latency_ms=10, expected=["tools", "active_goal"], failed=[], fallback=True),
        TurnObservation(turn=2, latency_ms=30, expected=["tools"], failed=["tools"], goals_done=1),
        TurnObservation(turn=3, latency_ms=20, expected=["goal_stack"], failed=["goal_stack"], goals_done=1),
    ]
    state = SessionState(session_id="s", goals={"1": goal("1", GoalStatus.done)})
    m = scenario_metrics(turns, state, passed=False)
    assert (m.tool_usage, m.goal_stack_correctness, m.turns_to_resolution) == (0.5, 0.5, 2)
    assert (m.fallback_rate, m.goal_completion, m.task_completion) == (0.3333, 1.0, 0.0)
    assert (m.latency_ms_mean, m.latency_ms_p95) == (20.0, 30.0)
    assert m.scores() == {
        "task_completion": 0.0,
        "tool_usage": 0.5,
        "goal_completion": 1.0,
        "goal_stack_correctness": 0.5,
    }


def run(name: str, overall: dict, scenarios: dict | None = None) -> baselines.Baseline:
    return baselines.Baseline(name=name, overall=overall, scenarios=scenarios or {})


def test_a_drop_over_five_percent_is_a_regression() -> None:
    base = run(
        "b",
        {"pass_rate": 1.0, "tool_usage": 1.0, "fallback_rate": 0.0, "cost": 0.010, "latency_ms_mean": 5},
        {"s/a": {"passed": True}, "s/b": {"passed": False}},
    )
    now = run(
        "c",
        {"pass_rate": 0.96, "tool_usage": 0.9, "fallback_rate": 0.1, "cost": 0.0104, "latency_ms_mean": 50},
        {"s/a": {"passed": False}, "s/b": {"passed": True}},
    )
    cmp = baselines.compare(now, base)
    assert {(c.scope, c.metric) for c in cmp.regressions} == {
        ("overall", "tool_usage"),  # -10%
        ("overall", "fallback_rate"),  # +10 points
        ("s/a", "passed"),
    }  # pass_rate -4% and cost +4% are within tolerance
    assert [(c.scope, c.metric) for c in cmp.improvements] == [("s/b", "passed")]
    assert [c.metric for c in cmp.changes] == ["latency_ms_mean"]  # reported, never gating


def test_baselines_round_trip_and_bad_names(tmp_path: Path) -> None:
    path = baselines.save(run("v1.2", {"pass_rate": 1.0}), tmp_path)
    assert path == tmp_path / "v1.2.json"
    assert baselines.load("v1.2", tmp_path).overall == {"pass_rate": 1.0}
    with pytest.raises(Exception, match="no baseline named 'nope'"):
        baselines.load("nope", tmp_path)
    with pytest.raises(Exception, match="letters, digits"):
        baselines.save(run("../escape", {}), tmp_path)


async def test_judge_scores_and_refuses_to_invent_a_score() -> None:
    transcript = [("user", "how risky is 2.4.1"), ("assistant", "HIGH risk: payments tests fail.")]
    good = ScriptedProvider([LLMResponse(content='{"score": 4, "reasons": "grounded"}', cost=0.001)])
    verdict = await judge(good, transcript, "Calls out failing payment tests.")
    assert (verdict.score, verdict.reasons, verdict.cost) == (0.75, "grounded", 0.001)
    prompt = good.calls[0][1]["content"]
    assert "Calls out failing payment tests." in prompt and "assistant: HIGH risk" in prompt
    assert (await judge(ScriptedProvider([LLMResponse(content="great job!")]), transcript)).score is None
    assert (await judge(ScriptedProvider([ProviderUnavailable("down")]), transcript)).score is None


async def test_runner_adds_the_judge_score(db_url: str) -> None:
    suite = load_suite(REPO / "tests" / "suites" / "release.yaml")
    scenario = suite.scenarios[0]

    async def factory(sink: TelemetrySink) -> App:
        return build_app(REPO / "config", REPO / "data", db_url, telemetry=sink)

    provider = ScriptedProvider([LLMResponse(content='{"score": 5, "reasons": "spot on"}')])
    result = await run_scenario(suite.name, scenario, factory, provider)
    assert result.passed and result.metrics and result.metrics.judge == 1.0
    assert result.judge_reasons == "spot on"
    assert scenario.rubric and scenario.rubric in provider.calls[0][1]["content"]


async def test_record_then_replay_by_scenario_turn(tmp_path: Path) -> None:
    path = tmp_path / "rec.json"
    live = ScriptedProvider([LLMResponse(content="first", tokens_in=3), LLMResponse(content="second")])
    recorder = RecordingProvider(live, path)
    await recorder.generate(LLMRequest([{"role": "user", "content": "a"}], call_key="s/sc/1/1"))
    await recorder.generate(LLMRequest([{"role": "user", "content": "b"}], call_key="s/sc/1/2"))
    assert sorted(json.loads(path.read_text())["responses"]) == ["s/sc/1/1", "s/sc/1/2"]

    replay = ReplayProvider(path)
    assert (await replay.generate(LLMRequest([], call_key="s/sc/1/1"))).content == "first"
    assert (await replay.generate(LLMRequest([], call_key="s/sc/1/2"))).tokens_in == 0
    with pytest.raises(RecordingMissing, match="no recorded LLM response for s/sc/2/1"):
        await replay.generate(LLMRequest([], call_key="s/sc/2/1"))
    with pytest.raises(RecordingMissing, match="inside an eval run"):
        await replay.generate(LLMRequest([]))
    with pytest.raises(RecordingMissing, match="no recording at"):
        ReplayProvider(tmp_path / "missing.json")
