"""What every HTTP process shares: where it binds ($PORT, $HOST), its health endpoints and metrics.

- `/healthz`: the process is up and serving (200, no dependencies checked).
- `/readyz`: the database answers and its schema is at the newest migration (200), else 503 with
  the reason, so a load balancer sends no traffic to a worker that would fail every turn.
- `/metrics`: Prometheus' text format (`bots/metrics.py`).
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from agent.context.telemetry import MetricsExport
from agent.errors import StorageError
from agent.storage import Database
from bots.settings import ServerVariables

if TYPE_CHECKING:
    from bots.admin.pages import AdminMount

DEFAULT_PORT = 3000
# Young collections every 5,000 new container objects instead of 700: at 700 the turns a worker has
# in flight are walked several times per turn, while a much larger threshold makes each collection
# a pause a turn can feel (docs/evaluation.md, "Speed").
GC_YOUNG = 5_000
# Files container runtimes leave behind: Docker, and Podman / CRI-O.
CONTAINER_MARKERS = (Path("/.dockerenv"), Path("/run/.containerenv"))


class BindAddress(BaseModel):
    host: str
    port: int
    why: str  # said in the startup line: which of flag, environment or default chose them


def in_container() -> bool:
    return any(marker.exists() for marker in CONTAINER_MARKERS)


def bind_address(host: str | None, port: int | None, server: ServerVariables) -> BindAddress:
    """The flag, else $HOST / $PORT, else 0.0.0.0 in a container (reachable from outside it) or 127.0.0.1."""
    reasons = []
    if port is None and server.port is not None:
        port = server.port
        reasons.append("port from $PORT")
    if host is None and server.host:
        host = server.host
        reasons.append("host from $HOST")
    if host is None:
        host = "0.0.0.0" if in_container() else "127.0.0.1"
        reasons.append("in a container: all interfaces" if host == "0.0.0.0" else "not in a container: loopback only")
    return BindAddress(host=host, port=DEFAULT_PORT if port is None else port, why="; ".join(reasons) or "flags")


def metrics_port(server: ServerVariables) -> int | None:
    """`AGENTBOT_METRICS_PORT` (default 9464; `off` serves none), for a process without HTTP of its own."""
    return None if server.metrics_port == "off" else server.metrics_port


def add_health_routes(web_app: Any, store: Database, metrics: MetricsExport | None = None) -> None:
    """Register /healthz, /readyz and (given metrics) /metrics on an aiohttp application."""
    from aiohttp import web

    async def healthz(_request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def readyz(_request: web.Request) -> web.Response:
        try:
            status = await store.schema_status()
        except StorageError as e:
            return web.json_response({"status": "unavailable", "database": str(e)}, status=503)
        body = {"status": "ok" if not status.behind else "unavailable", **status.model_dump(), "behind": status.behind}
        return web.json_response(body, status=503 if status.behind else 200)

    async def scrape(_request: web.Request) -> web.Response:
        try:
            body, content_type = await metrics.exposition()  # type: ignore[union-attr]
        except StorageError as e:
            return web.Response(status=503, text=f"database unavailable: {e}\n")
        return web.Response(body=body, headers={"Content-Type": content_type})

    web_app.router.add_get("/healthz", healthz)
    web_app.router.add_get("/readyz", readyz)
    if metrics is not None:
        web_app.router.add_get("/metrics", scrape)


@asynccontextmanager
async def serve_health(
    store: Database, metrics: MetricsExport | None, host: str, port: int, admin: AdminMount | None = None
) -> AsyncIterator[str]:
    """/healthz, /readyz and /metrics on a port of their own (`agentbot discord`, which serves no
    HTTP otherwise), and the operator page when given; yields the base URL."""
    from aiohttp import web

    web_app = web.Application()
    add_health_routes(web_app, store, metrics)
    if admin is not None:
        admin.mount(web_app)
    runner = web.AppRunner(web_app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        bound = runner.addresses[0]
        yield f"http://{bound[0]}:{bound[1]}"
    finally:
        await runner.cleanup()


def settle_heap() -> None:
    """For a long-running process, once its app is built. The start-up objects (config, banks,
    compiled patterns: ~120,000 of them) live as long as the process, so they are moved out of the
    cyclic collector's reach, and young collections run less often, since each one would otherwise
    walk objects that can never be garbage (docs/evaluation.md gives the effect). Kept on by
    default because it is process-local: unlike pinning it takes nothing from other processes on the
    host, and costs only the frozen objects never being freed, which live as long as the process
    anyway. Not done by `build_app`: a process that builds apps over and over (tests, eval) must
    keep collecting them.
    """
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG, middle, old)
