"""Fixtures for the channel tests: the stand-in Slack Web API."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.standins.slack_standin import SlackStandIn

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture
async def slack(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[SlackStandIn]:
    for name in PROXY_VARIABLES:  # slack_sdk ignores NO_PROXY: no proxy may stand between us and 127.0.0.1
        monkeypatch.delenv(name, raising=False)
    stand_in = SlackStandIn()
    await stand_in.start()
    yield stand_in
    await stand_in.aclose()
    # Every test's calls, checked against slack_sdk's method signatures: a new call cannot drift.
    assert stand_in.refused_calls() == []
