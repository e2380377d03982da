"""Import SkyPilot catalogs (`vms.csv` per cloud) into our catalog.

One SkyPilot row is one (instance type, region/zone). We group the rows of an instance type into
price tiers: regions offering the same on-demand price become one `Instance` whose spot price is the
lowest spot price among those rows. The cheapest tier gets the id '<cloud>/<instance type>'; other
tiers get '<cloud>/<instance type>@<first region>'. GCP prices GPUs apart from the host VM, so a GCP
accelerator row is joined to its host VM row of the same zone (the host type SkyPilot itself picks)
and the two prices are added, as SkyPilot's `show-gpus` does.

Rows we cannot use are counted by reason in `ImportResult.skipped`; a malformed row fails the whole
import (SkyPilotRowError / CatalogFileError with file, row and field).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from tools.catalog.files import CatalogFileError, row_error
from tools.catalog.instances import Catalog, Instance
from tools.catalog.providers import provider_terms
from tools.catalog.skypilot_rows import (
    PLACEHOLDER_PRICES,
    SkyRow,
    memory_mismatch,
    per_gpu_mib,
    read_rows,
    resolve_gpu,
    skip_reason_for_accelerator,
)
from tools.gpus import lookup_gpu

SKYPILOT_SOURCE = "SkyPilot catalog (skypilot-org/skypilot-catalog)"

# Host VM per (GCP accelerator, count): the dedicated machine types SkyPilot's gcp_catalog uses
# (its _ACC_INSTANCE_TYPE_DICTS; the first, smallest, choice for L4). Other GPUs attach to n1 VMs.
GCP_HOSTS: dict[str, dict[int, str]] = {
    "A100": {n: f"a2-highgpu-{n}g" for n in (1, 2, 4, 8)} | {16: "a2-megagpu-16g"},
    "A100-80GB": {n: f"a2-ultragpu-{n}g" for n in (1, 2, 4, 8)},
    "H100": {n: f"a3-highgpu-{n}g" for n in (1, 2, 4, 8)},
    "H100-MEGA": {8: "a3-megagpu-8g"},
    "H200": {8: "a3-ultragpu-8g"},
    "B200": {8: "a4-highgpu-8g"},
    "L4": {1: "g2-standard-4", 2: "g2-standard-24", 4: "g2-standard-48", 8: "g2-standard-96"},
}


@dataclass
class ImportResult:
    """What an import produced: the catalog, and how many rows were skipped for which reason."""

    catalog: Catalog
    rows_read: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())

    def merged(self, other: ImportResult) -> ImportResult:
        return ImportResult(
            self.catalog.merged(other.catalog),
            self.rows_read + other.rows_read,
            self.skipped + other.skipped,
        )


@dataclass(frozen=True)
class _Priced:
    """A usable row after GCP joining: whole-instance prices and host size."""

    row: SkyRow
    instance_type: str
    gpu: str
    count: int
    price: float
    spot: float | None
    vcpus: float | None
    ram_gib: float | None


def _positive(value: float | None) -> float | None:
    """SkyPilot writes 0.00 for 'no spot offer' (Vast); treat zero as absent."""
    return value if value is not None and value > 0 else None


def _usable(
    cloud: str, row: SkyRow, skipped: Counter[str], memory_per_gpu: bool = False
) -> _Priced | None:
    reason = skip_reason_for_accelerator(row.accelerator, row.count)
    mib = row.gpu_mib if memory_per_gpu else per_gpu_mib(cloud, row)
    gpu = None if reason else resolve_gpu(cloud, row.instance_type, row.accelerator, mib)
    if reason is None and gpu is not None:
        reason = memory_mismatch(gpu, mib)
    if reason is None and not row.instance_type:
        reason = "no instance type"
    if reason is None and row.price is None:
        reason = "no on-demand price"
    if reason is None and _placeholder(cloud, row.price):
        reason = f"placeholder price {row.price}"
    if reason is not None or gpu is None or row.price is None:
        skipped[reason or "unknown accelerator"] += 1
        return None
    return _Priced(
        row,
        row.instance_type,
        gpu,
        int(row.count),
        row.price,
        _positive(row.spot),
        row.vcpus,
        row.ram_gib,
    )


def _gcp_priced(rows: Sequence[SkyRow], skipped: Counter[str]) -> list[_Priced]:
    """GCP accelerator rows joined with their host VM row of the same zone (prices added)."""
    hosts = {
        (r.instance_type, r.region, r.zone): r
        for r in rows
        if r.instance_type and not r.accelerator
    }
    priced: list[_Priced] = []
    for row in rows:
        if row.instance_type and not row.accelerator:
            continue  # a host VM row: used through the join below
        reason = skip_reason_for_accelerator(row.accelerator, row.count)
        if reason is None and (_placeholder("gcp", row.price) or _placeholder("gcp", row.spot)):
            reason = f"placeholder price {row.price}"
        host_type = GCP_HOSTS.get(row.accelerator, {}).get(int(row.count)) if not reason else None
        host = hosts.get((host_type, row.region, row.zone)) if host_type else None
        if reason is None and host_type is None:
            reason = "GPU attaches to an n1 host VM (not in the catalog)"
        elif reason is None and (host is None or host.price is None or row.price is None):
            reason = "no host VM price for the zone"
        if reason is not None or host is None or host.price is None or row.price is None:
            skipped[reason or "no host VM price for the zone"] += 1
            continue
        gpu = resolve_gpu("gcp", host.instance_type, row.accelerator, row.gpu_mib)
        if gpu is None:
            skipped[f"unknown accelerator {row.accelerator!r}"] += 1
            continue
        mismatch = memory_mismatch(gpu, row.gpu_mib)
        if mismatch is not None:
            skipped[mismatch] += 1
            continue
        # An unpriced host row (GCP a4: price and spot both 0.0) adds nothing to either price.
        host_spot = 0.0 if host.price == 0 else _positive(host.spot)
        gpu_spot = _positive(row.spot)
        spot = None
        if host_spot is not None and gpu_spot is not None:
            spot = round(host_spot + gpu_spot, 6)
        priced.append(
            _Priced(
                row,
                host.instance_type,
                gpu,
                int(row.count),
                round(host.price + row.price, 6),
                spot,
                host.vcpus,
                host.ram_gib,
            )
        )
    return priced


def _placeholder(cloud: str, price: float | None) -> bool:
    return price is not None and price in PLACEHOLDER_PRICES.get(cloud, frozenset())


@cache
def _fabrics() -> tuple[dict[str, Any], ...]:
    text = resources.files("tools").joinpath("data/fabrics.yaml").read_text(encoding="utf-8")
    return tuple(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["fabrics"])


def _network_fields(cloud: str, instance_type: str) -> dict[str, Any]:
    for entry in _fabrics():
        if entry["provider"] == cloud and re.fullmatch(entry["pattern"], instance_type):
            keys = ("network", "network_gbps", "fabric")
            return {**{k: entry[k] for k in keys}, "multi_node": True}
    return {"network": "ethernet"}


def infer_interconnect(gpu: str, count: int, names: str) -> str:
    """Intra-node GPU path: one GPU -> 'pcie'; SXM/superchip boards -> 'nvswitch' (V100 SXM2 boards
    have direct NVLink, -> 'nvlink'); OAM (MI300X, Infinity Fabric mesh) -> 'nvlink'; PCIe cards ->
    'nvlink' when the SKU name says NVLink (bridges), else 'pcie'."""
    spec = lookup_gpu(gpu)
    if count <= 1:
        return "pcie"
    if spec.form_factor in ("SXM", "superchip"):
        return "nvlink" if spec.architecture == "Volta" else "nvswitch"
    if spec.form_factor == "OAM":
        return "nvlink"
    return "nvlink" if "nvlink" in names.lower() else "pcie"


def _tiers(priced: Sequence[_Priced]) -> list[list[_Priced]]:
    """Rows of one instance type grouped by (GPU, on-demand price), cheapest first."""
    groups: dict[tuple[str, float], list[_Priced]] = defaultdict(list)
    for item in priced:
        groups[(item.gpu, round(item.price, 6))].append(item)
    tiers = list(groups.values())
    tiers.sort(key=lambda t: (t[0].price, t[0].gpu, min(i.row.region for i in t)))
    return tiers


def _instance_row(cloud: str, tier: Sequence[_Priced], as_of: date, source: str) -> dict[str, Any]:
    first = tier[0]
    spots = [i.spot for i in tier if i.spot is not None]
    return {
        **_terms_fields(cloud),
        "instance_type": first.instance_type,
        "regions": sorted({i.row.region for i in tier if i.row.region}),
        "gpu": first.gpu,
        "gpu_count": first.count,
        "vcpus": round(first.vcpus) if first.vcpus else None,
        "ram_gib": first.ram_gib or None,
        "interconnect": infer_interconnect(
            first.gpu, first.count, f"{first.row.accelerator} {first.instance_type}"
        ),
        **_network_fields(cloud, first.instance_type),
        "price_per_hour": first.price,
        "spot_price_per_hour": min(spots) if spots else None,
        "spot_available": bool(spots),
        "source": source,
        "as_of": as_of,
    }


def _terms_fields(cloud: str) -> dict[str, Any]:
    """The provider's recorded billing terms, or hourly billing (conservative) when none are."""
    terms = provider_terms(cloud)
    if terms is not None:
        return terms.row_defaults()
    return {
        "provider": cloud,
        "billing_granularity": "hour",
        "min_charge_seconds": 0,
        "persistent_volumes": False,
        "notes": f"no billing terms recorded for {cloud}; hourly billing assumed",
    }


