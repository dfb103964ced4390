"""The operator page's settings: its token from the environment, and the project it labels into."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, SecretStr


class AdminSettings(BaseModel):
    """What the page needs besides the app: its token and the project it labels into."""

    token: SecretStr = SecretStr("")  # AGENTBOT_ADMIN_TOKEN; empty: no page at all
    config_dir: str | None = None
    data_dir: str | None = None
    corpora: list[str] = ["tests/nlu/corpus.jsonl"]  # the project's own corpus, measured before a label is kept

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], config_dir: str | None = None, data_dir: str | None = None
    ) -> AdminSettings:
        token = SecretStr(env.get("AGENTBOT_ADMIN_TOKEN", "").strip())
        return cls(token=token, config_dir=config_dir, data_dir=data_dir)

    @property
    def enabled(self) -> bool:
        return bool(self.token.get_secret_value())
