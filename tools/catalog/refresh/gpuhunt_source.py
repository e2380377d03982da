"""dstack's gpuhunt offline catalogs: one provider's current offers, through the gpuhunt package.

gpuhunt (PyPI `gpuhunt`, pinned in pyproject.toml) publishes each offline provider on its own
under its base URL (`gpuhunt._internal.catalog.CATALOG_URL`, overridable by GPUHUNT_CATALOG_URL):
`<base>/<provider>/version` holds the current version, `<base>/<provider>/<version>/catalog.zip`
holds `<provider>.csv` (the columns of `gpuhunt._internal.storage.CATALOG_V2_FIELDS`). This is the
layout gpuhunt's own `Catalog.load()` reads. We fetch the same two files ourselves, per provider,
because `Catalog(auto_reload=False).load()` downloads every provider in one call without a
timeout or a size cap and keeps no per-provider error; each row is then read by gpuhunt's own
parser (`storage.item_from_row`). Only the offline providers are fetched: the online ones
(Vast.ai, DigitalOcean, ...) are live marketplace APIs, which a refresh never calls.

A row is one (instance, location) offer, on demand or spot, priced for the whole instance (GCP
rows include their accelerators). Offers of one instance in one location are paired, then tiered
by price like SkyPilot's rows (`tools.catalog.skypilot.instances_from_rows`).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import re
import zipfile
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from tools.catalog.instances import Catalog
from tools.catalog.refresh.http import FetchError, HttpPolicy, Unreachable, fetch
from tools.catalog.refresh.models import ProviderPlan, RefreshConfig
from tools.catalog.refresh.parsed import (
    Download,
    NotModified,
    Parsed,
    SnapshotError,
    unknown_gpus,
)
from tools.catalog.refresh.state import SnapshotState
from tools.catalog.skypilot import instances_from_rows
from tools.catalog.skypilot_rows import SkyRow

# gpuhunt's provider names that differ from ours.
OURS = {"lambdalabs": "lambda"}
REQUIRED = ("instance_name", "location", "price", "gpu_count", "gpu_name", "spot")
_VERSION = re.compile(r"[A-Za-z0-9._-]{1,64}")
MAX_CSV_BYTES = 1024 * 2**20  # uncompressed; aws.csv is tens of MB


def offline_providers() -> dict[str, str]:
    """Our provider key -> gpuhunt's name, for every gpuhunt offline provider."""
    from gpuhunt._internal.catalog import OFFLINE_PROVIDERS

    return {OURS.get(name, name): name for name in OFFLINE_PROVIDERS}


def base_url(config: RefreshConfig) -> str:
    from gpuhunt._internal.catalog import CATALOG_URL

    return (config.gpuhunt_url or CATALOG_URL).rstrip("/")


def download(
    plan: ProviderPlan,
    state: SnapshotState | None,
    config: RefreshConfig,
    policy: HttpPolicy,
    unreachable: Unreachable,
    force: bool,
) -> NotModified | Download:
    """The provider's current catalog.zip, or NotModified when the published version is the one
    already held."""
    base = base_url(config)
    small = dataclasses.replace(policy, max_bytes=4096)  # a version string
    raw = fetch(f"{base}/{plan.remote}/version", small, unreachable=unreachable).body
    version = raw.decode("utf-8", "replace").strip()
    if not _VERSION.fullmatch(version):
        raise FetchError(f"unexpected version text {version[:40]!r}")
    if state is not None and state.version == version and not force:
        return NotModified(version)
    url = f"{base}/{plan.remote}/{version}/catalog.zip"
    return Download(version, url, fetch(url, policy, unreachable=unreachable).body)


def parse(plan: ProviderPlan, got: Download, now: datetime) -> Parsed:
    """The instances of one provider's catalog.zip (raises SnapshotError if it is unusable)."""
    version, url = got.version, got.url
    try:
        archive = zipfile.ZipFile(io.BytesIO(got.body))
        member = archive.getinfo(f"{plan.remote}.csv")
    except (zipfile.BadZipFile, KeyError, OSError) as exc:
        raise SnapshotError(f"truncated or corrupt catalog.zip ({exc})") from None
    if member.file_size > MAX_CSV_BYTES:
        raise SnapshotError(f"{plan.remote}.csv unpacks to {member.file_size:,} bytes (too large)")
    skipped: Counter[str] = Counter()
    try:
        with archive.open(member) as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
            reader = csv.DictReader(text)
            header = list(reader.fieldnames or [])
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise SnapshotError(f"header lacks {', '.join(missing)} (has {', '.join(header)})")
            offers, rows_read = _offers(reader, plan.remote, skipped)
    except (zipfile.BadZipFile, EOFError, OSError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"truncated or corrupt {plan.remote}.csv ({exc})") from None
    label = f"gpuhunt {plan.remote} catalog {version} ({url})"
    catalog, skipped = catalog_from_offers(plan, offers, skipped, label, now)
    return Parsed(header, rows_read, catalog, dict(skipped), unknown_gpus(skipped))