def instances_from_rows(
    cloud: str,
    rows: Sequence[SkyRow],
    as_of: date,
    source: str | None = None,
    *,
    split_gcp_prices: bool = True,
    extra: dict[str, Any] | None = None,
    lenient: bool = False,
    memory_per_gpu: bool = False,
) -> ImportResult:
    """All instances of one cloud's rows (GCP host rows included in `rows`).

    split_gcp_prices: GCP accelerator rows carry the GPU price alone and are joined to their host
    VM row (SkyPilot's layout); False for sources that price whole GCP instances (gpuhunt).
    extra: fields set on every instance (origin, fetched_at). lenient: an instance that fails
    validation (an implausible price) is skipped and counted instead of failing everything.
    memory_per_gpu: the rows' GPU memory is per GPU whatever the cloud (gpuhunt), not SkyPilot's
    Vast.ai total of all the row's GPUs."""
    skipped: Counter[str] = Counter()
    if cloud == "gcp" and split_gcp_prices:
        priced = _gcp_priced(rows, skipped)
    else:
        priced = [p for r in rows if (p := _usable(cloud, r, skipped, memory_per_gpu)) is not None]
    by_type: dict[str, list[_Priced]] = defaultdict(list)
    for item in priced:
        by_type[item.instance_type].append(item)
    items: list[Instance] = []
    label = source or f"{SKYPILOT_SOURCE} {cloud}/vms.csv"
    for instance_type in sorted(by_type):
        used: set[str] = set()
        for rank, tier in enumerate(_tiers(by_type[instance_type])):
            data = {**_instance_row(cloud, tier, as_of, label), **(extra or {})}
            data["id"] = _tier_id(cloud, instance_type, rank, data["regions"], used)
            try:
                items.append(_validated(data, tier[0].row))
            except CatalogFileError as exc:
                if not lenient:
                    raise
                skipped[f"invalid row ({exc.field.split(': ')[-1]})"] += len(tier)
    return ImportResult(Catalog(items), rows_read=len(rows), skipped=skipped)


