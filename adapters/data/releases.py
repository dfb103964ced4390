"""Release summaries for the release-risk agent: data/releases.json, or an HTTP endpoint."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from agent.errors import DataSourceError


class JSONReleaseSource:
    """Summaries keyed by version in a JSON file, read on each call so edits show without a restart.

    Args:
        path: the JSON file (an object keyed by version, e.g. "2.4.1").
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError as e:
            raise DataSourceError(f"{self.path} not found") from e
        except json.JSONDecodeError as e:
            raise DataSourceError(f"{self.path} is not valid JSON ({e.msg}, line {e.lineno})") from e
        if not isinstance(data, dict):
            raise DataSourceError(f"{self.path}: the top level must be an object keyed by version")
        return data

    async def get_release(self, release_id: str) -> dict[str, Any] | None:
        data = await asyncio.to_thread(self._read)
        found = data.get(release_id)
        return found if isinstance(found, dict) or found is None else {"version": release_id, "invalid": found}

    async def list_releases(self) -> list[str]:
        return list(await asyncio.to_thread(self._read))


class HTTPReleaseSource:
    """GET `{base_url}/releases/{id}` (the spec's GET /release-summary); 404 means no such release.

    Uses aiohttp (installed with the Slack extra). A session per request: the tool runs once per
    assessment, so nothing needs to outlive the call or be closed by whoever built the router.

    Args:
        base_url: the release service, e.g. `http://releases.internal:8080`.
        timeout: seconds per request.
        headers: sent with every request (e.g. an Authorization header read at the composition root).
    """

    def __init__(self, base_url: str, timeout: float = 5.0, headers: dict[str, str] | None = None):
        try:
            import aiohttp
        except ImportError as e:  # pragma: no cover - depends on the install
            raise ImportError("an HTTP release source needs aiohttp: pip install 'agentbot[slack]'") from e
        self._aiohttp = aiohttp
        self.base_url = base_url.rstrip("/")
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self.headers = headers or {}

    async def get_release(self, release_id: str) -> dict[str, Any] | None:
        body = await self._get(f"/releases/{quote(release_id, safe='')}")
        if body is not None and not isinstance(body, dict):
            raise DataSourceError("release service sent JSON that is not an object")
        return body

    async def list_releases(self) -> list[str]:
        """GET `/releases`: a list of ids, or `{"releases": [...]}`; a service without the listing lists none."""
        body = await self._get("/releases")
        if isinstance(body, dict):
            body = body.get("releases")
        if not isinstance(body, list):
            return []
        return [str(r.get("version") if isinstance(r, dict) else r).lstrip("vV") for r in body]

    async def _get(self, path: str) -> Any:
        """The JSON body, or None on 404."""
        aiohttp = self._aiohttp
        url = f"{self.base_url}{path}"
        try:
            async with (
                aiohttp.ClientSession(timeout=self.timeout, headers=self.headers) as session,
                session.get(url) as response,
            ):
                if response.status == 404:
                    return None
                if response.status >= 400:
                    raise DataSourceError(f"release service answered HTTP {response.status}")
                body = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError) as e:
            raise DataSourceError(f"release service unreachable ({type(e).__name__})") from e
        except ValueError as e:
            raise DataSourceError("release service sent a body that is not JSON") from e
        return body
