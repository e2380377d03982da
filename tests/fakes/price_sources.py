"""Price sources for refresh tests, served by `tests.fakes.catalog_server`: gpuhunt's layout
(`v3/<provider>/version` and `v3/<provider>/<version>/catalog.zip` holding `<provider>.csv`, the
rows written with gpuhunt's own `storage.item_to_row`, so the format is gpuhunt's), and the app
settings that point a refresh at a running server."""

from __future__ import annotations

import csv
import io
import zipfile
from typing import Any

from gpuhunt import AcceleratorVendor, CatalogItem
from gpuhunt._internal.storage import CATALOG_V2_FIELDS, item_to_row

from tests.fakes.catalog_server import CatalogServer, Reply

__all__ = ["catalog_zip", "gpu", "gpuhunt_csv", "publish", "source_settings"]


def gpu(name: str, location: str, price: float, count: int, gpu_name: str | None,
        memory: float | None, spot: bool = False, vendor: str = "nvidia",
        ) -> CatalogItem:  # fmt: skip
    return CatalogItem(
        provider="x", instance_name=name, location=location, price=price, cpu=8 * max(count, 1),
        memory=64.0, gpu_count=count, gpu_name=gpu_name, gpu_memory=memory, spot=spot,
        disk_size=None, gpu_vendor=AcceleratorVendor(vendor) if count else None,
    )  # fmt: skip


def gpuhunt_csv(items: list[CatalogItem], header: list[str] | None = None) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=header or CATALOG_V2_FIELDS, extrasaction="ignore")
    writer.writeheader()
    for item in items:
        writer.writerow(item_to_row(item))
    return out.getvalue().encode()


def catalog_zip(provider: str, csv_bytes: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{provider}.csv", csv_bytes)
    return buffer.getvalue()


def publish(server: CatalogServer, provider: str, version: str, items: list[CatalogItem]) -> None:
    server.set(f"/v3/{provider}/version", Reply(version.encode() + b"\n"))
    server.set(
        f"/v3/{provider}/{version}/catalog.zip", Reply(catalog_zip(provider, gpuhunt_csv(items)))
    )


def source_settings(server: CatalogServer) -> dict[str, Any]:
    """Settings keywords that send the app's refresh to `server` (gpuhunt under /v3, SkyPilot
    under /sky, its mirror under /mirror), nothing else."""
    return {
        "GPUHUNT_CATALOG_URL": f"{server.url}/v3",
        "skypilot_catalog_url": f"{server.url}/sky",
        "skypilot_mirror_url": f"{server.url}/mirror",
    }
