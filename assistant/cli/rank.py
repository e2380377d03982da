"""`gpu-advisor rank`: cloud instances for a training job, best first, priced for the whole run.

    gpu-advisor rank --model NAME | --params N | --config PATH [job options]
                     [--tokens N | --samples N] [--epochs E] [limits] [--objective cost]
                     [--catalog PATH ...] [--top N] [--json]

Job options are the fields of the job (`tools.job.JobSpec`): how it trains (as for `gpu-advisor
estimate`), the data, the limits and the objective; the ranking chooses the parallel plan per
instance (`--gpus N` asks for clusters of exactly N GPUs). What is left open takes the job's
stated defaults, which the output lists. Without --catalog the built-in catalog is merged with
every saved import (<data_dir>/catalogs/) and Settings.catalog_paths. Money is USD unless a
currency is named, prices per hour for the whole cluster, memory in GiB (2^30 bytes). Heavy
modules and the ranking itself are imported inside the handler, so building the parser stays
light.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.cli.estimate import assumed_lines
from assistant.cli.job_args import add_job_arguments, count, job_spec

if TYPE_CHECKING:
    from assistant.settings import Settings
    from tools.advice import ResolvedJob
    from tools.catalog import Catalog
    from tools.ranking import RankedOption, RankResult

DEFAULT_TOP = 10
GROUPS = ("training", "data", "limits", "num_gpus")

__all__ = ["DEFAULT_TOP", "count", "register", "render", "request_assumptions"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "rank",
        help="rank cloud GPU instances for a training job by total cost, time or hourly price",
        description="Which instances fit the job (plan per instance: DDP, ZeRO-2, ZeRO-3, "
        "multi-node, CPU offload), how long it takes and what it costs, best first; every other "
        "instance with the reason it was left out; the defaults assumed for what is not given. "
        "USD; GiB = 2^30 bytes.",
    )
    add_job_arguments(parser, GROUPS)
    add_assumption_arguments(parser)
    parser.add_argument(
        "--catalog", action="append", type=Path, metavar="PATH",
        help="rank only these catalogs (our YAML/CSV or SkyPilot CSVs/folder; repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--top", type=int, default=DEFAULT_TOP, metavar="N",
        help=f"ranked rows to show (default {DEFAULT_TOP}; 0 = all)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print JSON: job, ranked, excluded")
    parser.set_defaults(handler=handler)


def add_assumption_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--margin", type=float, help="memory safety margin (default 0.10)")
    parser.add_argument("--mfu", type=float, help="use this MFU everywhere (default: modelled)")
    parser.add_argument("--preemption-rate", type=float, metavar="PER_HOUR",
                        help="spot interruptions per node-hour (default 0.05)")  # fmt: skip
    parser.add_argument("--storage-gbps", type=float, metavar="GB_S",
                        help="checkpoint write GB/s per node (default 1)")  # fmt: skip
    parser.add_argument("--restart-minutes", type=float, help="per interruption (default 10)")


def request_assumptions(args: argparse.Namespace) -> dict[str, Any]:
    """RankingAssumptions fields (as plain data) from the assumption flags given."""
    throughput = {"mfu_override": args.mfu}
    spot_terms = {
        "preemption_rate_per_hour": args.preemption_rate,
        "storage_bandwidth_bytes_per_s": None
        if args.storage_gbps is None
        else args.storage_gbps * 1e9,
        "restart_hours": None if args.restart_minutes is None else args.restart_minutes / 60,
    }
    return _given(
        {"memory_margin": args.margin, "throughput": _given(throughput), "spot": _given(spot_terms)}
    )


def _given(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None and v != {}}


def handler(args: argparse.Namespace) -> int:
    from assistant.settings import Settings
    from tools.advice import resolve_job
    from tools.ranking import RankingAssumptions, rank

    settings = Settings()
    catalog = _catalog(args.catalog, settings)
    resolved = resolve_job(job_spec(args, GROUPS), catalog)
    assert resolved.request is not None  # the model is a required flag
    request = resolved.request.model_copy(
        update={
            "top": args.top or None,
            "assumptions": RankingAssumptions.model_validate(request_assumptions(args)),
        }
    )
    from assistant.cli.catalog import cli_now

    result = rank(
        request, catalog.instances, now=cli_now(), stale_price_days=settings.stale_price_days
    )
    if args.json:
        print(json.dumps(as_json(result, resolved), indent=2))
    else:
        print(render(result, resolved))
    return 0


def as_json(result: RankResult, resolved: ResolvedJob) -> dict[str, Any]:
    """The ranking as JSON, with the defaults assumed and what was not applied as asked."""
    data = result.model_dump(mode="json")
    data["assumed"] = [a.model_dump(mode="json") for a in resolved.shown_assumptions("rank")]
    data["notices"] = [n.model_dump(mode="json") for n in resolved.notices]
    return data


def _catalog(paths: list[Path] | None, settings: Settings) -> Catalog:
    """The --catalog files merged in order; else built-in + saved imports + settings' files."""
    from datetime import date

    from tools.catalog.instances import Catalog
    from tools.catalog.store import import_catalog, load_catalog

    if not paths:
        return load_catalog(settings.data_dir, settings.catalog_paths)
    catalog = Catalog()
    for path in paths:
        catalog = catalog.merged(import_catalog(path, None, date.today()).catalog)
    return catalog


