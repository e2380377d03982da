"""The typed inputs and outputs of a catalog refresh: configuration, plan, events, report.

Times are timezone-aware UTC datetimes; durations are hours (TTL) or seconds (HTTP). A refresh is
configured from plain values (the app and the CLI derive them from Settings), so `tools/` never
reads the environment itself.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SourceName = Literal["gpuhunt", "skypilot"]
SourceChoice = Literal["gpuhunt", "skypilot", "all"]
Status = Literal["updated", "unchanged", "fresh", "failed"]
Stage = Literal["start", "checking", "downloading", "parsing", "done", "failed"]

# gpuhunt's offline catalogs are rebuilt hourly (dstackai/gpuhunt: .github/workflows); SkyPilot's
# hosted AWS/GCP catalogs refresh "every 7 hours" (skypilot-org/skypilot#1438).
DEFAULT_TTL_HOURS: dict[str, float] = {"gpuhunt": 1.0, "skypilot": 7.0}
SKYPILOT_CATALOG_URL = (
    "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs"
)
SKYPILOT_MIRROR_URL = "https://skypilot-catalog.s3.us-east-1.amazonaws.com/catalogs"
SKYPILOT_SCHEMA = "v8"  # CATALOG_SCHEMA_VERSION in skypilot-org/skypilot sky/skylet/constants.py


class RefreshConfig(BaseModel):
    """Where to download from and how hard to try. None URLs mean the sources' own defaults."""

    model_config = ConfigDict(frozen=True)

    gpuhunt_url: str | None = Field(
        default=None, description="gpuhunt's catalog base URL (GPUHUNT_CATALOG_URL); None = its own"
    )
    skypilot_url: str = Field(
        default=SKYPILOT_CATALOG_URL, description="SkyPilot catalogs base URL"
    )
    skypilot_mirror_url: str | None = Field(
        default=None,
        description="tried on HTTP 429; None = SkyPilot's S3 mirror when skypilot_url is the"
        " default, no mirror for a URL of your own; '' = never",
    )
    ttl_hours: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_TTL_HOURS),
        description="per source: a copy younger than this is not downloaded again",
    )
    timeout_s: float = Field(default=20.0, gt=0, description="per connect and per read")
    attempts: int = Field(default=3, ge=1, le=10)
    backoff_s: float = Field(default=1.0, ge=0, description="first retry delay; doubles")
    max_bytes: int = Field(default=256 * 2**20, gt=0, description="largest download accepted")
    max_drop: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="a new copy with fewer than (1 - this) x the last good copy's rows is refused",
    )

    def mirror(self) -> str | None:
        """The SkyPilot mirror to use on HTTP 429, if any."""
        if self.skypilot_mirror_url is not None:
            return self.skypilot_mirror_url or None
        return SKYPILOT_MIRROR_URL if self.skypilot_url == SKYPILOT_CATALOG_URL else None


class ProviderPlan(BaseModel):
    """One provider to refresh from one source; `remote` is the source's own name for it."""

    model_config = ConfigDict(frozen=True)

    source: SourceName
    provider: str = Field(description="our provider key, e.g. 'lambda'")
    remote: str = Field(description="the source's name, e.g. gpuhunt's 'lambdalabs'")
    live: bool = Field(
        default=False, description="a gpuhunt online provider: a live marketplace query"
    )

    @property
    def key(self) -> str:
        return f"{self.source}-{self.provider}"


class ProviderResult(BaseModel):
    """What happened to one provider; on failure the last good copy is what `instances` counts."""

    source: SourceName
    provider: str
    status: Status
    message: str = Field(description="one line: what was done, or why it failed")
    url: str | None = None
    version: str | None = Field(default=None, description="catalog version, ETag or Last-Modified")
    fetched_at: datetime | None = Field(
        default=None, description="download time of the copy in use"
    )
    rows_read: int = Field(default=0, description="data rows of the copy in use")
    instances: int = Field(default=0, description="instance types of the copy in use")
    skipped: dict[str, int] = Field(default_factory=dict, description="rows not used, by reason")
    unknown_gpus: dict[str, int] = Field(
        default_factory=dict, description="rows whose GPU has no datasheet entry, by name"
    )
    kept_last_good: bool = Field(default=False, description="a failure left the previous copy")
    error: str | None = Field(
        default=None, description="on failure, why (one line, without what was kept)"
    )


class RefreshEvent(BaseModel):
    """Progress of one provider, as it happens (for a progress bar or a log line)."""

    source: SourceName
    provider: str
    stage: Stage
    message: str = ""
    done: int = Field(default=0, description="providers finished so far")
    total: int = Field(default=0, description="providers in this refresh")
    result: ProviderResult | None = Field(
        default=None, description="the provider's result, on its 'done' or 'failed' event"
    )


ProgressFn = Callable[[RefreshEvent], None]


class RefreshReport(BaseModel):
    """Every provider's result, in plan order."""

    started_at: datetime
    finished_at: datetime
    results: list[ProviderResult]

    @property
    def failed(self) -> list[ProviderResult]:
        return [r for r in self.results if r.status == "failed"]

    @property
    def ok(self) -> bool:
        return not self.failed