OfferKey = tuple[str, str, int, str]  # instance name, GPU name, GPU count, location


def _offers(
    reader: csv.DictReader[str], remote: str, skipped: Counter[str]
) -> tuple[dict[OfferKey, dict[str, Any]], int]:
    """On-demand and spot offers paired per (instance, GPU, count, location)."""
    from gpuhunt._internal.storage import item_from_row

    offers: dict[OfferKey, dict[str, Any]] = {}
    rows_read = 0
    last_short = False
    for row in reader:
        rows_read += 1
        last_short = None in row.values()
        count = (row.get("gpu_count") or "").strip()
        if count in ("", "0"):
            skipped["no GPU"] += 1
            continue
        try:
            item = item_from_row(row, provider=remote)
        except (ValueError, TypeError) as exc:
            skipped[f"malformed row ({str(exc)[:60]})"] += 1
            continue
        add_offer(item, offers, skipped)
    if last_short:
        raise SnapshotError(f"truncated CSV: the last of {rows_read:,} rows is cut short")
    return offers, rows_read


def add_offer(item: Any, offers: dict[OfferKey, dict[str, Any]], skipped: Counter[str]) -> None:
    """Pair one gpuhunt CatalogItem into `offers` (or count why it is skipped)."""
    if not item.gpu_count:
        skipped["no GPU"] += 1
        return
    reason = _skip_reason(item)
    if reason is not None:
        skipped[reason] += 1
        return
    key = (item.instance_name, item.gpu_name or "", item.gpu_count, item.location)
    offer = offers.setdefault(key, {"cpu": item.cpu, "memory": item.memory, "mem": item.gpu_memory})
    slot = "spot" if item.spot else "price"
    offer[slot] = min(item.price, offer.get(slot, item.price))


def catalog_from_offers(
    plan: ProviderPlan,
    offers: dict[OfferKey, dict[str, Any]],
    skipped: Counter[str],
    label: str,
    now: datetime,
) -> tuple[Catalog, Counter[str]]:
    """The instances of paired offers, tiered by price; `skipped` gains the importer's reasons."""
    sky_rows = [
        _sky_row(plan.remote, number, key, prices)
        for number, (key, prices) in enumerate(offers.items(), 1)
    ]
    extra = {"origin": "gpuhunt", "fetched_at": now}
    result = instances_from_rows(
        plan.provider, list(_named(sky_rows)), now.date(), label,
        split_gcp_prices=False, extra=extra, lenient=True, memory_per_gpu=True,
    )  # fmt: skip
    skipped.update(result.skipped)
    return result.catalog, skipped


def _skip_reason(item: Any) -> str | None:
    vendor = getattr(item.gpu_vendor, "value", item.gpu_vendor)
    if vendor == "google":
        return "TPU (not a GPU)"
    if (item.provider_data or {}).get("is_dws_calendar_mode"):
        return "DWS calendar mode (reserved capacity, not on demand)"
    if item.price is None or item.price <= 0:
        return "no price"
    return None


def _sky_row(remote: str, number: int, key: OfferKey, offer: dict[str, Any]) -> SkyRow:
    name, gpu, count, location = key
    memory = offer.get("mem")
    return SkyRow(
        source=f"{remote}.csv",
        row=number,
        instance_type=name,
        accelerator=gpu,
        count=float(count),
        vcpus=float(offer["cpu"]) if offer.get("cpu") else None,
        ram_gib=float(offer["memory"]) if offer.get("memory") else None,
        price=offer.get("price"),
        spot=offer.get("spot"),
        region=location,
        zone="",
        gpu_mib=round(memory * 1024) if memory else None,
    )


def _named(rows: list[SkyRow]) -> Iterator[SkyRow]:
    """Rows whose instance name carries several GPU shapes (GCP's n1 machines take a T4 or a V100,
    RunPod's GPU types come in 1 to 8) are renamed '<name>+<count>x<GPU>'."""
    shapes: dict[str, set[tuple[str, float]]] = {}
    for row in rows:
        shapes.setdefault(row.instance_type, set()).add((row.accelerator, row.count))
    for row in rows:
        if len(shapes[row.instance_type]) > 1:
            name = f"{row.instance_type}+{int(row.count)}x{row.accelerator}"
            row = SkyRow(**{**row.__dict__, "instance_type": name})
        yield row
