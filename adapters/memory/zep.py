"""PreferenceMemory on Zep Cloud (`zep-cloud` SDK), chosen when ZEP_API_KEY is set.

Preferences live in the metadata of the Zep user whose external id is the customer id, under one
key, so they sit beside whatever else the team keeps in Zep. A write reads, merges and updates
(creating the user on first write); an empty update makes no call at all.
"""

from __future__ import annotations

from typing import Any

from agent.conversation.preferences import is_empty, merge
from agent.domain.records import Preferences
from agent.errors import (
    ProviderAuthError,
    ProviderBadRequest,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
)

METADATA_KEY = "agentbot_preferences"


class ZepPreferenceMemory:
    """
    Args:
        api_key: the Zep project key (from the environment, read by the composition root).
        base_url: the API root, e.g. `https://api.getzep.com/api/v4`; tests point it at a stand-in.
        timeout: seconds per request.
    """

    def __init__(self, api_key: str, base_url: str | None = None, timeout: float = 5.0):
        try:
            import httpx
            from zep_cloud.client import AsyncZep
        except ImportError as e:  # pragma: no cover - depends on the install
            raise ProviderError("Zep memory needs the zep-cloud package: pip install 'agentbot[zep]'") from e
        # Our own HTTP client, so `aclose` can close it and timeouts are ours to set.
        self._http = httpx.AsyncClient(timeout=timeout)
        self.client = AsyncZep(api_key=api_key, base_url=base_url, httpx_client=self._http)

    async def _user(self, customer_id: str) -> Any | None:
        from zep_cloud.errors import NotFoundError

        try:
            return await self.client.user.lookup(user_id=customer_id)
        except NotFoundError:
            return None
        except Exception as e:
            raise _translate(e, "user lookup") from e

    async def read(self, customer_id: str) -> Preferences:
        user = await self._user(customer_id)
        raw = (user.metadata or {}).get(METADATA_KEY) if user is not None else None
        return Preferences.model_validate(raw) if raw else Preferences()

    async def write(self, customer_id: str, update: Preferences) -> None:
        if is_empty(update):
            return
        user = await self._user(customer_id)
        stored_raw = (user.metadata or {}).get(METADATA_KEY) if user is not None else None
        stored = Preferences.model_validate(stored_raw) if stored_raw else Preferences()
        merged = merge(stored, update)
        if user is not None and merged == stored:
            return
        metadata = {METADATA_KEY: merged.model_dump(mode="json")}
        try:
            if user is None:
                await self.client.user.create(user_id=customer_id, metadata=metadata)
            else:
                await self.client.user.update(user.uuid_, metadata=metadata)
        except Exception as e:
            raise _translate(e, "saving preferences") from e

    async def aclose(self) -> None:
        await self._http.aclose()


def _translate(e: Exception, what: str) -> ProviderError:
    """SDK and transport errors become the core's provider errors, with whether a retry may help."""
    import httpx
    from zep_cloud.core.api_error import ApiError

    if isinstance(e, ApiError):
        status = e.status_code or 0
        if status in (401, 403):
            return ProviderAuthError(f"zep: {what} refused: check ZEP_API_KEY", status=status)
        if status == 429 or status >= 500:
            return ProviderUnavailable(f"zep: {what} failed ({status})", status=status)
        return ProviderBadRequest(f"zep: {what} failed ({status})", status=status)
    if isinstance(e, httpx.TimeoutException):
        return ProviderTimeout(f"zep: {what} timed out")
    if isinstance(e, httpx.HTTPError):
        return ProviderConnectionError(f"zep: {what}: cannot reach the server ({type(e).__name__})")
    raise e
