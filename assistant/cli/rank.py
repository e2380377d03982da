"""`gpu-advisor rank`: cloud instances for a training job, best first, priced for the whole run.

    gpu-advisor rank --model NAME | --params N | --config PATH [job options]
                     (--tokens N | --samples N) [--epochs E] [constraints] [--objective cost]
                     [--catalog PATH ...] [--top N] [--json]

Job options are the estimator's (`gpu-advisor estimate`), minus the parallel plan (--zero, --gpus,
--offload-optimizer), which the ranking chooses per instance. Without --catalog the built-in
catalog is merged with every saved import (<data_dir>/catalogs/) and Settings.catalog_paths.
Money is USD, prices per hour for the whole cluster, memory in GiB (2^30 bytes). Heavy modules
and the ranking itself are imported inside the handler, so building the parser stays light.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.cli.job_args import add_job_arguments, job_settings

if TYPE_CHECKING:
    from assistant.settings import Settings
    from tools.catalog.instances import Catalog
    from tools.ranking.models import RankedOption, RankResult

DEFAULT_TOP = 10
_SUFFIXES = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "rank",
        help="rank cloud GPU instances for a training job by total cost, time or hourly price",
        description="Which instances fit the job (plan per instance: DDP, ZeRO-2, ZeRO-3, "
        "multi-node, CPU offload), how long it takes and what it costs, best first; every other "
        "instance with the reason it was left out. USD; GiB = 2^30 bytes.",
    )
    add_job_arguments(
        parser,
        "engine of the single-GPU and DDP plans: pytorch (default; torch.autocast over fp32 "
        "weights) or deepspeed; the ZeRO and offload plans are always sized as DeepSpeed runs "
        "them",
    )
    add_workload_arguments(parser)
    add_constraint_arguments(parser)
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


def count(text: str) -> float:
    """'2e8', '200M', '1.5B' -> a number (k, M, B/G, T suffixes)."""
    match = re.fullmatch(r"\s*([0-9.]+(?:e[+-]?\d+)?)\s*([kmbgt]?)\s*", text.lower())
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count such as 2e8, 200M or 1.5B")
    return float(match.group(1)) * _SUFFIXES[match.group(2)]


def add_workload_arguments(parser: argparse.ArgumentParser) -> None:
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--tokens", type=count, help="training tokens per epoch, e.g. 2e8 or 200M")
    size.add_argument("--samples", type=count, help="samples per epoch (x --seq-len tokens)")
    parser.add_argument("--epochs", type=float, default=1.0, help="passes over the data")


def add_constraint_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-price-per-hour", type=float, metavar="USD",
                        help="cap on USD per hour for the whole cluster")  # fmt: skip
    parser.add_argument("--budget", type=float, metavar="USD", help="cap on USD for the run")
    parser.add_argument("--deadline-hours", type=float, metavar="H", help="cap on hours")
    parser.add_argument("--spot", action=argparse.BooleanOptionalAction, default=None,
                        help="--spot: spot prices allowed when they rank better; --no-spot: "
                        "on-demand only (the default)")  # fmt: skip
    parser.add_argument("--spot-required", action="store_true", help="spot offers only")
    parser.add_argument("--providers", action="append", metavar="P[,P]",
                        help="only these providers (comma-separated or repeated)")  # fmt: skip
    parser.add_argument("--regions", action="append", metavar="R[,R]", help="only these regions")
    parser.add_argument("--min-gpus", type=int, metavar="N", help="at least N GPUs in all")
    parser.add_argument("--max-gpus", type=int, metavar="N", help="at most N GPUs in all")
    parser.add_argument("--max-nodes", type=int, metavar="N", help="largest cluster (default 8)")
    parser.add_argument("--interconnect", choices=("nvlink", "nvswitch", "pcie"),
                        help="required GPU link; nvlink also accepts NVSwitch")  # fmt: skip
    parser.add_argument("--objective", choices=("cost", "time", "price"), default="cost",
                        help="cheapest total (default), fastest, or cheapest per hour")  # fmt: skip


def add_assumption_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--margin", type=float, help="memory safety margin (default 0.10)")
    parser.add_argument("--mfu", type=float, help="use this MFU everywhere (default: modelled)")
    parser.add_argument("--preemption-rate", type=float, metavar="PER_HOUR",
                        help="spot interruptions per node-hour (default 0.05)")  # fmt: skip
    parser.add_argument("--storage-gbps", type=float, metavar="GB_S",
                        help="checkpoint write GB/s per node (default 1)")  # fmt: skip
    parser.add_argument("--restart-minutes", type=float, help="per interruption (default 10)")


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def request_data(args: argparse.Namespace) -> dict[str, Any]:
    """RankRequest fields (as plain data) from the parsed flags."""
    spot = "required" if args.spot_required else ("allowed" if args.spot else "never")
    constraints = {
        "max_price_per_hour": args.max_price_per_hour,
        "budget": args.budget,
        "deadline_hours": args.deadline_hours,
        "providers": _split(args.providers),
        "regions": _split(args.regions),
        "spot": spot,
        "min_gpus": args.min_gpus,
        "max_gpus": args.max_gpus,
        "max_nodes": args.max_nodes,
        "interconnect": args.interconnect,
    }
    samples = None if args.samples is None else int(args.samples)
    workload = {"tokens": args.tokens, "samples": samples, "epochs": args.epochs}
    throughput = {"mfu_override": args.mfu}
    spot_terms = {
        "preemption_rate_per_hour": args.preemption_rate,
        "storage_bandwidth_bytes_per_s": None
        if args.storage_gbps is None
        else args.storage_gbps * 1e9,
        "restart_hours": None if args.restart_minutes is None else args.restart_minutes / 60,
    }
    assumptions = {
        "memory_margin": args.margin,
        "throughput": _given(throughput),
        "spot": _given(spot_terms),
    }
    return {
        "workload": _given(workload),
        "constraints": _given(constraints),
        "objective": args.objective,
        "assumptions": _given(assumptions),
        "top": args.top or None,
    }


def _given(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None and v != {}}


def handler(args: argparse.Namespace) -> int:
    from assistant.settings import Settings
    from tools.memory.estimator import EstimateInput
    from tools.ranking.rank import RankRequest, rank

    settings = Settings()
    catalog = _catalog(args.catalog, settings)
    request = RankRequest(job=EstimateInput(**job_settings(args)), **request_data(args))
    result = rank(request, catalog.instances)
    if args.json:
        print(json.dumps(result.model_dump(mode="json"), indent=2))
    else:
        print(render(result))
    return 0


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


def _table_cells(row: RankedOption) -> tuple[str, str, str, str]:
    gpus = f"{row.gpu_count} x {row.gpu}" + (f" ({row.nodes} nodes)" if row.nodes > 1 else "")
    memory = f"{row.need_per_gpu_bytes / 2**30:.1f}/{row.vram_per_gpu_bytes / 2**30:.0f}"
    spot = "-" if row.spot_total_cost is None else f"{row.spot_total_cost:,.2f}"
    return row.instance_id, gpus, memory, spot


def render(result: RankResult) -> str:
    """A table of the ranked rows, the exclusions by rule, and the assumptions."""
    job = result.job
    rows = [_table_cells(row) for row in result.ranked]
    width = max([len(cells[0]) for cells in rows] + [8])
    gpus_width = max([len(cells[1]) for cells in rows] + [4])
    lines = [
        f"{job.model}: {job.method}, {job.precision}, {job.tokens / 1e6:,.1f}M tokens, "
        f"{job.training_flops:.3g} FLOPs; objective: {job.objective}",
        "",
        f"{'#':>3} {'instance':<{width}} {'GPUs':<{gpus_width}} {'plan':<22} "
        f"{'GiB need/VRAM':>13} {'pricing':<9} {'$/h':>9} {'hours':>8} {'total $':>11} "
        f"{'spot $':>11}",
    ]
    for row, (name, gpus, memory, spot) in zip(result.ranked, rows, strict=True):
        lines.append(
            f"{row.rank:>3} {name:<{width}} {gpus:<{gpus_width}} {row.plan_label:<22} "
            f"{memory:>13} {row.pricing:<9} {row.price_per_hour:>9,.2f} {row.hours:>8,.1f} "
            f"{row.total_cost:>11,.2f} {spot:>11}"
        )
    kinds = Counter(item.kind for item in result.excluded)
    lines += [
        "",
        f"{len(result.ranked)} shown of {result.feasible} qualifying; {result.considered} "
        f"considered; {len(result.excluded)} excluded"
        + (": " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()) if kinds else ""),
    ]
    if result.ranked:
        lines += ["", f"Why #1 ({result.ranked[0].instance_id}):"]
        lines += [f"  - {reason}" for reason in result.ranked[0].reasons]
    lines += ["", "Assumptions:", *(f"  - {text}" for text in job.assumptions)]
    return "\n".join(lines)