def _tier_id(cloud: str, instance_type: str, rank: int, regions: list[str], used: set[str]) -> str:
    base = f"{cloud}/{instance_type}"
    candidate = base if rank == 0 else f"{base}@{regions[0] if regions else rank}"
    suffix = 2
    unique = candidate
    while unique in used:
        unique, suffix = f"{candidate}#{suffix}", suffix + 1
    used.add(unique)
    return unique


def _validated(data: dict[str, Any], row: SkyRow) -> Instance:
    try:
        return Instance.model_validate(data)
    except ValidationError as exc:
        raise row_error(row.source, row.row, exc) from None


def cloud_of(path: Path) -> str:
    """The cloud a SkyPilot CSV belongs to: '<cloud>/vms.csv' (SkyPilot's layout) or
    '<cloud>[_anything].csv' (the shared extract's layout, e.g. gcp_gpu_host_vms.csv -> gcp)."""
    if path.name == "vms.csv":
        return path.parent.name.lower()
    return path.stem.split("_")[0].lower()


def skypilot_files(path: Path) -> list[Path]:
    """The SkyPilot CSVs at `path`: the file itself, or every CSV below a folder."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise CatalogFileError(
            "path", str(path), "an existing SkyPilot vms.csv or a folder of them"
        )
    files = sorted(path.rglob("*.csv"))
    if not files:
        raise CatalogFileError("path", str(path), "a folder containing SkyPilot *.csv files")
    return files


def import_skypilot(path: Path, as_of: date, source: str | None = None) -> ImportResult:
    """Every GPU instance in the SkyPilot CSV(s) at `path`, all-or-nothing.

    as_of: the date the prices were read (SkyPilot rows carry no date; callers pass the file's
    download date or the catalog's known date)."""
    rows_by_cloud: dict[str, list[SkyRow]] = defaultdict(list)
    for file in skypilot_files(path):
        name = f"{cloud_of(file)}/{file.name}" if file.name == "vms.csv" else file.name
        rows_by_cloud[cloud_of(file)].extend(read_rows(file, source=name))
    result = ImportResult(Catalog())
    for cloud in sorted(rows_by_cloud):
        label = source or f"{SKYPILOT_SOURCE} {cloud} vms.csv"
        result = result.merged(instances_from_rows(cloud, rows_by_cloud[cloud], as_of, label))
    return result


def sky_catalog_dir(home: Path) -> Path | None:
    """The newest `~/.sky/catalogs/<version>/` folder holding any vms.csv, or None."""
    root = home / ".sky" / "catalogs"
    if not root.is_dir():
        return None
    versions = [d for d in root.iterdir() if d.is_dir() and any(d.glob("*/vms.csv"))]
    return max(versions, key=_version_key) if versions else None


def _version_key(folder: Path) -> tuple[int, str]:
    digits = re.sub(r"\D", "", folder.name)
    return (int(digits) if digits else -1, folder.name)


def summarize_skips(skipped: Iterable[tuple[str, int]]) -> str:
    """'3 x no GPU; 2 x fractional GPU' (largest first)."""
    ordered = sorted(skipped, key=lambda kv: (-kv[1], kv[0]))
    return "; ".join(f"{count} x {reason}" for reason, count in ordered) or "none"
