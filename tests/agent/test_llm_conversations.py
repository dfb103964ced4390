"""Goal lifetime, several requests, control phrases and slot answers hold in llm and cascade mode.

The conversation logic lives in agent/conversation/, after understanding, so the stand-in model
(tests/standins/llm_server.py) and the rules go through the same scheduling.
"""

from __future__ import annotations

import pytest

from agent.app import App
from agent.context.telemetry import TelemetrySink
from agent.eval.runner import run_suites
from agent.eval.suite import load_suite
from bots.app import build_app
from tests.agent.test_llm_mode import env_for
from tests.helpers import REPO
from tests.standins.llm_server import StandInLLM

SUITE = REPO / "tests/suites_llm/conversation.yaml"


@pytest.mark.parametrize("mode", ["llm", "cascade"])
async def test_conversation_behaviours_in_llm_modes(mode: str, db_url: str, llm_server: StandInLLM) -> None:
    async def factory(events: TelemetrySink) -> App:
        return build_app(REPO / "config", REPO / "data", db_url, mode, telemetry=events, env=env_for(llm_server))

    results, summary = await run_suites([load_suite(SUITE)], factory)
    assert [(r.id, f) for r in results for f in r.failures] == []
    assert summary["failed"] == 0
    if mode == "llm":
        assert llm_server.seen, "llm mode asked the model"
