"""Why a command could not start, in one line, and the exit code that says which kind of failure it was.

| code | meaning |
| --- | --- |
| 0 | done |
| 1 | ran, and the result is a failure (eval scenarios failed, `db current` is behind) |
| 2 | configuration: a config file, an environment variable or a flag is wrong |
| 3 | eval: a regression against the baseline |
| 4 | database: URL invalid, unreachable, corrupt, or its schema behind (`agentbot db upgrade`) |
| 5 | platform: Slack or Discord rejected the token, or cannot be reached |
| 6 | a missing extra: `pip install 'agentbot[slack]'` and friends |
"""

from __future__ import annotations

from enum import IntEnum

from pydantic import BaseModel

from agent.errors import ConfigError, RecordingMissing, StorageError


class Exit(IntEnum):
    OK = 0
    FAILED = 1
    CONFIG = 2
    REGRESSION = 3
    DATABASE = 4
    PLATFORM = 5
    MISSING_EXTRA = 6


class CommandFailure(BaseModel):
    code: Exit
    message: str


# Top-level module -> the extra that installs it.
EXTRAS = {
    "slack_bolt": "slack",
    "slack_sdk": "slack",
    "aiohttp": "slack",
    "discord": "discord",
    "yarl": "discord",
    "openai": "openai",
    "anthropic": "anthropic",
    "asyncpg": "postgres",
    "zep_cloud": "zep",
    "httpx": "zep",
}
DATABASE_DRIVERS = {"MySQLdb": "mysql", "psycopg2": "postgresql (use postgresql+asyncpg://)", "pymysql": "mysql"}


PLATFORMS = {"slack": "Slack", "discord": "Discord"}


def explain(error: BaseException, command: str | None = None) -> CommandFailure | None:
    """A one-line explanation for the failures a user can fix; None for bugs (they keep their traceback).

    Args:
        error: what ended the command.
        command: the command that ran (`slack`, `discord`), so a network failure names the platform.
    """
    if isinstance(error, ConfigError):
        return CommandFailure(code=Exit.CONFIG, message=f"configuration error: {error}")
    if isinstance(error, RecordingMissing):
        return CommandFailure(code=Exit.CONFIG, message=str(error))
    if isinstance(error, StorageError):
        return CommandFailure(code=Exit.DATABASE, message=_database(str(error)))
    if isinstance(error, ModuleNotFoundError):
        return _missing(error.name or "")
    return _sqlalchemy(error) or _slack(error) or _network(error, PLATFORMS.get(command or ""))


def _database(problem: str) -> str:
    if "is damaged" in problem:  # already says what to do
        return f"database: {problem}"
    if "file is not a database" in problem or "malformed" in problem:
        return f"database: the SQLite file is corrupt ({problem}); move it away or restore a backup"
    return f"database: {problem}"


def _missing(module: str) -> CommandFailure | None:
    top = module.split(".")[0]
    if top in EXTRAS:
        extra = EXTRAS[top]
        return CommandFailure(
            code=Exit.MISSING_EXTRA, message=f"{top} is not installed: pip install 'agentbot[{extra}]'"
        )
    if top in DATABASE_DRIVERS:
        message = f"database: no driver for {DATABASE_DRIVERS[top]}; agentbot supports sqlite+aiosqlite:// and "
        return CommandFailure(code=Exit.DATABASE, message=message + "postgresql+asyncpg://")
    return None


def _sqlalchemy(error: BaseException) -> CommandFailure | None:
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    if isinstance(error, NoSuchModuleError | ArgumentError):
        return CommandFailure(
            code=Exit.DATABASE,
            message=f"database: the URL is not valid ({error}); e.g. sqlite+aiosqlite:///var/agentbot.db "
            "or postgresql+asyncpg://user@host/agentbot",
        )
    return None


def _slack(error: BaseException) -> CommandFailure | None:
    try:
        from slack_sdk.errors import SlackApiError
    except ModuleNotFoundError:
        return None
    if isinstance(error, SlackApiError):
        code = error.response.get("error", "unknown error") if error.response is not None else "unknown error"
        if code in ("invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired"):
            hint = "reinstall the app and copy the Bot User OAuth Token again"
            return CommandFailure(code=Exit.PLATFORM, message=f"Slack rejected SLACK_BOT_TOKEN ({code}): {hint}")
        return CommandFailure(code=Exit.PLATFORM, message=f"Slack refused the startup call ({code})")
    return None


def _network(error: BaseException, platform: str | None) -> CommandFailure | None:
    import socket

    connection_errors: tuple[type[BaseException], ...] = (ConnectionError, TimeoutError)
    try:
        from aiohttp import ClientConnectionError

        connection_errors += (ClientConnectionError,)
    except ModuleNotFoundError:
        pass
    if isinstance(error, socket.gaierror):
        return CommandFailure(
            code=Exit.PLATFORM, message=f"cannot resolve a host name ({error}); is this machine online?"
        )
    if isinstance(error, connection_errors):
        where = platform or "the platform"
        return CommandFailure(code=Exit.PLATFORM, message=f"cannot reach {where}: {error}")
    return None
