"""`gpu-advisor catalog`: list, show and import cloud GPU instance types.

    gpu-advisor catalog list [--gpu NAME] [--min-vram GIB] [--provider P ...] [--region R ...]
                             [--max-price USD] [--spot] [--min-gpus N] [--max-gpus N] [--json]
    gpu-advisor catalog show ID [--json]
    gpu-advisor catalog import [PATH] [--format skypilot|csv|yaml] [--as-of YYYY-MM-DD] [--replace]
    gpu-advisor catalog refresh [--providers P ...] [--source gpuhunt|skypilot|all] [--force]
                                [--accept-changes] [--json]

`list` and `show` use the built-in catalog with the refreshed snapshots laid over it, every saved
import and the files in Settings.catalog_paths; every row shows its source and age, and `list`
ends with a summary per provider. `import` validates the whole source first; a newer price replaces
an older row of the same instance and is reported, an older price over a newer row needs --replace;
then it writes the import atomically under <data_dir>/catalogs/;
without PATH it imports SkyPilot's downloaded catalogs from ~/.sky/catalogs/. `refresh` downloads
current offers (tools.catalog.refresh), one line per provider; exit 1 when any provider failed.
Settings are read once per command, in the handler; the catalog code is imported there too.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assistant.settings import Settings
    from tools.catalog.instances import Catalog, Instance


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("catalog", help="list, show or import cloud GPU instance types")
    commands = parser.add_subparsers(dest="catalog_command", metavar="{list,show,import,refresh}")
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
    imp.add_argument(
        "--replace",
        action="store_true",
        help="allow the import's older prices to replace rows with a newer price (a newer"
        " price replaces an older row without it)",
    )
    imp.set_defaults(handler=import_handler)
    _register_refresh(commands)


def _register_refresh(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    refresh = commands.add_parser(
        "refresh",
        help="download current prices (gpuhunt's and SkyPilot's hosted catalogs)",
        description="Download each provider's current offers; a copy younger than its TTL is not"
        " downloaded again, and a failed, truncated or changed download keeps the last good copy.",
    )
    refresh.add_argument(
        "--providers", nargs="+", metavar="P", help="provider keys (default: all the sources have)"
    )
    refresh.add_argument("--source", choices=("gpuhunt", "skypilot", "all"), default="all")
    refresh.add_argument("--force", action="store_true", help="ignore TTLs and versions")
    refresh.add_argument(
        "--accept-changes",
        action="store_true",
        help="take a copy whose header changed or that lost more than half its rows",
    )
    refresh.add_argument("--json", action="store_true", help="print the report as JSON")
    refresh.set_defaults(handler=refresh_handler)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _load(settings: Settings) -> Catalog:
    from tools.catalog.store import load_catalog

    return load_catalog(settings.data_dir, settings.catalog_paths)


def cli_now() -> datetime:
    """Now in UTC, on the day `date.today()` says (tests pin the day through `date`)."""
    real = datetime.now(UTC)
    day = date.today()
    return real if real.date() == day else datetime.combine(day, time(12), tzinfo=UTC)


def row(item: Instance, now: datetime, max_age_days: int) -> dict[str, Any]:
    """Every Instance field plus $/GPU-hour, its price age (days, hours, words) and STALE flag."""
    from tools.catalog.freshness import catalog_row

    return catalog_row(item, now, max_age_days)


def _money(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def list_handler(args: argparse.Namespace) -> int:
    from assistant.settings import Settings

    settings = Settings()
    now = cli_now()
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
    rows = [row(item, now, settings.stale_price_days) for item in items]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    _print_table(rows)
    from tools.catalog.freshness import provider_summaries

    print("Prices by provider:")
    for summary in provider_summaries(items, now, settings.stale_price_days):
        print(f"  {summary.text}")
    return 0


def _print_table(rows: list[dict[str, Any]]) -> None:
    width = max([len(r["id"]) for r in rows] + [2])
    print(
        f"{'ID':<{width}} {'GPUS':<20} {'VRAM/GPU':>8} {'INTERCONNECT':<12} {'$/H':>8} "
        f"{'SPOT $/H':>8} {'BILLING':<8} {'AS_OF':<10} {'SOURCE':<8} {'AGE':>5} STALE"
    )
    for r in rows:
        gpus = f"{r['gpu_count']}x {r['gpu']}"
        age = f"{r['price_age_hours']:.0f}h" if r["fetched_at"] else f"{r['price_age_days']}d"
        print(
            f"{r['id']:<{width}} {gpus:<20} {r['vram_per_gpu_gib']:>7.0f}G "
            f"{r['interconnect']:<12} {_money(r['price_per_hour']):>8} "
            f"{_money(r['spot_price_per_hour']):>8} {r['billing_granularity']:<8} "
            f"{r['as_of']:<10} {r['origin']:<8} {age:>5} {'STALE' if r['stale'] else ''}"
        )
    print(f"{len(rows)} instance types; prices USD per hour for the whole instance")


def show_handler(args: argparse.Namespace) -> int:
    from assistant.settings import Settings

    settings = Settings()
    item = _load(settings).get(args.id)
    data = row(item, cli_now(), settings.stale_price_days)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    for name, value in data.items():
        shown = ", ".join(value) if isinstance(value, list) else value
        print(f"{name:<22} {shown}")
    return 0


def import_handler(args: argparse.Namespace) -> int:
    from assistant.settings import Settings
    from tools.catalog.merge import describe_overrides
    from tools.catalog.skypilot import sky_catalog_dir, summarize_skips
    from tools.catalog.store import (
        detect_format,
        import_catalog,
        import_name,
        import_overrides,
        save_import,
    )
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
    name = import_name(path, fmt)
    overrides = import_overrides(result.catalog, settings.data_dir, name, settings.catalog_paths)
    older = [o for o in overrides if o.needs_consent]
    if older and not args.replace:
        raise InvalidInputError(
            "import",
            str(path),
            "prices at least as new as the rows they replace, or --replace to put older prices"
            " over newer ones; it would replace " + describe_overrides(older, kind="newer"),
        )
    saved = save_import(result.catalog, settings.data_dir, name)
    print(
        f"imported {len(result.catalog)} instance types from {path} "
        f"({result.rows_read} rows read; skipped {result.skipped_total}: "
        f"{summarize_skips(result.skipped.items())})"
    )
    newer = [o for o in overrides if not o.needs_consent]
    if newer:
        print(f"replaced {describe_overrides(newer, kind='older')}")
    if older:
        print(f"replaced (--replace) {describe_overrides(older, kind='newer')}")
    print(f"saved to {saved}")
    return 0


def refresh_handler(args: argparse.Namespace) -> int:
    from assistant.settings import Settings
    from tools.catalog.refresh import RefreshEvent, refresh_catalogs

    settings = Settings()

    def progress(event: RefreshEvent) -> None:
        if event.stage == "start" and not args.json:
            print(f"[{event.done + 1}/{event.total}] {event.provider} ({event.source}) ...",
                  file=sys.stderr, flush=True)  # fmt: skip

    report = refresh_catalogs(
        settings.data_dir,
        settings.refresh_config(),
        providers=args.providers,
        source=args.source,
        force=args.force,
        accept_changes=args.accept_changes,
        on_progress=progress,
    )
    if args.json:
        print(report.model_dump_json(indent=2))
    else:
        for result in report.results:
            print(f"{result.provider} ({result.source}): {result.message}")
        failed = len(report.failed)
        tail = f"; {failed} failed, their last good copies stay in use" if failed else ""
        print(f"{len(report.results) - failed} of {len(report.results)} providers current{tail}")
    return 0 if report.ok else 1
