"""Per-provider billing terms (granularity, minimum charge, volumes), read from data/providers.yaml.

They are the defaults of every catalog row for that provider, whether curated or imported, so a
provider's billing rules are written (with their source) in one place.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from tools.enums import Billing

_DATA_FILE = "data/providers.yaml"  # inside the `tools` package


class ProviderTerms(BaseModel):
    """How one provider bills GPU instances, with the page that says so."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(description="lower-case provider key used in instance ids, e.g. 'aws'")
    name: str = Field(description="display name")
    billing_granularity: Billing
    min_charge_seconds: int = Field(ge=0, description="minimum billed seconds per start")
    persistent_volumes: bool = Field(description="network volumes outlive instances")
    billing_source: str = Field(min_length=1, description="where the billing rules are stated")

    def row_defaults(self) -> dict[str, Any]:
        """The Instance fields these terms provide."""
        return {
            "provider": self.key,
            "billing_granularity": self.billing_granularity,
            "min_charge_seconds": self.min_charge_seconds,
            "persistent_volumes": self.persistent_volumes,
        }


@cache
def _load() -> dict[str, ProviderTerms]:
    text = resources.files("tools").joinpath(_DATA_FILE).read_text(encoding="utf-8")
    raw = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["providers"]
    return {key: ProviderTerms.model_validate({"key": key, **value}) for key, value in raw.items()}


def provider_terms(key: str) -> ProviderTerms | None:
    """The billing terms of provider `key` (case-insensitive), or None if not recorded."""
    return _load().get(key.strip().lower())


def known_providers() -> list[str]:
    """Keys of every provider with recorded terms, sorted."""
    return sorted(_load())
