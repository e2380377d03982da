"""Catalog refresh at scale: a >= 50k-row gpuhunt-format catalog refreshed, loaded and ranked.

    .venv/bin/python -m benchmarks.catalog_refresh [--rows 50000] [--repeat 3] [--update-readme]

The fixture is one gpuhunt provider ("aws") written with gpuhunt's own `storage.item_to_row`,
zipped as `v3/aws/<version>/catalog.zip` and served from 127.0.0.1 by `http.server` (no network).
Its rows are the real GPU instance shapes of the SkyPilot AWS, Lambda and Nebius extracts in
../shared/catalogs/skypilot (GPU, count, vCPUs, RAM), each given a distinct instance name and a
seeded random price (so every row stays its own instance type), half with a spot row, plus one
CPU-only row per 20 (skipped, as in gpuhunt's real catalogs). Measured: the refresh (download,
parse, validate, atomic write) as wall and CPU seconds and the process's peak RSS; then
`load_catalog` (built-in + snapshot, the merge rules) and `rank` over the loaded catalog, the
CLI's default top 20 and every row.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import random
import resource
import statistics
import sys
import tempfile
import threading
import time
import zipfile
from datetime import date
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parent / "README.md"
SECTION = "## Catalog refresh"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "catalogs" / "skypilot"
FALLBACK_SHAPES = [
    ("H100", 8, 192, 2048, 80.0),
    ("A100", 8, 96, 1152, 40.0),
    ("L4", 1, 4, 16, 24.0),
]


def shapes() -> list[tuple[str, int, int, float, float]]:
    """(GPU name, count, vCPUs, RAM GiB, GPU GiB) of the real SkyPilot rows, else a fallback."""
    found: set[tuple[str, int, int, float, float]] = set()
    for name in ("aws.csv", "lambda.csv", "nebius.csv"):
        path = SHARED / name
        if not path.is_file():
            continue
        for row in csv.DictReader(path.open()):
            if row["AcceleratorName"] and row["vCPUs"] and row["MemoryGiB"]:
                count = int(float(row["AcceleratorCount"]))
                found.add((row["AcceleratorName"], count, int(float(row["vCPUs"])),
                           float(row["MemoryGiB"]), 80.0))  # fmt: skip
    return sorted(found) or FALLBACK_SHAPES


def fixture_zip(rows: int, seed: int = 7) -> tuple[bytes, int]:
    """(catalog.zip bytes, data rows) of a gpuhunt aws catalog with about `rows` rows."""
    from gpuhunt._internal.storage import CATALOG_V2_FIELDS, item_to_row

    rng = random.Random(seed)
    pool = shapes()
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CATALOG_V2_FIELDS)
    writer.writeheader()
    written = 0
    for i in range(rows):
        gpu, count, cpus, ram, _ = pool[i % len(pool)]
        price = round(count * rng.uniform(0.4, 6.0), 4)
        shape = {"instance_name": f"{gpu.lower()}.{count}x-{i}", "location": f"region-{i % 40}",
                 "cpu": cpus, "memory": ram}  # fmt: skip
        writer.writerow(item_to_row(_offer(shape, gpu, count, price, False)))
        written += 1
        if i % 2 == 0:
            writer.writerow(item_to_row(_offer(shape, gpu, count, round(price * 0.4, 4), True)))
            written += 1
        if i % 20 == 0:
            writer.writerow(item_to_row(_offer(shape, None, 0, 0.1, False)))
            written += 1
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("aws.csv", out.getvalue())
    return buffer.getvalue(), written


def _offer(shape: dict[str, Any], gpu: str | None, count: int, price: float, spot: bool) -> Any:
    from gpuhunt import AcceleratorVendor, CatalogItem

    return CatalogItem(
        provider="aws", price=price, gpu_count=count, gpu_name=gpu, gpu_memory=None, spot=spot,
        disk_size=None, gpu_vendor=AcceleratorVendor.NVIDIA if count else None, **shape,
    )  # fmt: skip


def serve(folder: Path) -> tuple[ThreadingHTTPServer, str]:
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(folder)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn):  # type: ignore[no-untyped-def]
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000, help="GPU offers (instance types)")
    parser.add_argument("--repeat", type=int, default=3, help="timed rank runs per case")
    parser.add_argument("--update-readme", action="store_true")
    args = parser.parse_args(argv)

    from tools.catalog.refresh import RefreshConfig, refresh_catalogs
    from tools.catalog.store import load_catalog
    from tools.memory import EstimateInput
    from tools.ranking import RankRequest, Workload, rank

    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data, rows = fixture_zip(args.rows)
        folder = root / "www" / "v3" / "aws" / "bench1"
        folder.mkdir(parents=True)
        (folder / "catalog.zip").write_bytes(data)
        (folder.parent / "version").write_text("bench1\n")
        httpd, url = serve(root / "www")
        base_rss = peak_rss_mib()
        config = RefreshConfig(gpuhunt_url=f"{url}/v3", backoff_s=0)
        report, wall, cpu = timed(
            lambda: refresh_catalogs(root / "data", config, providers=["aws"], force=True)
        )
        httpd.shutdown()
        result = report.results[0]
        assert result.status == "updated", result.message
        refresh_rss = peak_rss_mib()
        lines.append(
            f"| refresh (download {len(data) / 2**20:.1f} MiB zip, parse, validate, write) |"
            f" {rows:,} rows -> {result.instances:,} instance types | {wall:.2f} | {cpu:.2f} |"
            f" {refresh_rss:,.0f} (+{refresh_rss - base_rss:,.0f}) |"
        )
        catalog, wall, cpu = timed(lambda: load_catalog(root / "data"))
        lines.append(
            f"| load_catalog (built-in + snapshot, merge rules) | {len(catalog):,} rows |"
            f" {wall:.2f} | {cpu:.2f} | {peak_rss_mib():,.0f} |"
        )
        request = RankRequest(
            job=EstimateInput(
                model="meta-llama/Llama-2-7b-hf",
                method="qlora",
                micro_batch_size=4,
                gradient_checkpointing="full",
            ),
            workload=Workload(tokens=2e8),
            constraints={"spot": "allowed"},
        )
        items = catalog.instances
        for top in (20, None):
            req = request.model_copy(update={"top": top})
            rank(req, items)  # warm
            runs = [timed(lambda r=req: rank(r, items)) for _ in range(args.repeat)]
            res = runs[-1][0]
            lines.append(
                f"| rank, 7B QLoRA, top {top or 'all'} ({res.feasible:,} qualify) |"
                f" {len(items):,} rows | {statistics.median(r[1] for r in runs):.2f} |"
                f" {statistics.median(r[2] for r in runs):.2f} | {peak_rss_mib():,.0f} |"
            )
    for line in lines:
        print(line, flush=True)
    if args.update_readme:
        update_readme(
            lines, "python -m benchmarks.catalog_refresh " + " ".join(argv or sys.argv[1:])
        )
    return 0


def update_readme(table: list[str], command: str) -> None:
    text = README.read_text(encoding="utf-8")
    body = [
        SECTION, "",
        "A gpuhunt-format catalog served from 127.0.0.1 (see `benchmarks/catalog_refresh.py`:",
        "real SkyPilot GPU shapes, distinct instance names, seeded prices, half with spot rows,",
        "one CPU row per 20), refreshed, loaded and ranked in one process.",
        "",
        f"Command: `{command.strip()}` ({date.today().isoformat()}, Python"
        f" {sys.version.split()[0]}, shared 2-core machine at load average"
        f" {os.getloadavg()[0]:.1f}; wall times include other jobs, CPU is this process's).",
        "",
        "| step | size | wall s | CPU s | peak RSS MiB (process) |",
        "|---|---:|---:|---:|---:|",
        *table,
        "",
        "Reading: the refresh spends its time validating rows (about 100 µs each: gpuhunt's row",
        "parser, pairing, tiering, one pydantic `Instance` per instance type) and streams the",
        "snapshot out, so its memory grows with the instances kept, not the text. One RTX6000",
        "(Turing Quadro) shape in 49 has no datasheet entry: those rows are counted as unknown",
        "GPUs and left out, never mapped to another GPU. Ranking 50k rows costs about 5 µs per row",
        "for the CLI's top 20 (shape lookups, billed cost, the heap); materialising every",
        "qualifying row as a full `RankedOption` with its reasons costs 20-40 µs more per row",
        "and most of the memory. The per-instance screen is a few attribute checks per row and",
        "is skipped when no constraint is set, so it is not vectorised: the plan search runs once",
        "per machine shape (49 here), not per row. Loading the snapshot back validates every row",
        "again (the file could have been edited), about 60 µs per row.",
        "",
    ]  # fmt: skip
    section = "\n".join(body)
    start = text.find(SECTION + "\n")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + len(SECTION))
        text = text[:start] + section + ("\n" + text[end + 1 :] if end >= 0 else "")
    README.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
