"""A stand-in for Slack's Socket Mode on 127.0.0.1: `apps.connections.open` and the WebSocket protocol.

The real `slack_sdk` Socket Mode client (through bolt's `AsyncSocketModeHandler`) asks the Web API
stand-in for a URL, connects here, gets `hello`, then receives envelopes (`events_api`,
`interactive`, `slash_commands`) and acks each by its `envelope_id`. Like Slack, an envelope that
is not acked before its connection goes away is delivered again on the next connection with
`retry_attempt` raised, and `disconnect` (reason `refresh_requested`) makes the client open a new
connection.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any, Literal

from aiohttp import WSMsgType, web
from pydantic import BaseModel

from tests.standins.slack_standin import SlackStandIn

EnvelopeType = Literal["events_api", "interactive", "slash_commands"]


class Envelope(BaseModel):
    envelope_id: str
    type: EnvelopeType
    payload: dict[str, Any]
    retry_attempt: int = 0
    deliveries: int = 0  # times it went out on a connection
    acked: bool = False
    ack_payload: dict[str, Any] | None = None  # what the app answered with (a command's text)


class SocketModeStandIn:
    """Serves Socket Mode connections; `envelopes` holds every envelope sent, `connections` counts opens.

    Args:
        api: the Web API stand-in; its `apps.connections.open` hands out this server's URL.
    """

    def __init__(self, api: SlackStandIn):
        self.api = api
        self.envelopes: list[Envelope] = []
        self.connections = 0  # WebSocket connections accepted
        self.sent_to_socket: list[str] = []  # envelope ids in the order they went out (retries included)
        self._ids = itertools.count(1)
        self._current: web.WebSocketResponse | None = None
        self._connected = asyncio.Event()
        self._acked = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        app = web.Application()
        app.router.add_get("/link", self._socket)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, host, port).start()
        bound = self._runner.addresses[0]
        self.url = f"ws://{bound[0]}:{bound[1]}/link"
        self.api.answers["apps.connections.open"] = self._open
        return self.url

    async def aclose(self) -> None:
        if self._current is not None:
            await self._current.close()
        if self._runner is not None:
            await self._runner.cleanup()

    def _open(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": f"{self.url}?ticket=t{next(self._ids)}"}

    # Test controls

    async def connected(self, count: int = 1, within: float = 10.0) -> None:
        """Wait until `count` connections were opened in all and one is open now."""
        async with asyncio.timeout(within):
            while self.connections < count or self._current is None or self._current.closed:
                self._connected.clear()
                await self._connected.wait()

    async def send(self, type: EnvelopeType, payload: dict[str, Any]) -> Envelope:
        """Put an envelope on the open connection (retried on the next one until acked)."""
        envelope = Envelope(envelope_id=f"env-{next(self._ids)}", type=type, payload=payload)
        self.envelopes.append(envelope)
        await self._push(envelope)
        return envelope

    async def deliver(self, type: EnvelopeType, payload: dict[str, Any], within: float = 10.0) -> Envelope:
        """Send and wait for the app's ack, as Slack does before it counts an event delivered."""
        envelope = await self.send(type, payload)
        await self.acked(envelope, within)
        return envelope

    async def acked(self, envelope: Envelope, within: float = 10.0) -> None:
        async with asyncio.timeout(within):
            while not envelope.acked:
                self._acked.clear()
                await self._acked.wait()

    async def disconnect(self, reason: str = "refresh_requested") -> None:
        """Ask the client to reconnect, as Slack does every few hours and before maintenance."""
        if self._current is not None and not self._current.closed:
            message = {"type": "disconnect", "reason": reason, "debug_info": {"host": "standin"}}
            await self._current.send_str(json.dumps(message))

    async def drop(self) -> None:
        """Close the connection from Slack's side without a warning (a network failure): acks still
        on their way over it are lost, so what it carried unacked is delivered again."""
        ws, self._current = self._current, None
        if ws is not None:
            await ws.close()

    # Serving

    async def _push(self, envelope: Envelope) -> None:
        if self._current is None or self._current.closed:
            return  # sent when the next connection opens
        message = envelope.model_dump(include={"envelope_id", "type", "payload", "retry_attempt"})
        message["accepts_response_payload"] = envelope.type != "events_api"
        if envelope.retry_attempt:
            message["retry_reason"] = "timeout"
        self.sent_to_socket.append(envelope.envelope_id)
        envelope.deliveries += 1
        await self._current.send_str(json.dumps(message))

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.connections += 1
        self._current = ws
        hello = {
            "type": "hello",
            "num_connections": 1,
            "debug_info": {"host": "standin", "approximate_connection_time": 18060},
            "connection_info": {"app_id": "A0AGENTBOT"},
        }
        await ws.send_str(json.dumps(hello))
        for envelope in self.envelopes:  # unacked: sent now, a retry if an earlier connection carried it
            if not envelope.acked:
                envelope.retry_attempt += 1 if envelope.deliveries else 0
                await self._push(envelope)
        self._connected.set()
        async for message in ws:
            if message.type == WSMsgType.TEXT and ws is self._current:
                self._ack(json.loads(message.data))
        if self._current is ws:
            self._current = None
        return ws

    def _ack(self, message: dict[str, Any]) -> None:
        for envelope in self.envelopes:
            if envelope.envelope_id == message.get("envelope_id") and not envelope.acked:
                envelope.acked = True
                envelope.ack_payload = message.get("payload")
        self._acked.set()
