"""Does the ranking offer the shapes published runs ran on? Each run becomes a ranking of one
synthetic instance of its GPU, for exactly its GPU count.

    python -m benchmarks.published_runs.time_shapes [--shared ../shared]

Runs: every throughput case with a GPU count (training_throughput_published.json, read as the
time benchmark reads it) and every memory case that ran (gpu_memory_published.json, its
`gpu_advisor_flags` read by the CLI's own parser, `{configs}` written from the case's own
config; the plan flags are dropped, as the ranking chooses its plan, except a stated
tensor-parallel degree). The instance: the run's GPU with the
run's usable memory, 8 per node (fewer when the run used fewer), sold as InfiniBand clusters.
Reported per run: the plan the ranking chose, or why it refused; 'offload' where it chose CPU
offload for a run that had none. A refusal for memory is the estimator's verdict (its accuracy
is the memory side's benchmark); this checks that the plan search reaches the runs' shapes.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

from assistant.cli.job_args import add_job_arguments, job_spec
from benchmarks.published_runs.cases import PublishedCase
from benchmarks.published_runs.memory import case_spec
from benchmarks.published_runs.time_cases import case_job, load_cases
from tools.advice import resolve_job
from tools.catalog.instances import Instance
from tools.errors import AdvisorError
from tools.gpus import find_gpu, matching_gpu_ids
from tools.job.spec import MECHANISM_FIELDS
from tools.memory import EstimateInput
from tools.ranking import RankRequest, Workload, rank
from tools.ranking.plans import is_offload

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
THROUGHPUT = Path("calibration") / "training_throughput_published.json"
MEMORY = Path("calibration") / "gpu_memory_published.json"
_PLAN_FLAGS = {"--gpus": 1, "--zero": 1, "--offload-optimizer": 0, "--engine": 1}


def instance_for(gpu: str, vram_gib: float | None, gpus: int) -> Instance:
    """One synthetic instance of `gpu`, up to 8 per node, sold as InfiniBand clusters."""
    per_node = min(8, gpus)
    fields: dict[str, Any] = {
        "provider": "published",
        "instance_type": f"{gpu}-{per_node}x",
        "gpu": gpu,
        "gpu_count": per_node,
        "interconnect": "nvswitch" if per_node > 1 else "pcie",
        "network": "infiniband",
        "network_gbps": 3200,
        "multi_node": True,
        "price_per_hour": 1.0,
        "spot_available": False,
        "billing_granularity": "second",
        "min_charge_seconds": 0,
        "persistent_volumes": True,
        "source": "synthetic",
        "as_of": date(2026, 1, 1),
    }
    if vram_gib is not None:
        fields["vram_per_gpu_gib"] = vram_gib
    return Instance(**fields)


def check(job: EstimateInput, gpu: str, vram_gib: float | None, gpus: int, offload: bool) -> str:
    """The ranking's verdict on `job` for exactly `gpus` GPUs of `gpu`, in words."""
    request = RankRequest(
        job=job,
        workload=Workload(tokens=1e8),
        constraints={"min_gpus": gpus, "max_gpus": gpus, "max_nodes": max(1, gpus // 8)},
    )
    result = rank(request, [instance_for(gpu, vram_gib, gpus)])
    if result.ranked:
        row = result.ranked[0]
        flag = " [offload; the run had none]" if is_offload(row.plan) and not offload else ""
        return f"ranked: {row.plan_label}{flag}"
    excluded = result.excluded[0]
    return f"refused ({excluded.kind}): {excluded.reason}"


def throughput_runs(shared: Path) -> list[tuple[str, str]]:
    rows = []
    for case in load_cases(shared / THROUGHPUT):
        if case.gpu.count is None or case.kind == "minutes_per_1k_iterations":
            continue
        verdict = check(case_job(case), case.gpu.type, None, case.gpu.count, case.cpu_offload)
        rows.append((case.id, verdict))
    return rows


def memory_gpu(name: str) -> str | None:
    """The GPU id a memory case's 'gpu_type' names ('H100-96GB-HBM2e' -> H100-SXM, the form
    factor of 8-GPU boards; the case's own capacity is used as the instance's memory)."""
    base = name.split("-HBM")[0]
    found = find_gpu(base)
    if found is not None:
        return found.id
    for candidate in (base, re.sub(r"-\d+GB$", "", base)):
        try:
            ids = sorted(matching_gpu_ids(candidate))
        except AdvisorError:
            continue
        return next((i for i in ids if "SXM" in i), ids[0])
    return None


def memory_runs(shared: Path, configs: Path) -> list[tuple[str, str]]:
    """Every memory case that ran; configs named by '{configs}' are written under `configs`."""
    data = json.loads((shared / MEMORY).read_text(encoding="utf-8"))
    parser = argparse.ArgumentParser()
    add_job_arguments(parser, ("training", "plan"))
    rows = []
    for case in data["cases"]:
        if case["outcome"] != "ran":
            continue
        gpu = memory_gpu(str(case.get("gpu_type", "")))
        if gpu is None:
            rows.append((case["id"], f"skipped: unknown GPU {case.get('gpu_type')}"))
            continue
        model = case["model"]
        if "config" in model:
            folder = configs / model["config_key"]
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "config.json").write_text(json.dumps(model["config"]), encoding="utf-8")
        flags = [f.replace("{configs}", str(configs)) for f in case.get("gpu_advisor_flags", [])]
        try:
            args = parser.parse_args(_without_plan(flags))
            spec = job_spec(args, ("training", "plan"))
            # the stack it ran on and the mechanisms its words name, as the memory benchmark
            # reads them (the plan is left to the ranking)
            ran_on = case_spec(PublishedCase.model_validate(case), configs)
            kept = {n: getattr(ran_on, n) for n in ("stack", *MECHANISM_FIELDS)}
            spec = spec.model_copy(update={n: v for n, v in kept.items() if v is not None})
            resolved = resolve_job(spec)
        except (AdvisorError, SystemExit) as exc:
            rows.append((case["id"], f"skipped: flags not accepted ({exc})"))
            continue
        assert resolved.estimate_input is not None
        vram = float(case["gpu_capacity_gib"])
        rows.append((case["id"], check(resolved.estimate_input, gpu, vram, case["gpus"], False)))
    return rows


def verdicts(shared: Path) -> list[tuple[str, str]]:
    """(run id, the ranking's verdict) for every published run with a GPU count."""
    with tempfile.TemporaryDirectory() as configs:
        return throughput_runs(shared) + memory_runs(shared, Path(configs))


def _without_plan(flags: list[str]) -> list[str]:
    out, skip = [], 0
    for flag in flags:
        if skip:
            skip -= 1
            continue
        if flag in _PLAN_FLAGS:
            skip = _PLAN_FLAGS[flag]
            continue
        out.append(flag)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=SHARED)
    args = parser.parse_args(argv)
    rows = verdicts(args.shared)
    for case_id, verdict in rows:
        print(f"| `{case_id}` | {verdict} |")
    checked = [v for _, v in rows if not v.startswith("skipped")]
    refused = sum(v.startswith("refused (memory)") for v in checked)
    offload = sum("[offload" in v for v in checked)
    print(f"\n{len(checked)} runs checked ({len(rows) - len(checked)} skipped): {refused} refused"
          f" for memory, {offload} given CPU offload they did not use")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
