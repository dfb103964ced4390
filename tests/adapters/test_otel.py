"""OpenTelemetry: a trace file per conversation whose turn spans carry the telemetry rows' ids;
provider and tool spans; metrics; redaction; sampling; OTLP export to a stand-in collector on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from adapters.storage.sql import SqlStore
from adapters.telemetry.files import read_trace
from adapters.telemetry.otel import OTelTracer
from adapters.telemetry.spans import RedactedExporter
from adapters.telemetry.traced import TracedProvider
from agent.config.schema import LLMSettings
from agent.context.log import Turn
from agent.context.tracing import observed_turn
from agent.conversation.session import SessionState
from agent.errors import ProviderRateLimited
from agent.llm.calls import LLMCalls
from agent.llm.models import LLMCapabilities, LLMRequest, LLMResponse
from agent.redaction import Redactor
from bots.app import build_app
from tests.helpers import REPO, interaction, say


class ScriptedProvider:
    """Answers from a script; an exception in the script is raised instead."""

    def __init__(self, script: list[LLMResponse | Exception]):
        self.script = list(script)
        self.calls: list[list[dict[str, Any]]] = []
        self.capabilities = LLMCapabilities()

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.calls.append(request.messages)
        item = self.script.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    def get_cost(self, tokens_in: int, tokens_out: int) -> float:
        return 0.0

    async def aclose(self) -> None:
        pass


def trace_files(directory: Path) -> list[Path]:
    return [p for p in directory.glob("*.jsonl") if p.name != "metrics.jsonl"]


def metric_points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    data = reader.get_metrics_data()
    for rm in data.resource_metrics if data else []:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                out.setdefault(m.name, []).extend(m.data.data_points)
    return out


async def test_trace_file_holds_each_turn_with_its_stages_and_the_telemetry_rows_ids(tmp_path: Path) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        router = app.router
        await say(router, "Where's order O-12345?")
    store = SqlStore(db_url)
    rows = await store.fetch("SELECT stage, level, trace_id, span_id FROM telemetry_events ORDER BY id")
    messages = await store.fetch("SELECT trace_id FROM messages")
    await store.aclose()
    trace_id = rows[0].trace_id
    assert trace_id and len(trace_id) == 32
    assert {r.trace_id for r in rows} == {trace_id} == {m.trace_id for m in messages}
    spans_written = read_trace(tmp_path / "traces" / f"{trace_id}.jsonl")  # beside the database
    [root] = [s for s in spans_written if s["parent_span_id"] is None]
    assert root["name"] == "turn" and root["attributes"]["agentbot.session_id"] == "s-1"
    assert root["trace_id"] == trace_id and {r.span_id for r in rows} == {root["span_id"]}
    # The turn's stages, in the order the rows were written, each with its level and a time span in the turn's.
    assert [(s["name"], s["level"]) for s in root["stages"]] == [(r.stage, r.level) for r in rows]
    assert all(root["start_ns"] <= s["start_ns"] <= s["end_ns"] <= root["end_ns"] for s in root["stages"])
    [tool] = [s for s in spans_written if s["name"] == "tool check_order_status"]
    assert tool["attributes"]["agentbot.tool.success"] is True
    assert tool["parent_span_id"] == root["span_id"] and tool["trace_id"] == trace_id


async def test_a_conversation_is_one_trace_in_one_file_across_restarts(tmp_path: Path) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        await say(app.router, "I want to check my order", session="thread-1")
        await say(app.router, "where is O-99999", session="thread-2")
    async with build_app(REPO / "config", REPO / "data", db_url) as app:  # a new process, same thread
        response, _ = await say(app.router, "O-12345", session="thread-1")
    assert "shipped" in response.text
    store = SqlStore(db_url)
    rows = await store.fetch("SELECT session_id, interaction_id, trace_id FROM telemetry_events ORDER BY id")
    await store.aclose()
    by_session = {r.session_id: r.trace_id for r in rows}
    assert len({r.trace_id for r in rows if r.session_id == "thread-1"}) == 1
    assert by_session["thread-1"] != by_session["thread-2"]
    assert sorted(p.name for p in trace_files(tmp_path / "traces")) == sorted(f"{t}.jsonl" for t in by_session.values())
    spans = read_trace(tmp_path / "traces" / f"{by_session['thread-1']}.jsonl")
    turns = [s for s in spans if s["name"] == "turn"]
    assert len(turns) == 2  # both turns, the second appended by the restarted app
    asked = list(dict.fromkeys(r.interaction_id for r in rows if r.session_id == "thread-1"))
    assert [t["attributes"]["agentbot.interaction_id"] for t in turns] == asked
    assert {s["trace_id"] for s in spans} == {by_session["thread-1"]}


async def test_sampling_keeps_or_drops_whole_conversations(tmp_path: Path) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    env = {"AGENTBOT_TRACE_SAMPLE_RATE": "0"}
    async with build_app(REPO / "config", REPO / "data", db_url, env=env) as app:
        response, _ = await say(app.router, "O-12345")
    assert "shipped" in response.text
    store = SqlStore(db_url)
    rows = await store.fetch("SELECT trace_id, span_id FROM telemetry_events")
    await store.aclose()
    assert rows and all(r.trace_id is None and r.span_id is None for r in rows)  # nothing points at no trace
    assert not trace_files(tmp_path / "traces")


async def test_tracing_can_be_turned_off(tmp_path: Path) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    async with build_app(REPO / "config", REPO / "data", db_url, env={"AGENTBOT_TRACING": "off"}) as app:
        router = app.router
        response, _ = await say(router, "O-12345")
    assert "shipped" in response.text
    assert not (tmp_path / "traces").exists()


async def test_spans_are_redacted_like_telemetry() -> None:
    exporter = InMemorySpanExporter()
    tracer = OTelTracer(RedactedExporter(exporter))
    i = interaction("my email is a@b.example")
    with observed_turn(tracer, i) as trace:
        t = Turn(i, "s-1", None, Redactor({"email"}), trace)
        event = t.emit("intent_classified", {"params": {"email": "a@b.example", "order_id": "O-1"}})
    await tracer.aclose()
    [span] = exporter.get_finished_spans()
    [stage] = [e for e in span.events if e.name == "intent_classified"]  # a stage is an event of its turn
    assert stage.attributes["agentbot.payload.params.email"] == "***"  # type: ignore[index]
    assert stage.attributes["agentbot.payload.params.order_id"] == "O-1"  # type: ignore[index]
    assert "agentbot.stages" not in (span.attributes or {})
    assert event.payload["params"]["email"] == "***"
    assert event.span_id == format(span.context.span_id, "016x")  # type: ignore[union-attr]


async def test_a_known_secret_never_reaches_an_exporter_whatever_its_shape() -> None:
    key = "tea.kettle!42+moss"  # no pattern knows this shape; only its value gives it away
    exporter = InMemorySpanExporter()
    tracer = OTelTracer(RedactedExporter(exporter, Redactor(secrets=[key])))
    with tracer.tracer.start_as_current_span("llm.generate") as span:
        span.set_status(Status(StatusCode.ERROR, f"Incorrect API key provided: {key}"))
        span.set_attribute("error.message", f"401 {key}")
        span.add_event("exception", {"exception.message": f"echo {key}"})
    i = interaction("hello")
    with pytest.raises(RuntimeError), observed_turn(tracer, i):
        raise RuntimeError(f"provider said {key}")
    await tracer.aclose()
    spans = exporter.get_finished_spans()
    assert {s.name for s in spans} >= {"llm.generate", "turn"}
    text = repr(
        [(s.status.description, dict(s.attributes or {}), [dict(e.attributes or {}) for e in s.events]) for s in spans]
    )
    assert key not in text and "[secret]" in text


async def test_provider_calls_become_spans_metrics_and_stage_usage() -> None:
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracer = OTelTracer(RedactedExporter(exporter), [reader])
    scripted = ScriptedProvider(
        [
            ProviderRateLimited("slow down", retry_after=1),
            LLMResponse(content="ok", model="m-1", tokens_in=120, tokens_out=30, cost=0.0021, latency_ms=12.5),
        ]
    )
    metered = LLMCalls(TracedProvider(scripted, tracer, "scripted", context_window=1000), LLMSettings(temperature=0.3))
    state = SessionState(session_id="s-1")
    i = interaction("hello")
    with observed_turn(tracer, i) as trace:
        t = Turn(i, "s-1", None, Redactor(), trace)
        t.emit("received")
        with pytest.raises(ProviderRateLimited):
            await metered.generate("classify", state, LLMRequest([{"role": "user", "content": "hi"}]), t)
        tracer.record_retry(1, 0.5, ProviderRateLimited("slow down"))
        t.decided.llm_down = None  # a provider that failed is skipped for the rest of its turn only
        await metered.generate("classify", state, LLMRequest([{"role": "user", "content": "hi"}], max_tokens=50), t)
        classified = t.emit("intent_classified", {"intent_id": None})
        later = t.emit("response_generated")
    tracer.flush()
    # Each call's usage lands on the stage that spent it (its llm_call event), once.
    spent = [e.payload["llm"] for e in t.events if "llm" in e.payload]
    llm = {k: round(sum(u[k] for u in spent), 8) for k in ("calls", "errors", "tokens_in", "tokens_out", "cost")}
    assert (llm["calls"], llm["errors"], llm["tokens_in"], llm["tokens_out"], llm["cost"]) == (2, 1, 120, 30, 0.0021)
    assert "llm" not in classified.payload
    assert "llm" not in later.payload  # usage lands on the stage that spent it, once
    spans = exporter.get_finished_spans()
    root = next(s for s in spans if s.name == "turn")
    calls = [s for s in spans if s.name == "llm.generate"]
    assert [c.parent.span_id for c in calls] == [root.context.span_id] * 2  # type: ignore[union-attr]
    failed, ok = calls
    assert failed.attributes["error.type"] == "ProviderRateLimited"  # type: ignore[index]
    assert failed.attributes["agentbot.llm.retryable"] is True  # type: ignore[index]
    assert ok.attributes["gen_ai.request.model"] == "m-1"  # type: ignore[index]
    assert ok.attributes["gen_ai.request.temperature"] == 0.3  # type: ignore[index]
    assert ok.attributes["gen_ai.usage.input_tokens"] == 120  # type: ignore[index]
    assert ok.attributes["agentbot.llm.cost"] == 0.0021  # type: ignore[index]
    assert ok.attributes["agentbot.llm.context_utilization"] == 0.12  # type: ignore[index]
    points = metric_points(reader)
    assert sum(p.value for p in points["agentbot.llm.tokens"]) == 150
    assert [dict(p.attributes)["error.type"] for p in points["agentbot.llm.errors"]] == ["ProviderRateLimited"]
    assert sum(p.value for p in points["agentbot.llm.retries"]) == 1
    assert sum(p.count for p in points["agentbot.llm.duration"]) == 2
    assert sum(p.value for p in points["agentbot.llm.cost"]) == pytest.approx(0.0021)
    await tracer.aclose()


async def test_tool_metrics_count_success_and_failure(tmp_path: Path) -> None:
    reader, exporter = InMemoryMetricReader(), InMemorySpanExporter()
    tracer = OTelTracer(RedactedExporter(exporter), [reader])
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    async with build_app(REPO / "config", REPO / "data", db_url, tracer=tracer) as app:
        router = app.router
        await say(router, "O-12345")
        # An unknown order is refused by policy before any tool runs; an unknown release is a tool failure.
        await say(router, "how risky is release 9.9.9", session="s-2")
        tracer.flush()  # tool metrics are counted by the trace writer, off the turn's path
        points = metric_points(reader)
    calls = {(dict(p.attributes)["agentbot.tool.success"]): p.value for p in points["agentbot.tool.calls"]}
    assert calls == {True: 1, False: 1}
    assert sum(p.count for p in points["agentbot.tool.duration"]) == 2
    tools = {s.name: s for s in exporter.get_finished_spans() if s.name.startswith("tool ")}
    failed = tools["tool get_release_summary"]
    assert failed.status.status_code == StatusCode.ERROR and failed.attributes["error.type"] == "not_found"  # type: ignore[index]
    turns = {s.context.span_id: s for s in exporter.get_finished_spans() if s.name == "turn"}  # type: ignore[union-attr]
    assert all(t.parent is not None and t.parent.span_id in turns for t in tools.values())


@pytest.fixture
async def collector() -> AsyncIterator[tuple[str, list[tuple[str, bytes]]]]:
    received: list[tuple[str, bytes]] = []

    async def ingest(request: web.Request) -> web.Response:
        received.append((request.path, await request.read()))
        return web.Response(status=200, content_type="application/x-protobuf", body=b"")

    app = web.Application()
    app.router.add_post("/v1/traces", ingest)
    app.router.add_post("/v1/metrics", ingest)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}", received
    await runner.cleanup()


async def test_otlp_export_when_the_endpoint_is_set(
    collector: tuple[str, list[tuple[str, bytes]]], tmp_path: Path
) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    url, received = collector
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": url}
    async with build_app(REPO / "config", REPO / "data", db_url, env=env) as app:
        router = app.router
        await say(router, "O-12345")
    assert not (tmp_path / "traces").exists()  # OTLP instead of files
    spans = []
    for path, body in received:
        if path == "/v1/traces":
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            spans += [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert {"turn", "tool check_order_status"} <= {s.name for s in spans}
    [turn] = [s for s in spans if s.name == "turn"]
    assert {"received", "tool_execute", "memory_updated"} <= {e.name for e in turn.events}


def test_the_core_never_imports_opentelemetry() -> None:
    import subprocess
    import sys

    code = (
        "import sys, pkgutil, importlib, agent\n"
        "for m in pkgutil.walk_packages(agent.__path__, 'agent.'): importlib.import_module(m.name)\n"
        "print(any(m.startswith('opentelemetry') for m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_every_retry_attempt_is_a_span_with_its_error_and_backoff_and_counts_as_a_retry() -> None:
    from adapters.llm.retry import RetryingProvider
    from agent.config.schema import RetrySettings
    from agent.errors import ProviderUnavailable

    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracer = OTelTracer(RedactedExporter(exporter), [reader])
    scripted = ScriptedProvider(
        [
            ProviderUnavailable("HTTP 500", status=500),
            ProviderRateLimited("slow down", retry_after=0.01),
            LLMResponse(content="ok", model="m-1", tokens_in=10, tokens_out=5),
        ]
    )
    policy = RetrySettings(max_attempts=3, base_delay=0.01, max_delay=0.02, retry_after_cap=1)
    retrying = RetryingProvider(scripted, policy, rng=lambda: 0.5, observer=tracer)  # type: ignore[arg-type]
    metered = LLMCalls(TracedProvider(retrying, tracer, "scripted"), LLMSettings())
    state = SessionState(session_id="s-1")
    i = interaction("hello")
    with observed_turn(tracer, i) as trace:
        t = Turn(i, "s-1", None, Redactor(), trace)
        response = await metered.generate("classify", state, LLMRequest([{"role": "user", "content": "hi"}]), t)
    tracer.flush()
    assert response.attempts == 3 and t.usage.requests == 3 and t.usage.calls == 1
    spans = exporter.get_finished_spans()
    call = next(s for s in spans if s.name == "llm.generate")
    attempts = sorted((s for s in spans if s.name == "llm.attempt"), key=lambda s: s.attributes["retry.attempt"])  # type: ignore[index]
    assert [a.parent.span_id for a in attempts] == [call.context.span_id] * 3  # type: ignore[union-attr]
    assert [a.attributes.get("error.type") for a in attempts] == ["ProviderUnavailable", "ProviderRateLimited", None]
    assert [a.attributes.get("retry.backoff_seconds") for a in attempts] == [0.005, 0.01, None]
    retries = metric_points(reader)["agentbot.llm.retries"]
    assert sorted((dict(p.attributes)["error.type"], p.value) for p in retries) == [
        ("ProviderRateLimited", 1),
        ("ProviderUnavailable", 1),
    ]
