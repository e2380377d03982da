"""SkyPilot's hosted catalogs: `<base>/v8/<cloud>/vms.csv` per cloud, for clouds gpuhunt lacks.

The base URL is SkyPilot's HOSTED_CATALOG_DIR_URL (GitHub raw) unless configured; GitHub answers
HTTP 429 when rate-limited, and SkyPilot then reads the same path from its S3 mirror
(HOSTED_CATALOG_DIR_URL_S3_MIRROR; skypilot-org/skypilot sky/catalog/common.py and #5438), as we
do. A request carries the last copy's ETag / Last-Modified, so an unchanged file is answered 304
and not downloaded again. Rows go through the project's SkyPilot importer
(`tools.catalog.skypilot`), GCP's separate accelerator rows joined to their host VMs.
"""

from __future__ import annotations

import csv
import hashlib
import io
from datetime import datetime

from tools.catalog.refresh.http import Fetched, HttpPolicy, Unreachable, fetch
from tools.catalog.refresh.models import SKYPILOT_SCHEMA, ProviderPlan, RefreshConfig
from tools.catalog.refresh.parsed import (
    Download,
    NotModified,
    Parsed,
    SnapshotError,
    unknown_gpus,
)
from tools.catalog.refresh.state import SnapshotState
from tools.catalog.skypilot import SKYPILOT_SOURCE, instances_from_rows
from tools.catalog.skypilot_rows import SkyPilotRowError, read_rows_from

# Clouds with a SkyPilot v8 catalog that gpuhunt publishes no offline catalog for; our keys.
CLOUDS = (
    "cudo", "fluidstack", "hyperbolic", "hyperstack", "ibm", "jarvislabs", "lium", "mithril",
    "primeintellect", "seeweb", "shadeform", "vast", "yotta",
)  # fmt: skip


def catalog_path(plan: ProviderPlan) -> str:
    return f"{SKYPILOT_SCHEMA}/{plan.remote}/vms.csv"


def download(
    plan: ProviderPlan,
    state: SnapshotState | None,
    config: RefreshConfig,
    policy: HttpPolicy,
    unreachable: Unreachable,
    force: bool,
) -> NotModified | Download:
    """The cloud's vms.csv, or NotModified (HTTP 304)."""
    headers: dict[str, str] = {}
    if state is not None and not force:
        if state.etag:
            headers["If-None-Match"] = state.etag
        if state.last_modified:
            headers["If-Modified-Since"] = state.last_modified
    url = f"{config.skypilot_url.rstrip('/')}/{catalog_path(plan)}"
    mirror = config.mirror()
    mirror_url = f"{mirror.rstrip('/')}/{catalog_path(plan)}" if mirror else None
    got = fetch(url, policy, headers=headers, unreachable=unreachable, mirror_on_429=mirror_url)
    if got.status == 304:
        return NotModified(state.version if state else None)
    return Download(_version(got), got.url, got.body, got.etag, got.last_modified)


def _version(got: Fetched) -> str:
    digest = hashlib.sha256(got.body).hexdigest()[:12]
    return got.etag or got.last_modified or f"sha256:{digest}"


def parse(plan: ProviderPlan, got: Download, now: datetime) -> Parsed:
    """The instances of one cloud's vms.csv (raises SnapshotError if it is unusable)."""
    version, url = got.version, got.url
    try:
        text = got.body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SnapshotError(f"not UTF-8 text ({exc.reason})") from None
    header = next(csv.reader(io.StringIO(text[:65536])), [])
    _check_complete(text, len(header))
    try:
        rows = list(read_rows_from(io.StringIO(text, newline=""), f"{plan.remote}/vms.csv"))
    except SkyPilotRowError as exc:
        raise SnapshotError(str(exc)) from None
    label = f"{SKYPILOT_SOURCE} {catalog_path(plan)} {version} ({url})"
    extra = {"origin": "skypilot", "fetched_at": now}
    result = instances_from_rows(plan.provider, rows, now.date(), label, extra=extra, lenient=True)
    skipped = dict(result.skipped)
    return Parsed(header, len(rows), result.catalog, skipped, unknown_gpus(skipped))


def _check_complete(text: str, columns: int) -> None:
    """A file cut mid-row (no final newline, fewer cells than the header) is truncated."""
    if not text.strip():
        raise SnapshotError("empty file")
    if text.endswith(("\n", "\r")):
        return
    last = text.rsplit("\n", 1)[-1]
    cells = next(csv.reader([last]), [])
    if len(cells) < columns:
        raise SnapshotError(
            f"truncated CSV: the last line has {len(cells)} of {columns} cells and no newline"
        )