def _table_cells(row: RankedOption) -> tuple[str, str, str, str, str]:
    gpus = f"{row.gpu_count} x {row.gpu}" + (f" ({row.nodes} nodes)" if row.nodes > 1 else "")
    memory = f"{row.need_per_gpu_bytes / 2**30:.1f}/{row.vram_per_gpu_bytes / 2**30:.0f}"
    spot = "-" if row.spot_total_cost is None else f"{row.spot_total_cost:,.2f}"
    return row.instance_id, gpus, memory, spot, _age_cell(row)


def _age_cell(row: RankedOption) -> str:
    """'3h', '187d', '187d*' (stale), '-' without a clock."""
    if row.price_age_days is None or row.price_age_hours is None:
        return "-"
    if row.fetched_at is not None and row.price_age_hours < 48:
        cell = f"{row.price_age_hours:.0f}h"
    else:
        cell = f"{row.price_age_days}d"
    return cell + ("*" if row.stale else "")


def render(result: RankResult, resolved: ResolvedJob | None = None) -> str:
    """A table of the ranked rows, the exclusions by rule, the defaults assumed, what was not
    applied as asked, and the ranking's assumptions."""
    job = result.job
    rows = [_table_cells(row) for row in result.ranked]
    width = max([len(cells[0]) for cells in rows] + [8])
    gpus_width = max([len(cells[1]) for cells in rows] + [4])
    size = f"{job.tokens / 1e6:,.1f}M tokens"
    if job.images is not None:  # diffusion: the images trained on; VLMs: image-text samples
        size = f"{job.images:,.0f} " + (f"samples, {size}" if job.tokens else "images")
    lines = [
        f"{job.model}: {job.method}, {job.precision}, {size}, "
        f"{job.training_flops:.3g} FLOPs; objective: {job.objective}",
        "",
        f"{'#':>3} {'instance':<{width}} {'GPUs':<{gpus_width}} {'plan':<22} "
        f"{'GiB need/VRAM':>13} {'pricing':<9} {'$/h':>9} {'hours':>8} {'total $':>11} "
        f"{'spot $':>11} {'age':>5}",
    ]
    for row, (name, gpus, memory, spot, age) in zip(result.ranked, rows, strict=True):
        lines.append(
            f"{row.rank:>3} {name:<{width}} {gpus:<{gpus_width}} {row.plan_label:<22} "
            f"{memory:>13} {row.pricing:<9} {row.price_per_hour:>9,.2f} {row.hours:>8,.1f} "
            f"{row.total_cost:>11,.2f} {spot:>11} {age:>5}"
        )
    kinds = Counter(item.kind for item in result.excluded)
    lines += [
        "",
        f"{len(result.ranked)} shown of {result.feasible} qualifying; {result.considered} "
        f"considered; {len(result.excluded)} excluded"
        + (": " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()) if kinds else ""),
    ]
    if result.prices:
        lines += ["", "Prices of the ranked rows (age; * = stale):"]
        lines += [f"  {summary.text}" for summary in result.prices]
    if result.ranked:
        lines += ["", f"Why #1 ({result.ranked[0].instance_id}):"]
        lines += [f"  - {reason}" for reason in result.ranked[0].reasons]
    if resolved is not None:
        shown = resolved.shown_assumptions("rank")
        lines += ["", *assumed_lines(shown)] if shown else []
        lines += (
            ["", "Not applied:", *(f"  - {n.message}" for n in resolved.notices)]
            if (resolved.notices)
            else []
        )
    lines += ["", "Assumptions:", *(f"  - {text}" for text in job.assumptions)]
    return "\n".join(lines)
