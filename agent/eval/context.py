"""Which scenario turn is running, for providers that record or replay LLM responses by turn."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class TurnKey:
    suite: str
    scenario: str
    turn: int
    calls: int = 0

    def next_call(self) -> str:
        """The key of the next provider call in this turn: `suite/scenario/turn/call`."""
        self.calls += 1
        return f"{self.suite}/{self.scenario}/{self.turn}/{self.calls}"


_current: ContextVar[TurnKey | None] = ContextVar("agentbot_eval_turn", default=None)


def current_turn_key() -> TurnKey | None:
    return _current.get()


@contextmanager
def eval_turn(suite: str, scenario: str, turn: int) -> Iterator[TurnKey]:
    key = TurnKey(suite, scenario, turn)
    token = _current.set(key)
    try:
        yield key
    finally:
        _current.reset(token)
