"""The operator page's settings: its token from the environment, and the project it labels into."""

from __future__ import annotations

from pydantic import BaseModel, SecretStr

from bots.settings import DeploySettings


class AdminSettings(BaseModel):
    """What the page needs besides the app: its token and the project it labels into."""

    token: SecretStr = SecretStr("")  # AGENTBOT_ADMIN_TOKEN; empty: no page at all
    config_dir: str | None = None
    data_dir: str | None = None
    corpora: list[str] = ["tests/nlu/corpus.jsonl"]  # the project's own corpus, measured before a label is kept

    @classmethod
    def from_settings(
        cls, deploy: DeploySettings, config_dir: str | None = None, data_dir: str | None = None
    ) -> AdminSettings:
        token = deploy.observability.admin_token or SecretStr("")
        return cls(token=token, config_dir=config_dir, data_dir=data_dir)

    @property
    def enabled(self) -> bool:
        return bool(self.token.get_secret_value())
