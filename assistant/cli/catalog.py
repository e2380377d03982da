"""`gpu-advisor catalog`: list, show and import cloud GPU instance types.

    gpu-advisor catalog list [--gpu NAME] [--min-vram GIB] [--provider P ...] [--region R ...]
                             [--max-price USD] [--spot] [--min-gpus N] [--max-gpus N] [--json]
    gpu-advisor catalog show ID [--json]
    gpu-advisor catalog import [PATH] [--format skypilot|csv|yaml] [--as-of YYYY-MM-DD]

`list` and `show` use the built-in catalog merged with every saved import and the files in
Settings.catalog_paths. `import` validates the whole source first, then writes it atomically under
<data_dir>/catalogs/; without PATH it imports SkyPilot's downloaded catalogs from ~/.sky/catalogs/.
Settings are read once per command, in the handler; the catalog code is imported there too.
"""

from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assistant.settings import Settings
    from tools.catalog.instances import Catalog, Instance


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("catalog", help="list, show or import cloud GPU instance types")
    commands = parser.add_subparsers(dest="catalog_command", metavar="{list,show,import}")
    parser.set_defaults(handler=lambda _args: _usage(parser))

    listing = commands.add_parser(
        "list", help="instance types matching the filters, cheapest first"
    )
    listing.add_argument(
        "--gpu",
        action="append",
        help="GPU name or alias; a family (H100, A100) matches all its variants (repeatable)",
    )
    listing.add_argument("--min-vram", type=float, metavar="GIB", help="minimum GiB per GPU")
    listing.add_argument("--provider", action="append", help="provider key, e.g. aws (repeatable)")
    listing.add_argument("--region", action="append", help="region name (repeatable)")
    listing.add_argument("--max-price", type=float, metavar="USD", help="max USD per hour")
    listing.add_argument("--spot", action="store_true", help="only spot offers; prices are spot")
    listing.add_argument("--min-gpus", type=int, metavar="N", help="minimum GPUs per instance")
    listing.add_argument("--max-gpus", type=int, metavar="N", help="maximum GPUs per instance")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.set_defaults(handler=list_handler)

    show = commands.add_parser("show", help="every field of one instance type")
    show.add_argument("id", help="instance id, e.g. aws/p5.48xlarge")
    show.add_argument("--json", action="store_true", help="print JSON instead of text")
    show.set_defaults(handler=show_handler)

    imp = commands.add_parser("import", help="validate a catalog and save it in the data dir")
    imp.add_argument("path", nargs="?", type=Path, help="file or folder (default: ~/.sky/catalogs)")
    imp.add_argument("--format", choices=("skypilot", "csv", "yaml"), help="default: detected")
    imp.add_argument(
        "--as-of",
        type=date.fromisoformat,
        metavar="YYYY-MM-DD",
        help="date SkyPilot prices were read (default: the files' modification date)",
    )
    imp.set_defaults(handler=import_handler)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _load(settings: Settings) -> Catalog:
    from tools.catalog.store import load_catalog

    return load_catalog(settings.data_dir, settings.catalog_paths)


def row(item: Instance, today: date, max_age_days: int) -> dict[str, Any]:
    """Every Instance field plus its price age and STALE flag on `today`."""
    return {
        **item.model_dump(mode="json"),
        "price_age_days": item.price_age_days(today),
        "stale": item.is_stale(today, max_age_days),
    }


def _money(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def list_handler(args: argparse.Namespace) -> int:
    from assistant.settings import Settings

    settings = Settings()
    today = date.today()
    found = _load(settings).filter(
        gpu=args.gpu,
        min_vram_gib=args.min_vram,
        providers=args.provider,
        regions=args.region,
        max_price=args.max_price,
        spot_only=args.spot,
        min_gpus=args.min_gpus,
        max_gpus=args.max_gpus,
    )
    key = "spot_price_per_hour" if args.spot else "price_per_hour"
    items = sorted(found, key=lambda i: (getattr(i, key) or 0.0, i.id))
    rows = [row(item, today, settings.stale_price_days) for item in items]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    _print_table(rows)
    return 0


def _print_table(rows: list[dict[str, Any]]) -> None:
    width = max([len(r["id"]) for r in rows] + [2])
    print(
        f"{'ID':<{width}} {'GPUS':<20} {'VRAM/GPU':>8} {'INTERCONNECT':<12} {'$/H':>8} "
        f"{'SPOT $/H':>8} {'BILLING':<8} {'AS_OF':<10} STALE"
    )
    for r in rows:
        gpus = f"{r['gpu_count']}x {r['gpu']}"
        print(
            f"{r['id']:<{width}} {gpus:<20} {r['vram_per_gpu_gib']:>7.0f}G "
            f"{r['interconnect']:<12} {_money(r['price_per_hour']):>8} "
            f"{_money(r['spot_price_per_hour']):>8} {r['billing_granularity']:<8} "
            f"{r['as_of']:<10} {'STALE' if r['stale'] else ''}"
        )
    print(f"{len(rows)} instance types; prices USD per hour for the whole instance")


def show_handler(args: argparse.Namespace) -> int:
    from assistant.settings import Settings

    settings = Settings()
    item = _load(settings).get(args.id)
    data = row(item, date.today(), settings.stale_price_days)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    for name, value in data.items():
        shown = ", ".join(value) if isinstance(value, list) else value
        print(f"{name:<22} {shown}")
    return 0


def import_handler(args: argparse.Namespace) -> int:
    from assistant.settings import Settings
    from tools.catalog.skypilot import sky_catalog_dir, summarize_skips
    from tools.catalog.store import detect_format, import_catalog, import_name, save_import
    from tools.errors import InvalidInputError

    settings = Settings()
    path: Path | None = args.path
    if path is None:
        path = sky_catalog_dir(Path.home())
        if path is None:
            raise InvalidInputError(
                "path", None, "a catalog file or folder (no ~/.sky/catalogs/<version>/ found)"
            )
    fmt = args.format or detect_format(path)
    result = import_catalog(path, fmt, date.today(), as_of=args.as_of)
    saved = save_import(result.catalog, settings.data_dir, import_name(path, fmt))
    print(
        f"imported {len(result.catalog)} instance types from {path} "
        f"({result.rows_read} rows read; skipped {result.skipped_total}: "
        f"{summarize_skips(result.skipped.items())})"
    )
    print(f"saved to {saved}")
    return 0
