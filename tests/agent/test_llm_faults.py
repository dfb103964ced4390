"""The fault matrix: what each provider fault costs in requests and time, and what the user sees
and the database keeps. LLM mode against the policy-model stand-in through the real OpenAI SDK.

Every row is one turn, "Where's O-12345?", with a per-call timeout of 1 s and a turn deadline of
2.5 s. `MATRIX` is the table docs/llm-providers.md quotes.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import pytest

from agent.app import App
from bots.app import build_app
from tests.helpers import REPO, say
from tests.standins.alerts import CollectingAlerts
from tests.standins.llm_server import Reply, StandInLLM
from tests.standins.telemetry import CollectingSink

DEADLINE = 2.5
RULES_ANSWER = "has shipped via UPS"  # the support agent's own template for this order
MODEL_ANSWER = "Your order O-12345 is shipped with UPS"


def fast_config(tmp_path: Path, **llm: object) -> Path:
    """The shipped config with short LLM timeouts (and any other `llm:` settings given)."""
    config = tmp_path / "config"
    shutil.copytree(REPO / "config", config)
    settings = config / "settings.yaml"
    extra = {
        "timeout_seconds": 1,
        "turn_deadline_seconds": DEADLINE,
        "retry": "{max_attempts: 3, base_delay: 0.05, max_delay: 0.2, retry_after_cap: 5}",
        **llm,
    }
    text = (
        settings.read_text()
        .replace("  timeout_seconds: 30\n", "")
        .replace("  retry: {max_attempts: 3, base_delay: 0.5, max_delay: 8, retry_after_cap: 30}\n", "")
    )
    lines = "".join(f"  {k}: {v}\n" for k, v in extra.items())
    settings.write_text(text.replace("llm:\n", "llm:\n" + lines, 1))
    return config


def app_for(tmp_path: Path, server: StandInLLM, sink: CollectingSink, alerts: CollectingAlerts, **llm: object) -> App:
    env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.openai_url}
    return build_app(
        fast_config(tmp_path, **llm),
        REPO / "data",
        f"sqlite+aiosqlite:///{tmp_path}/faults.db",
        "llm",
        telemetry=sink,
        alerts=alerts,
        env=env,
    )


# fault -> (how the stand-in misbehaves, requests made, what the user's answer contains)
MATRIX: dict[str, tuple[Reply | str, int, str]] = {
    "401 unauthorized": (Reply(status=401), 1, RULES_ANSWER),
    "429 beyond the Retry-After cap": (Reply(status=429, headers={"retry-after": "600"}), 1, RULES_ANSWER),
    "500 server error": (Reply(status=500), 3, RULES_ANSWER),
    "529 overloaded": (Reply(status=529), 3, RULES_ANSWER),
    "hung provider": (Reply(delay=30), 3, RULES_ANSWER),
    "classification not JSON": ("not_json", 4, MODEL_ANSWER),
    "malformed tool arguments": ("malformed_args", 2, RULES_ANSWER),
    "tool outside the agent's permissions": ("wrong_tool", 2, RULES_ANSWER),
    "invented facts": ("invent_facts", 3, RULES_ANSWER),
    "endless tool calls": ("endless_tools", 3, RULES_ANSWER),
}


@pytest.mark.parametrize("fault", list(MATRIX))
async def test_fault_matrix(fault: str, tmp_path: Path, llm_server: StandInLLM) -> None:
    misbehaviour, requests, answer = MATRIX[fault]
    if isinstance(misbehaviour, Reply):
        llm_server.always = misbehaviour
    else:
        llm_server.misbehave = misbehaviour
    sink, alerts = CollectingSink(), CollectingAlerts()
    async with app_for(tmp_path, llm_server, sink, alerts) as app:
        started = time.monotonic()
        r, delivered = await say(app.router, "Where's O-12345?")
        took = time.monotonic() - started
        state, history = await app.store.load("s-1", 10)
    assert len(llm_server.seen) <= requests
    assert answer in r.text and "Done." not in r.text and not r.confirmation
    # Every answer stands on the real order: no invented date, price or status reaches the user.
    assert "2025-10-18" not in r.text and "45.00" not in r.text and "delivered" not in r.text
    assert [m.text for m in history] == ["Where's O-12345?", *[m.text for m in delivered]]
    assert state is not None and all(p.active_goal is None for p in state.speakers.values())
    # Only the order lookup ran, however the model misbehaved (no foreign tool, no side effect).
    assert {t.tool for t in r.tool_results} == {"check_order_status"}
    # No fault holds the turn near its length: a Retry-After of ten minutes is not waited out, a
    # hung call is cut (a bound in wall-clock time, wide enough for a loaded test machine).
    assert took < 2 * DEADLINE
    if fault == "hung provider":
        # The call was cut by its timeout, and the answer is the rules' own: the turn's deadline,
        # which ends the work with an error message instead, did not fire (LLM work stops a tenth early).
        assert any(p.get("error") == "timeout" for p in (e.payload for e in sink.events if e.stage == "llm_call"))
    if isinstance(misbehaviour, Reply) and misbehaviour.status in (401, 429, 500, 529):
        assert [a.kind for a in alerts.alerts] == ["provider_outage"]


async def test_the_circuit_opens_after_repeated_failures_and_half_opens_after_the_cooldown(
    tmp_path: Path, llm_server: StandInLLM
) -> None:
    llm_server.always = Reply(status=500)
    sink, alerts = CollectingSink(), CollectingAlerts()
    breaker = "{failures: 2, cooldown_seconds: 0.5}"
    async with app_for(tmp_path, llm_server, sink, alerts, breaker=breaker) as app:
        for n in range(2):
            await say(app.router, "Where's O-12345?", session=f"s-{n}")
        assert len(llm_server.seen) == 6  # two failed calls of three attempts each: the circuit opens
        r, _ = await say(app.router, "Where's O-23456?", session="s-2")
        assert len(llm_server.seen) == 6 and "delivered" in r.text  # no request; the rules answered
        skipped = [e.payload["reason"] for e in sink.events if e.stage == "llm_skipped"]
        assert skipped and skipped[0].startswith("circuit open")
        circuit = [a for a in alerts.alerts if a.details.get("state") == "open"]
        assert len(circuit) == 1  # admins are told once per opening
        await asyncio.sleep(0.6)
        llm_server.always = None  # the provider is back: the half-open probe closes the circuit
        r, _ = await say(app.router, "Where's O-12345?", session="s-3")
    assert r.text.startswith(MODEL_ANSWER) and len(llm_server.seen) == 6 + 3


async def test_cascade_with_the_model_down_asks_rather_than_acting_on_a_guess(
    tmp_path: Path, llm_server: StandInLLM
) -> None:
    llm_server.always = Reply(status=503)
    env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": llm_server.openai_url}
    config = fast_config(tmp_path)
    sink = CollectingSink()
    async with build_app(config, REPO / "data", f"sqlite+aiosqlite:///{tmp_path}/c.db", "cascade", env=env) as app:
        await say(app.router, "add a task to call the bank", customer="C-001")
        # A hedged message the embedded model reads below its calibrated confidence: the rules only
        # guess "complete task 1". ("done with 1" now reads surely, and is acted on without the model.)
        r, _ = await say(app.router, "pretty sure 1 is finished", customer="C-001")
        tasks, _ = await say(app.router, "show my tasks", customer="C-001")
    # It acts on nothing and asks instead (a rephrase, or the out-of-scope answer's offer of a person).
    assert r.tool_results == [] and r.text.rstrip().endswith("?") and not r.confirmation
    assert "call the bank" in tasks.text and "done" not in tasks.text.lower().split("call the bank")[1][:20]
    assert sink is not None
