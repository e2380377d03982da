"""Cloud GPU instances as typed, sourced facts, and an immutable catalog to filter them.

An `Instance` is one rentable machine shape at one provider: which GPU, how many, what it costs
per hour (USD, whole instance), how it is billed, and where and when that price was read. The
built-in catalog is curated YAML under `tools/data/catalog/` (one file per provider); imported
catalogs (SkyPilot CSVs, our own CSV/YAML) are merged over it, later rows replacing earlier rows
with the same id. Reading and writing files lives in `tools.catalog.files`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from tools.enums import Billing, Interconnect, Network
from tools.errors import InvalidInputError, UnknownNameError
from tools.gpus import GPUSpec, find_gpu, lookup_gpu, matching_gpu_ids

DEFAULT_STALE_PRICE_DAYS = 120  # mirrors Settings.stale_price_days; tools/ must not import it

# Physically plausible bounds of a catalog row, so that one poisoned cell (a price of 1e-300 or
# 1e308, 1e32 GPUs, a date in 2099) cannot rank first or break every later ranking. The price
# range is per GPU-hour, on demand and spot: the cheapest and dearest rows of the public catalogs
# in November 2026 were about $0.03 (a consumer GPU on Vast.ai) and $19.33 (a B200 in GCP's
# asia-southeast1, SkyPilot's catalog), so the range leaves a wide margin on both sides.
MIN_PRICE_PER_GPU_HOUR = 0.01  # USD
MAX_PRICE_PER_GPU_HOUR = 100.0  # USD
MAX_GPUS_PER_INSTANCE = 1024  # a rack-scale NVL72 system is 72; no instance sells more than this
MAX_VRAM_PER_GPU_GIB = 1024.0  # today's largest is 288 GiB (B300, MI355X)
FUTURE_TOLERANCE = timedelta(days=1)  # a date "today" in a timezone ahead of ours is not future
# Text a spreadsheet would run as a formula (=cmd|...!A0): OWASP's CSV-injection prefixes.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_TEXT_FIELDS = ("id", "provider", "instance_type", "fabric", "source", "notes")

# Where a row came from: the curated built-in catalog, a user's own import or file, or a refresh
# from gpuhunt's or SkyPilot's hosted catalogs.
Origin = Literal["curated", "import", "gpuhunt", "skypilot"]


class Instance(BaseModel):
    """One rentable GPU machine shape at one provider, with its on-demand price and its source."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    id: str = Field(description="'<provider>/<instance_type>', unique within a catalog")
    provider: str = Field(min_length=1, description="lower-case provider key, e.g. 'aws'")
    instance_type: str = Field(min_length=1, description="the provider's SKU, e.g. 'p5.48xlarge'")
    regions: list[str] = Field(
        default_factory=list, description="regions offering it at this price; empty = not stated"
    )
    gpu: str = Field(description="canonical GPUSpec.id; aliases are accepted and canonicalised")
    gpu_count: int = Field(ge=1, le=MAX_GPUS_PER_INSTANCE, description="GPUs per instance")
    vram_per_gpu_gib: float = Field(
        gt=0,
        le=MAX_VRAM_PER_GPU_GIB,
        description="GPU memory per GPU, GiB; defaults to the GPU's datasheet capacity",
    )
    vcpus: int | None = Field(default=None, ge=1, le=100_000, description="host vCPUs")
    ram_gib: float | None = Field(default=None, gt=0, le=1e6, description="host RAM, GiB")
    interconnect: Interconnect = Field(
        description="intra-node GPU-to-GPU path: 'nvswitch' (HGX boards), 'nvlink' (bridges or"
        " direct links), 'pcie' (PCIe only, also used for single-GPU instances)"
    )
    network: Network = Field(default="ethernet", description="inter-node fabric")
    network_gbps: float | None = Field(
        default=None, gt=0, le=1e6, description="inter-node bandwidth per instance, Gbit/s"
    )
    fabric: str | None = Field(
        default=None, description="what the inter-node fabric is, e.g. 'EFA v2 (SRD over Ethernet)'"
    )
    multi_node: bool = Field(default=False, description="offered as clusters over that fabric")
    price_per_hour: float = Field(gt=0, description="on-demand USD per hour, whole instance")
    spot_price_per_hour: float | None = Field(
        default=None, gt=0, description="spot/interruptible USD per hour, whole instance"
    )
    spot_available: bool = Field(description="the provider sells it as spot/interruptible")
    billing_granularity: Billing = Field(description="unit the provider bills usage in")
    min_charge_seconds: int = Field(
        ge=0, le=31 * 86400, description="minimum billed duration per start, seconds"
    )
    persistent_volumes: bool = Field(description="network volumes survive instance deletion")
    source: str = Field(min_length=1, description="where the price was read (URL or catalog)")
    as_of: date = Field(description="when the price was read or applied; never in the future")
    notes: str = Field(default="", description="caveats about this row")
    origin: Origin = Field(
        default="curated",
        description="where the row came from: 'curated' (built-in), 'import' (the user's own file"
        " or import), 'gpuhunt' or 'skypilot' (a refresh from their hosted catalogs)",
    )
    fetched_at: datetime | None = Field(
        default=None,
        description="when a refresh downloaded this price (UTC); None for curated and imported"
        " rows",
    )

    @model_validator(mode="before")
    @classmethod
    def _fill_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if not data.get("id") and data.get("provider") and data.get("instance_type"):
            data["id"] = f"{data['provider']}/{data['instance_type']}"
        if data.get("spot_available") is None:
            data["spot_available"] = data.get("spot_price_per_hour") is not None
        if data.get("vram_per_gpu_gib") is None and isinstance(data.get("gpu"), str):
            spec = find_gpu(data["gpu"])  # an unknown name is reported by the gpu validator
            if spec is not None:
                data["vram_per_gpu_gib"] = spec.vram_gib
        return data

    @field_validator("gpu")
    @classmethod
    def _canonical_gpu(cls, value: str) -> str:
        try:
            return lookup_gpu(value).id
        except UnknownNameError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("provider")
    @classmethod
    def _lower_provider(cls, value: str) -> str:
        return value.strip().lower()

    @field_validator(*_TEXT_FIELDS)
    @classmethod
    def _no_formula(cls, value: str | None) -> str | None:
        if value and value.startswith(FORMULA_PREFIXES):
            raise ValueError(
                "text that does not start with = + - @ (a spreadsheet would run it as a formula)"
            )
        return value

    @field_validator("regions")
    @classmethod
    def _no_formula_regions(cls, value: list[str]) -> list[str]:
        for region in value:
            cls._no_formula(region)
        return value

    @field_validator("price_per_hour", "spot_price_per_hour")
    @classmethod
    def _plausible_price(cls, value: float | None, info: ValidationInfo) -> float | None:
        count = info.data.get("gpu_count")
        if value is None or not isinstance(count, int):
            return value
        per_gpu = value / count
        if not MIN_PRICE_PER_GPU_HOUR <= per_gpu <= MAX_PRICE_PER_GPU_HOUR:
            raise ValueError(
                f"USD per hour for the whole instance, between ${MIN_PRICE_PER_GPU_HOUR:g} and"
                f" ${MAX_PRICE_PER_GPU_HOUR:g} per GPU-hour (this is ${per_gpu:.3g} per GPU-hour)"
            )
        return value

    @field_validator("as_of")
    @classmethod
    def _not_future(cls, value: date) -> date:
        latest = datetime.now(UTC).date() + FUTURE_TOLERANCE
        if value > latest:
            raise ValueError(
                f"a date no later than {latest.isoformat()} (prices are not known ahead)"
            )
        return value

    @field_validator("fetched_at")
    @classmethod
    def _fetched_in_utc(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        stamp = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        if stamp > datetime.now(UTC) + FUTURE_TOLERANCE:
            raise ValueError("a download time that is not in the future")
        return stamp

    @model_validator(mode="after")
    def _consistent(self) -> Instance:
        if self.spot_price_per_hour is not None and not self.spot_available:
            raise ValueError("spot_price_per_hour is set but spot_available is false")
        if not self.id.startswith(f"{self.provider}/"):
            raise ValueError(f"id {self.id!r} must start with '{self.provider}/'")
        return self

    @property
    def spec(self) -> GPUSpec:
        """The datasheet record of this instance's GPU."""
        return lookup_gpu(self.gpu)

    @property
    def total_vram_gib(self) -> float:
        """GPU memory of the whole instance, GiB."""
        return self.vram_per_gpu_gib * self.gpu_count

    @property
    def price_per_gpu_hour(self) -> float:
        """On-demand USD per GPU-hour."""
        return self.price_per_hour / self.gpu_count

    @property
    def spot_price_per_gpu_hour(self) -> float | None:
        """Spot USD per GPU-hour, None without a spot price."""
        spot = self.spot_price_per_hour
        return None if spot is None else spot / self.gpu_count

    def price_age_days(self, today: date) -> int:
        """Days between `as_of` and `today` (negative if as_of is in the future)."""
        return (today - self.as_of).days

    def is_stale(self, today: date, max_age_days: int = DEFAULT_STALE_PRICE_DAYS) -> bool:
        """True when the price is more than `max_age_days` old on `today`."""
        return self.price_age_days(today) > max_age_days


def _closest(name: str, choices: Iterable[str], limit: int = 5) -> list[str]:
    pool = sorted(set(choices))
    return difflib.get_close_matches(name, pool, n=limit, cutoff=0.3)


class Catalog:
    """An immutable collection of instances with unique ids, in a stable order."""

    def __init__(self, instances: Iterable[Instance] = ()) -> None:
        items = tuple(instances)
        seen: set[str] = set()
        for item in items:
            if item.id in seen:
                raise InvalidInputError("id", item.id, "unique instance ids within one catalog")
            seen.add(item.id)
        self._items = items
        self._by_id = {item.id: item for item in items}

    @property
    def instances(self) -> list[Instance]:
        """The instances, in catalog order (a copy)."""
        return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Instance]:
        return iter(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Catalog) and self._items == other._items

    def __repr__(self) -> str:
        return f"Catalog({len(self._items)} instances, {len(self.providers())} providers)"

    def merged(self, other: Catalog) -> Catalog:
        """This catalog with `other`'s rows added; rows of `other` replace rows with the same id."""
        replaced = {item.id: item for item in other}
        kept = [replaced.pop(item.id, item) for item in self._items]
        return Catalog([*kept, *(item for item in other if item.id in replaced)])

    def get(self, instance_id: str) -> Instance:
        """The instance with this id; UnknownNameError lists the closest ids."""
        found = self._by_id.get(instance_id) or self._by_id.get(instance_id.strip().lower())
        if found is None:
            raise UnknownNameError("instance", instance_id, _closest(instance_id, self._by_id))
        return found

    def providers(self) -> list[str]:
        """Provider keys present, sorted."""
        return sorted({item.provider for item in self._items})

    def stale(self, today: date, max_age_days: int = DEFAULT_STALE_PRICE_DAYS) -> list[Instance]:
        """Instances whose price is older than `max_age_days` on `today`."""
        return [item for item in self._items if item.is_stale(today, max_age_days)]

    def filter(
        self,
        *,
        gpu: str | Sequence[str] | None = None,
        min_vram_gib: float | None = None,
        providers: Sequence[str] | None = None,
        regions: Sequence[str] | None = None,
        max_price: float | None = None,
        spot_only: bool = False,
        min_gpus: int | None = None,
        max_gpus: int | None = None,
    ) -> Catalog:
        """The instances matching every given condition.

        gpu: GPU name(s) or alias(es), any of them; a family name ('H100') matches every variant,
        a family with a size ('A100-80GB') its variants of that size (see `matching_gpu_ids`);
        unknown names raise UnknownNameError; min_vram_gib: GiB per GPU; providers/regions: any
        of them (case-insensitive; unknown providers raise);
        max_price: on-demand USD/h for the whole instance (with spot_only: the spot price);
        spot_only: sold as spot with a listed spot price; min_gpus/max_gpus: GPUs per instance.
        """
        gpu_ids = _gpu_ids(gpu)
        wanted_providers = self._provider_set(providers)
        wanted_regions = {r.strip().lower() for r in regions} if regions else None
        _check_bounds(min_gpus, max_gpus, max_price, min_vram_gib)

        def keep(item: Instance) -> bool:
            price = item.spot_price_per_hour if spot_only else item.price_per_hour
            return (
                (gpu_ids is None or item.gpu in gpu_ids)
                and (min_vram_gib is None or item.vram_per_gpu_gib >= min_vram_gib)
                and (wanted_providers is None or item.provider in wanted_providers)
                and (wanted_regions is None or bool(wanted_regions & _lower(item.regions)))
                and (not spot_only or (item.spot_available and price is not None))
                and (max_price is None or (price is not None and price <= max_price))
                and (min_gpus is None or item.gpu_count >= min_gpus)
                and (max_gpus is None or item.gpu_count <= max_gpus)
            )

        return Catalog(item for item in self._items if keep(item))

    def _provider_set(self, providers: Sequence[str] | None) -> set[str] | None:
        if providers is None:
            return None
        known = set(self.providers())
        wanted = {p.strip().lower() for p in providers}
        for name in sorted(wanted - known):
            raise UnknownNameError("provider", name, _closest(name, known))
        return wanted


def _lower(values: Iterable[str]) -> set[str]:
    return {v.lower() for v in values}


def _gpu_ids(gpu: str | Sequence[str] | None) -> set[str] | None:
    if gpu is None:
        return None
    names = [gpu] if isinstance(gpu, str) else list(gpu)
    return set[str]().union(*(matching_gpu_ids(name) for name in names))


def _check_bounds(
    min_gpus: int | None, max_gpus: int | None, max_price: float | None, min_vram: float | None
) -> None:
    if min_gpus is not None and min_gpus < 1:
        raise InvalidInputError("min_gpus", min_gpus, "an integer >= 1")
    if max_gpus is not None and max_gpus < (min_gpus or 1):
        raise InvalidInputError("max_gpus", max_gpus, f"an integer >= {min_gpus or 1}")
    if max_price is not None and max_price <= 0:
        raise InvalidInputError("max_price", max_price, "a USD/h amount > 0")
    if min_vram is not None and min_vram <= 0:
        raise InvalidInputError("min_vram_gib", min_vram, "GiB > 0")
