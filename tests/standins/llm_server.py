"""A stand-in LLM server on 127.0.0.1 speaking the OpenAI and Anthropic wire formats.

It answers as a small model would (`brain`): it classifies with a JSON object, calls the order
tool when it knows the order ID, and phrases the answer from the tool result. Tests queue
`Reply`s to make it fail (429 with Retry-After, 500, 529, 401), answer slowly, or send malformed
tool arguments. Run it alone for manual checks: `python -m tests.standins.llm_server --port 8765`.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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


ORDER_WORDS = re.compile(r"order|package|parcel|deliver|arriv|ship|track|bought|turn(s|ed)? up|where", re.I)
ORDER_ID = re.compile(r"\bo[-\s]?(\d{4,10})\b|(?<![\d.])(\d{5})(?![\d.])", re.I)


YES = re.compile(r"^(yes|yeah|yep|sure|ok|okay|please)\b", re.I)
NO = re.compile(r"^(no|nope|nah|not now|never ?mind)\b", re.I)
TICKET = re.compile(r"broken|damaged|chipped|ticket|complaint|problem", re.I)
HUMAN = re.compile(r"human|person|someone|somebody|agent|manager", re.I)


def _classify(system: str, user: str) -> dict[str, Any]:
    """The classification a model returns: intent, parameters, slot fill, yes/no."""
    out: dict[str, Any] = {"intent_id": "none", "params": {}, "confidence": 0.9, "fills_slot": False, "reply": "none"}
    offer = re.search(r"yes/no question: .*\(intent (\w+) on yes\)", system)
    if offer and (YES.search(user) or NO.search(user)):
        yes = bool(YES.search(user))
        return out | {"intent_id": offer.group(1) if yes else "none", "reply": "yes" if yes else "no"}
    m = ORDER_ID.search(user)
    order_id = f"O-{m.group(1) or m.group(2)}" if m else None
    waiting = re.search(r"waiting for `(\w+)`", system)
    awaited = waiting.group(1) if waiting else None
    if awaited == "order_id" and order_id:
        return out | {"intent_id": "order_status", "params": {"order_id": order_id}, "fills_slot": True}
    if awaited == "summary" and not ORDER_WORDS.search(user):
        return out | {"intent_id": "create_ticket", "params": {"summary": user}, "fills_slot": True}
    if TICKET.search(user):
        # "open a ticket" names no problem yet; "my headphones arrived broken" is the summary.
        says_more = re.sub(r"\b(i|want|to|open|a|file|create|raise|support|ticket|please)\b", "", user, flags=re.I)
        params = {"summary": user} if len(says_more.split()) >= 2 else {}
        return out | {"intent_id": "create_ticket", "params": params}
    if HUMAN.search(user):
        return out | {"intent_id": "human_handoff"}
    if ORDER_WORDS.search(user) or order_id:
        return out | {"intent_id": "order_status", "params": {"order_id": order_id} if order_id else {}}
    return out | {"confidence": 0.3}


def brain(system: str, user: str, tools: list[str], results: list[dict[str, Any]], structured: bool) -> Reply:
    """What a competent model answers, from the parsed request."""
    if structured:
        return Reply(text=json.dumps(_classify(system, user)))
    details = re.search(r"Known details: (\{.*?\})\.", system)
    known: dict[str, Any] = json.loads(details.group(1)) if details else {}
    if results:
        data = results[-1].get("data") or {}
        if not results[-1].get("success"):
            return Reply(text="I couldn't do that just now. Could you check the details?")
        if "ticket_id" in data:
            return Reply(text=f'I\'ve opened ticket {data["ticket_id"]} about "{known.get("summary", "")}".')
        if "handoff_id" in data:
            return Reply(text=f"A human support agent will join shortly (reference {data['handoff_id']}).")
        status = str(data.get("status", "")).replace("_", " ")
        text = (
            f"Your order {data.get('order_id')} is {status} with {data.get('carrier')} "
            f"(tracking {data.get('tracking')}). ETA: {data.get('eta')}."
        )
        if data.get("delay_reason"):
            text += f" Reason: {data['delay_reason']}."
        if data.get("status") in ("refunded", "partially_refunded"):
            found = re.search(r"Amounts of money are in (\S+?);", system)  # the model follows its prompt
            currency = found[1] if found else "$"
            # A competent model quotes the refund record, not the order total.
            text += f" Refunded {currency}{data.get('refund_amount'):.2f} on {data.get('refunded_at')}."
        return Reply(text=text)
    if "create_ticket" in tools and "support ticket" in system and known.get("summary"):
        return Reply(tool_calls=[("create_ticket", {k: v for k, v in known.items() if k in ("summary", "order_id")})])
    if "escalate_to_human" in tools and "wants a human" in system:
        return Reply(tool_calls=[("escalate_to_human", {})])
    if "check_order_status" in tools and known.get("order_id"):
        return Reply(tool_calls=[("check_order_status", {"order_id": known["order_id"]})])
    return Reply(text="Could you tell me your order ID?")


class StandInLLM:
    """Serves /v1/chat/completions (OpenAI) and /v1/messages (Anthropic) until `close()`."""

    def __init__(self, port: int = 0):
        self.queue: list[Reply] = []
        self.seen: list[Seen] = []
        self.usage = (120, 30)  # tokens in, out reported per answer
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
                reply = owner.queue.pop(0) if owner.queue else owner._think(body, anthropic)
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
        system, user, results = "", "", []
        if anthropic:
            system = body.get("system") or ""
            structured = "tool_choice" in body
            tools = [t["name"] for t in body.get("tools", []) if not structured]
            for m in body.get("messages", []):
                blocks = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
                for b in blocks:
                    if b["type"] == "tool_result":
                        results.append(json.loads(b["content"]))
                    elif b["type"] == "text" and m["role"] == "user":
                        user, results = b["text"], []
        else:
            structured = "response_format" in body
            tools = [t["function"]["name"] for t in body.get("tools", [])]
            for m in body.get("messages", []):
                if m["role"] == "system":
                    system += (m.get("content") or "") + "\n"
                elif m["role"] == "user":
                    user, results = m["content"], []
                elif m["role"] == "tool":
                    results.append(json.loads(m["content"]))
        return brain(system, user, tools, results, structured)

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
                "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
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
