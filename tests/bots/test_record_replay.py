"""agentbot eval --record / --replay in llm mode: a replay never calls out, and a gap fails loudly."""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from bots import cli
from tests.helpers import REPO
from tests.standins.llm_server import StandInLLM

ORDERS = str(REPO / "tests/suites/orders.yaml")
TICKETS = str(REPO / "tests/suites/interleaving.yaml")  # the model's answers quote generated ticket ids


def test_a_recorded_eval_replays_without_the_provider(
    llm_server: StandInLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_url)
    recording = tmp_path / "orders.llm.json"
    assert cli.main(["eval", ORDERS, TICKETS, "--record", str(recording), "--json"]) == 0
    recorded = json.loads(capsys.readouterr().out)
    calls = len(llm_server.seen)
    entries = json.loads(recording.read_text())["responses"]
    assert calls > 0 and len(entries) == calls
    # Keyed by the turn's interaction (the run's suite, scenario and turn) and the call's number in it.
    assert any(re.fullmatch(r"eval:orders:single_turn_complete:\w+:1/\d+", key) for key in entries)

    assert cli.main(["eval", ORDERS, TICKETS, "--replay", str(recording), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert len(llm_server.seen) == calls  # nothing reached the provider
    assert replayed["summary"] == recorded["summary"] and replayed["llm"]["calls"] == recorded["llm"]["calls"]

    # The same scores, scenario by scenario and turn by turn: ids generated during the recorded run
    # (ticket T-...) come out the same, so no recorded answer is rejected as ungrounded on replay.
    def scores(report: dict) -> list[tuple]:
        return [
            (s["id"], s["status"], s["failures"], [t["calls"] for t in s["llm_turns"]]) for s in report["scenarios"]
        ]

    assert scores(replayed) == scores(recorded)
    assert json.loads(recording.read_text())["run_id"]

    unknown = str(REPO / "tests/suites/unknown.yaml")
    assert cli.main(["eval", unknown, "--replay", str(recording)]) == 2
    assert "no recorded LLM response for eval:unknown:" in capsys.readouterr().err
    assert len(llm_server.seen) == calls


def test_a_recording_made_on_another_day_replays_with_its_own_dates(
    llm_server: StandInLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A refund's date is written by the tool and quoted by the model. The recording below is moved
    to the day before, as if made yesterday: its answers quote yesterday's date, and the replay
    runs its clock from the recorded start, so the tool writes that date again and the grounding
    guard rejects nothing: no model answer is replaced by the rules' (the same fallbacks, calls
    and failures as the recording)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_url)
    refunds = str(REPO / "tests/suites/refunds_grounded.yaml")
    recording = tmp_path / "refunds.llm.json"
    args = ["eval", refunds, "--understanding", "llm", "--json"]
    assert cli.main([*args, "--record", str(recording)]) == 0
    recorded = json.loads(capsys.readouterr().out)

    data = json.loads(recording.read_text())
    today = datetime.fromisoformat(data["started_at"])
    yesterday = today - timedelta(days=1)
    body = json.dumps(data["responses"])
    assert today.date().isoformat() in body  # the model quoted the refund's date
    # Made yesterday, every date it quotes is a day earlier: the refund's, and the demo orders' (day
    # offsets from the demo's first run, which was yesterday too).
    earlier = re.sub(
        r"\b\d{4}-\d\d-\d\d\b", lambda m: (date.fromisoformat(m.group(0)) - timedelta(days=1)).isoformat(), body
    )
    data["responses"] = json.loads(earlier)
    data["started_at"] = yesterday.isoformat()
    recording.write_text(json.dumps(data))

    assert cli.main([*args, "--replay", str(recording)]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["summary"] == recorded["summary"]

    def scores(report: dict) -> list[tuple]:
        kept = ("fallback_rate", "llm_calls", "task_completion", "tool_usage", "goal_completion")
        turns = [[(t["calls"], t["fallbacks"]) for t in s["llm_turns"]] for s in report["scenarios"]]
        return [(s["id"], s["failures"], [s["metrics"][k] for k in kept]) for s in report["scenarios"]] + turns

    assert scores(replayed) == scores(recorded)
