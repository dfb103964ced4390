"""A stand-in LLM server on 127.0.0.1 speaking the OpenAI and Anthropic wire formats.

It answers as a competent model would, from the request alone (the policy model in
tests/standins/policy_model.py): it classifies against the intents offered, calls the tools the
request needs with arguments from the known details, and answers from the tool results. Tests
make it misbehave on demand: `queue` scripted `Reply`s for one request each (429 with
Retry-After, 500, 529, 401, a slow answer, malformed tool arguments), set `always` to fail every
request (a dead or hung provider), or set `misbehave` to one of MISBEHAVIOURS. Run it alone for
manual checks: `python -m tests.standins.llm_server --port 8765`.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.standins import policy_agent, policy_model


@dataclass
class Reply:
    """One scripted HTTP answer: an error status, a delay, or a decision in the server's wire format."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    text: str | None = None
    tool_calls: list[tuple[str, Any]] = field(default_factory=list)  # args: dict, or raw str (openai)


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float


MISBEHAVIOURS = ("invent_facts", "wrong_tool", "malformed_args", "endless_tools", "not_json")


def brain(
    system: str,
    user: str,
    tools: list[dict[str, Any]],
    results: list[dict[str, Any]],
    structured: bool,
    called: list[str],
    misbehave: str | None = None,
    history: list[str] | None = None,
) -> Reply:
    """What the policy model answers to this request (tests/standins/policy_model.py classifies,
    policy_agent.py acts), or the misbehaviour asked for."""
    if structured:
        if misbehave == "not_json":
            return Reply(text="I think the customer wants an order status.")
        return Reply(text=json.dumps(policy_model.classify(system, user)))
    decision = policy_agent.act(system, user, tools, results, called, history)
    names = [t["name"] for t in tools]
    if misbehave == "endless_tools":
        # The same first step again and again, whatever the results say.
        return Reply(
            tool_calls=policy_agent.act(system, user, tools, [], [], history).tool_calls or decision.tool_calls
        )
    if misbehave == "wrong_tool" and not results:
        return Reply(
            tool_calls=[("delete_task", {"number": 1}) if "delete_task" not in names else ("issue_refund", {})]
        )
    if misbehave == "malformed_args" and decision.tool_calls:
        return Reply(tool_calls=[(decision.tool_calls[0][0], '{"order_id": "O-12')])
    if misbehave == "invent_facts" and decision.text and results:
        return Reply(text=decision.text + " It was delivered on 2025-10-18 and cost $45.00.")
    return Reply(text=decision.text, tool_calls=decision.tool_calls)


class StandInLLM:
    """Serves /v1/chat/completions (OpenAI) and /v1/messages (Anthropic) until `close()`."""

    def __init__(self, port: int = 0):
        self.queue: list[Reply] = []
        self.always: Reply | None = None  # every request answered so (after the queue)
        self.misbehave: str | None = None  # one of MISBEHAVIOURS
        self.seen: list[Seen] = []
        self.usage = (120, 30)  # tokens in, out reported per answer
        self.cached = 0  # of the tokens in, how many the provider's prompt cache served
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                owner.seen.append(
                    Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic())
                )
                anthropic = self.path.endswith("/messages")
                reply = owner.queue.pop(0) if owner.queue else owner.always or owner._think(body, anthropic)
                if reply.delay:
                    time.sleep(reply.delay)
                payload = owner._encode(reply, body, anthropic)
                raw = json.dumps(payload).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(raw)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _think(self, body: dict[str, Any], anthropic: bool) -> Reply:
        system, user = "", ""
        history: list[str] = []  # what the assistant said before this turn
        results: list[dict[str, Any]] = []
        called: list[str] = []
        if anthropic:
            raw = body.get("system") or ""
            system = raw if isinstance(raw, str) else "\n".join(b.get("text", "") for b in raw)
            structured = "tool_choice" in body
            tools = [
                {"name": t["name"], "description": t.get("description", ""), "parameters": t.get("input_schema", {})}
                for t in body.get("tools", [])
                if not structured
            ]
            for m in body.get("messages", []):
                blocks = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
                for b in blocks:
                    if b["type"] == "tool_result":
                        results.append(json.loads(b["content"]))
                    elif b["type"] == "tool_use":
                        called.append(b["name"])
                    elif b["type"] == "text" and m["role"] == "user":
                        user, results, called = b["text"], [], []
                    elif b["type"] == "text":
                        history.append(b["text"])
        else:
            structured = "response_format" in body
            tools = [t["function"] for t in body.get("tools", [])]
            for m in body.get("messages", []):
                if m["role"] == "system":
                    system += (m.get("content") or "") + "\n"
                elif m["role"] == "user":
                    user, results, called = m["content"], [], []
                elif m["role"] == "assistant":
                    called += [c["function"]["name"] for c in m.get("tool_calls") or []]
                    history.append(m.get("content") or "")
                elif m["role"] == "tool":
                    results.append(json.loads(m["content"]))
        return brain(system, user, tools, results, structured, called, self.misbehave, history)

    def _encode(self, r: Reply, body: dict[str, Any], anthropic: bool) -> dict[str, Any]:
        model = body.get("model", "stand-in")
        tokens_in, tokens_out = self.usage
        if r.status >= 400:
            if anthropic:
                kind = {401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}
                return {
                    "type": "error",
                    "error": {"type": kind.get(r.status, "api_error"), "message": r.text or f"HTTP {r.status}"},
                }
            # `text` on an error: the message a provider sends back (some echo the request, even the key).
            return {"error": {"message": r.text or f"HTTP {r.status}", "type": "error", "code": str(r.status)}}
        if anthropic:
            content: list[dict[str, Any]] = [{"type": "text", "text": r.text}] if r.text else []
            if "tool_choice" in body and r.text:
                content = [
                    {
                        "type": "tool_use",
                        "id": "toolu_0",
                        "name": body["tool_choice"]["name"],
                        "input": json.loads(r.text),
                    }
                ]
            content += [
                {"type": "tool_use", "id": f"toolu_{i + 1}", "name": n, "input": a}
                for i, (n, a) in enumerate(r.tool_calls)
            ]
            return {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": "tool_use" if r.tool_calls else "end_turn",
                "stop_sequence": None,
                # Anthropic counts cache reads apart from input_tokens.
                "usage": {
                    "input_tokens": tokens_in - self.cached,
                    "output_tokens": tokens_out,
                    "cache_read_input_tokens": self.cached,
                    "cache_creation_input_tokens": 0,
                },
            }
        message: dict[str, Any] = {"role": "assistant", "content": r.text}
        if r.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{i + 1}",
                    "type": "function",
                    "function": {"name": n, "arguments": a if isinstance(a, str) else json.dumps(a)},
                }
                for i, (n, a) in enumerate(r.tool_calls)
            ]
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if r.tool_calls else "stop"}],
            "usage": {
                "prompt_tokens": tokens_in,
                "completion_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
                "prompt_tokens_details": {"cached_tokens": self.cached},
            },
        }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, default=8765)
    server = StandInLLM(ap.parse_args().port)
    print(f"stand-in LLM on {server.openai_url} (OpenAI) and {server.anthropic_url} (Anthropic)", flush=True)
    try:
        server.thread.join()
    except KeyboardInterrupt:
        server.close()
