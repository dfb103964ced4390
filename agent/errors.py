"""The one exception tree of agentbot.

AgentbotError                  root; `user_message` is safe to show in chat
├── ConfigError                a config file is wrong; names the file, line and field
├── InputError                 the user's message cannot be handled as sent
├── StorageError               the database failed or is busy
│   ├── VersionConflict        optimistic lock lost (or a task number taken); the router retries
│   ├── AlreadyCommitted       another worker already committed this channel event's turn
│   └── SchemaBehind           the database lacks migrations this version needs
├── ProviderError              an LLM provider failed (translated inside its adapter)
│   ├── ProviderAuthError      retryable=False
│   ├── ProviderRateLimited    retryable=True, carries retry_after
│   ├── ProviderUnavailable    5xx / overloaded, retryable=True
│   ├── ProviderTimeout        retryable=True
│   ├── ProviderConnectionError retryable=True
│   ├── ProviderBadRequest     retryable=False
│   └── ProviderOutputInvalid  the model answered, but not in the shape asked for
├── DataSourceError            business data could not be read (an endpoint down, a bad file)
├── RecordingMissing           a replayed eval asked for an LLM response nobody recorded
├── ReferenceCollision         a generated reference (ticket, refund, report) is another conversation's
├── TurnDeadline               a turn ran past its overall deadline (a hung provider or tool)
└── ToolError                  a tool could not run
    ├── ToolNotAllowed         the agent may not use this tool
    ├── ToolArgumentsInvalid   arguments failed the tool's schema
    └── ToolTimeout            the tool exceeded its time limit
"""

from __future__ import annotations

from typing import Any

from agent.redaction import redact_text


class AgentbotError(Exception):
    """Root of every error agentbot raises on purpose."""

    user_message = "Something went wrong. Please try again."


class ConfigError(AgentbotError):
    """A configuration file is invalid. Raised at startup, never mid-conversation."""

    def __init__(self, file: str, problem: str, *, line: int | None = None, field: str = ""):
        self.file, self.problem, self.line, self.field = file, problem, line, field
        where = file + (f", line {line}" if line else "")
        what = f"{field}: {problem}" if field else problem
        super().__init__(f"{where}: {what}")


class InputError(AgentbotError):
    """The user's message cannot be processed as sent (empty, too long)."""

    def __init__(self, user_message: str):
        self.user_message = user_message
        super().__init__(user_message)


class StorageError(AgentbotError):
    user_message = "I couldn't save our conversation just now. Please try again in a moment."
    # What a channel says (once per event) when a stored event's turn could not be saved: the
    # event stays in the inbox and is answered when the database is back.
    retry_notice = "I'm having trouble saving right now; I'll answer as soon as I can."


class VersionConflict(StorageError):
    """Another worker saved this session first."""

    def __init__(self, session_id: str, expected_version: int):
        self.session_id, self.expected_version = session_id, expected_version
        super().__init__(f"session {session_id!r} changed since version {expected_version}")


class SchemaBehind(StorageError):
    """The database's schema revision is older than this agentbot's; `agentbot db upgrade` fixes it."""

    def __init__(self, current: str | None, head: str):
        self.current, self.head = current, head
        at = f"at revision {current}" if current else "not initialised"
        super().__init__(f"the database schema is {at}, this agentbot needs {head}: run `agentbot db upgrade`")


class AlreadyCommitted(StorageError):
    """A channel event's turn was committed by another worker (its lease had expired): this
    attempt's work is dropped, nothing of it is shown."""

    def __init__(self, event_key: str):
        self.event_key = event_key
        super().__init__(f"event {event_key!r} was already answered")


class ReferenceCollision(AgentbotError):
    """A side effect's generated id is already taken by another conversation's row. The turn fails
    loudly (logged, the user told) instead of the row being skipped; retrying would collide again."""


class TurnDeadline(AgentbotError):
    """The turn's understanding and acting took longer than `settings.turn_deadline_seconds`."""


class ProviderError(AgentbotError):
    retryable = False
    user_message = "I'm having trouble processing your request. Please try again."

    def __init__(self, message: str, *, status: int | None = None):
        self.status = status
        # Filled in by the retry layer: how many attempts were made and the sleeps between them.
        self.attempts = 1
        self.retry_delays: list[float] = []
        # Providers echo requests (and sometimes the key) in error bodies; these messages are stored.
        super().__init__(redact_text(message))

    @property
    def kind(self) -> str:
        """A stable short name for telemetry: auth, rate_limited, unavailable, ..."""
        return _KINDS.get(type(self).__name__, "provider_error")


class ProviderAuthError(ProviderError):
    pass


class ProviderRateLimited(ProviderError):
    retryable = True
    user_message = "I'm receiving too many requests. Please wait a moment."

    def __init__(self, message: str, *, status: int | None = 429, retry_after: float | None = None):
        self.retry_after = retry_after
        super().__init__(message, status=status)


class ProviderUnavailable(ProviderError):
    retryable = True

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None):
        self.retry_after = retry_after  # some 503/529 answers say when to come back
        super().__init__(message, status=status)


class ProviderTimeout(ProviderError):
    retryable = True


class ProviderConnectionError(ProviderError):
    retryable = True


class ProviderBadRequest(ProviderError):
    pass


class DataSourceError(AgentbotError):
    """A data source (e.g. the release-summary endpoint) failed; tools turn this into a ToolError."""


class RecordingMissing(AgentbotError):
    """Replay found no recorded LLM response for this scenario turn; it never calls out instead."""


class ProviderOutputInvalid(ProviderError):
    """The model answered, but not with the JSON or tool call it was asked for."""


_KINDS = {
    "ProviderAuthError": "auth",
    "ProviderRateLimited": "rate_limited",
    "ProviderUnavailable": "unavailable",
    "ProviderTimeout": "timeout",
    "ProviderConnectionError": "connection",
    "ProviderBadRequest": "bad_request",
    "ProviderOutputInvalid": "output_invalid",
}


class ToolError(AgentbotError):
    user_message = "That didn't work on my side. Please try again, or ask for a human."

    def __init__(self, tool: str, message: str, *, code: str = "tool_failed", data: dict[str, Any] | None = None):
        # `data`: what the answer may say about the failure (the releases nearest an unknown one).
        self.tool, self.code, self.data = tool, code, data
        super().__init__(f"{tool}: {message}")


class ToolNotAllowed(ToolError):
    def __init__(self, tool: str, agent: str):
        super().__init__(tool, f"agent {agent!r} may not use this tool", code="not_allowed")


class ToolArgumentsInvalid(ToolError):
    def __init__(self, tool: str, message: str):
        super().__init__(tool, message, code="invalid_arguments")


class ToolTimeout(ToolError):
    def __init__(self, tool: str, seconds: float):
        super().__init__(tool, f"timed out after {seconds:g}s", code="timeout")
