"""Record and replay LLM responses for evaluation runs in llm mode.

`RecordingProvider(inner, path)` passes every call to the real provider and stores the response
under `suite/scenario/turn/call` (the eval runner says which turn is running). `ReplayProvider(path)`
answers from such a file and never calls out: a call nobody recorded raises RecordingMissing
naming the key, so a replayed run cannot silently drift into a live one.

The file also keeps the recorded run's id and start: the eval runner names its sessions after the
id, so the ticket, handoff and refund ids the tools derive from them come out the same in the
replay, and a replay runs its clock from the recorded start, so the dates tools write (a refund's
day) match too. The recorded answers that quote them are grounded again (`--replay` reproduces
the recorded scores).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from adapters.llm.base import Priced
from agent.domain.types import utcnow
from agent.errors import RecordingMissing
from agent.llm.models import LLMCapabilities, LLMRequest, LLMResponse
from agent.llm.provider import LLMProvider

FORMAT = 1


def _key(request: LLMRequest) -> str:
    """The call's place in its run: the turn's interaction (named by run, scenario and turn in an
    eval) and the call's number in it."""
    if request.call_key is None:
        raise RecordingMissing("record/replay only works inside an eval run (no scenario turn is running)")
    return request.call_key


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RecordingMissing(f"{path} is not an agentbot recording (format {FORMAT})")
    return data


def _load(path: Path) -> dict[str, Any]:
    return dict(_read(path).get("responses", {}))


@dataclass(frozen=True)
class RecordedRun:
    """What a replay needs to be the recorded run again: its sessions' names and its clock."""

    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    started_at: datetime = field(default_factory=utcnow)


def recorded_run(path: str | Path) -> RecordedRun | None:
    """The run a recording was made in (None for a file made before runs were kept)."""
    data = _read(Path(path))
    if not data.get("run_id"):
        return None
    started = data.get("started_at")
    return RecordedRun(str(data["run_id"]), datetime.fromisoformat(started) if started else utcnow())


class RecordingProvider:
    """Calls `inner` and records each response; the file is rewritten after every call.

    Args:
        inner: the live provider.
        path: the recording file (JSON); existing entries are kept, re-recorded keys replaced.
    """

    def __init__(self, inner: LLMProvider, path: str | Path, run: RecordedRun | None = None):
        self.inner, self.path, self.run = inner, Path(path), run or RecordedRun()
        self.responses = _load(self.path)
        self._lock = asyncio.Lock()

    def __getattr__(self, name: str) -> Any:
        # capabilities, estimate_tokens and aclose are the recorded provider's own.
        return getattr(self.inner, name)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        key = _key(request)
        response = await self.inner.generate(request)
        async with self._lock:
            self.responses[key] = {
                "request": {"messages": request.messages, "tools": [t.get("name") for t in request.tools or []]},
                "response": response.model_dump(mode="json"),
            }
            data = {
                "format": FORMAT,
                "run_id": self.run.run_id,
                "started_at": self.run.started_at.isoformat(),
                "responses": self.responses,
            }
            body = json.dumps(data, indent=1, default=str)
            await asyncio.to_thread(self._write, body)
        return response

    def _write(self, body: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(body, encoding="utf-8")
        tmp.replace(self.path)

    def get_cost(self, tokens_in: int, tokens_out: int) -> float:
        return self.inner.get_cost(tokens_in, tokens_out)


class ReplayProvider(Priced):
    """Answers from a recording; a missing entry fails loudly instead of calling a live provider.

    Args:
        path: a file written by RecordingProvider.
    """

    capabilities = LLMCapabilities()
    model = ""  # no price: a replay costs nothing
    prices: dict = {}

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not self.path.exists():
            raise RecordingMissing(f"no recording at {self.path}; record one first with --record")
        self.responses = _load(self.path)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        key = _key(request)
        entry = self.responses.get(key)
        if entry is None:
            raise RecordingMissing(
                f"no recorded LLM response for {key} in {self.path}; the scenario changed since it was "
                "recorded. Record again (agentbot eval --record) rather than calling a live provider."
            )
        return LLMResponse.model_validate(entry["response"])
