"""The HTTP release source through the real aiohttp client against a stand-in service on 127.0.0.1."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from adapters.data.releases import HTTPReleaseSource, JSONReleaseSource
from agent.errors import DataSourceError
from bots.app import build_app
from tests.helpers import REPO, say

RELEASES = json.loads((REPO / "data" / "releases.json").read_text())


@pytest.fixture
async def service() -> AsyncIterator[tuple[str, list[str]]]:
    """GET /releases/{id}: the shipped demo data; 5.0.0 answers 500, 6.0.0 answers a non-JSON body."""
    seen: list[str] = []

    async def release(request: web.Request) -> web.Response:
        rid = request.match_info["rid"]
        seen.append(rid)
        if rid == "5.0.0":
            return web.Response(status=500, text="boom")
        if rid == "6.0.0":
            return web.Response(text="<html>maintenance</html>")
        if rid not in RELEASES:
            return web.json_response({"error": "not found"}, status=404)
        return web.json_response(RELEASES[rid])

    app = web.Application()
    app.router.add_get("/releases/{rid}", release)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield f"http://127.0.0.1:{port}", seen
    await runner.cleanup()


async def test_source_reads_found_missing_and_failing(service: tuple[str, list[str]]) -> None:
    url, _ = service
    source = HTTPReleaseSource(url)
    assert (await source.get_release("2.4.1"))["version"] == "v2.4.1"  # type: ignore[index]
    assert await source.get_release("0.0.1") is None
    with pytest.raises(DataSourceError, match="HTTP 500"):
        await source.get_release("5.0.0")
    with pytest.raises(DataSourceError, match="not JSON"):
        await source.get_release("6.0.0")


async def test_unreachable_service_is_a_data_source_error() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DataSourceError, match="unreachable"):
        await HTTPReleaseSource(f"http://127.0.0.1:{port}", timeout=2).get_release("2.4.1")


async def test_the_agent_assesses_over_http(service: tuple[str, list[str]], db_url: str) -> None:
    url, seen = service
    env = {"AGENTBOT_RELEASES_URL": url}
    async with build_app(REPO / "config", REPO / "data", db_url, env=env) as app:
        router = app.router
        response, _ = await say(router, "how risky is v2.4.0?")
    assert seen == ["2.4.0"]
    assert "MEDIUM risk" in response.text


async def test_a_failing_summary_tool_tells_the_user_and_files_nothing(
    service: tuple[str, list[str]], db_url: str
) -> None:
    url, _ = service
    async with build_app(REPO / "config", REPO / "data", db_url, releases=HTTPReleaseSource(url)) as app:
        router = app.router
        response, delivered = await say(router, "risk report for 5.0.0")
    assert [r.tool for r in response.tool_results] == ["get_release_summary"]
    assert response.tool_results[0].error_code == "source_unavailable"
    assert "couldn't reach the release summary service" in response.text
    assert response.alerts == [] and response.active_goal is None
    assert [m.kind for m in delivered] == ["pre", "error"]


async def test_json_source_reports_a_broken_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "releases.json"
    path.write_text("{not json")
    with pytest.raises(DataSourceError, match="not valid JSON"):
        await JSONReleaseSource(path).get_release("2.4.1")
