"""Check a file of added published cases before it joins the evidence, without estimating.

    python -m benchmarks.published_runs.check_added FILE [FILE ...]

A memory file (cases with `gpu_advisor_flags`) has each case's flags parsed by the CLI's own
parser and its stack read; a throughput file (cases with `expected`) has each case read as the
time benchmark reads it (job, GPU). Both check the fields the benchmarks need, unique ids across
the given files and the shared set, and that no case cites a source file of the shared set (the
added evidence must come from sources not yet in it). Nothing is estimated: the checker says
whether a case can be scored, never how it scores, so that adding a case cannot depend on its
result.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.published_runs.cases import load_cases, shared_calibration, write_configs

_MEMORY_FIELDS = (
    "id", "kind", "source", "model", "method", "metric_class", "outcome", "gpu_type",
    "gpu_capacity_gib", "gpu_advisor_flags",
)  # fmt: skip
_SOURCE_FIELDS = ("repo", "path", "commit", "quote")
_METRIC_CLASSES = ("allocated", "reserved", "device")
VISION_CASES = Path(__file__).parents[1] / "vision_published" / "cases.json"


def _shared_sources() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for path in _dev_files():
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            found.add((case["source"]["repo"], case["source"]["path"]))
    return found


def _dev_files() -> list[Path]:
    names = ("gpu_memory_published.json", "training_throughput_published.json")
    files = [shared_calibration() / name for name in names]
    return [p for p in [*files, VISION_CASES] if p.is_file()]


def _shared_ids() -> set[str]:
    ids: set[str] = set()
    for path in _dev_files():
        ids |= {c["id"] for c in json.loads(path.read_text(encoding="utf-8"))["cases"]}
    return ids


def _source_problems(raw: dict[str, Any], shared: set[tuple[str, str]]) -> list[str]:
    source = raw.get("source") or {}
    problems = [f"source.{name} missing" for name in _SOURCE_FIELDS if not source.get(name)]
    if (source.get("repo"), source.get("path")) in shared:
        problems.append("cites a source file of the shared development set")
    return problems


def check_memory_case(raw: dict[str, Any], configs: Path) -> list[str]:
    """What stops a memory case from being scored (empty when nothing does)."""
    from benchmarks.published_runs.cases import PublishedCase
    from benchmarks.published_runs.memory import case_spec

    problems = [f"{name} missing" for name in _MEMORY_FIELDS if raw.get(name) in (None, "")]
    if raw.get("metric_class") not in _METRIC_CLASSES:
        problems.append(f"metric_class {raw.get('metric_class')!r} not in {_METRIC_CLASSES}")
    if raw.get("outcome") == "ran" and raw.get("kind") == "measured_peak":
        measured = raw.get("measured") or {}
        if not isinstance(measured.get("bytes"), int) or measured["bytes"] <= 0:
            problems.append("measured.bytes must be a positive integer")
    if problems:
        return problems
    try:
        case_spec(PublishedCase.model_validate(raw), configs)
    except Exception as error:
        problems.append(f"flags do not parse: {type(error).__name__}: {error}")
    return problems


def check_throughput_case(raw: dict[str, Any]) -> list[str]:
    """What stops a throughput case from being scored (empty when nothing does)."""
    from benchmarks.published_runs.time_cases import ThroughputCase, case_gpu, case_job

    try:
        case = ThroughputCase.model_validate(raw)
        case_job(case)
        case_gpu(case)
    except Exception as error:
        return [f"{type(error).__name__}: {error}"]
    if not case.expected.get("seconds_per_1e9_tokens") and case.gpu.count:
        return ["expected.seconds_per_1e9_tokens missing"]
    return []


def check_vision_case(raw: dict[str, Any]) -> list[str]:
    """What stops an image-model case (benchmarks/vision_published layout) from being scored."""
    from tools.architectures.diffusion import DiffusionModel
    from tools.architectures.multimodal import find_multimodal
    from tools.memory import EstimateInput
    from tools.memory.images.diffusion import DiffusionJob

    problems = [f"{name} missing" for name in ("kind", "gib", "model", "settings", "gpu")
                if raw.get(name) in (None, "")]  # fmt: skip
    if raw.get("kind") not in ("fits", "exceeds", "measured"):
        problems.append(f"kind {raw.get('kind')!r} not in fits, exceeds, measured")
    model = find_multimodal(str(raw.get("model")))
    if model is None:
        return [*problems, f"{raw.get('model')!r} is not a built-in image model"]
    settings = dict(raw.get("settings") or {})
    try:
        if isinstance(model, DiffusionModel):
            DiffusionJob(model=model, **settings)
        else:
            vlm_only = ("text_tokens", "images_per_sample", "resolution", "train_vision_tower",
                        "train_projector")  # fmt: skip
            lm = {k: v for k, v in settings.items() if k not in vlm_only}
            EstimateInput(model=model.language, **lm)
    except Exception as error:
        problems.append(f"settings do not build a job: {type(error).__name__}: {error}")
    return problems


def check_file(path: Path, seen: set[str], shared: set[tuple[str, str]]) -> list[str]:
    """Problems of every case in `path`, each line prefixed with the case id."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        if not any("settings" in raw for raw in data["cases"]):
            write_configs(load_cases(path).cases, Path(tmp))
        for raw in data["cases"]:
            case_id = str(raw.get("id"))
            problems = _source_problems(raw, shared)
            if case_id in seen:
                problems.append("id used twice")
            seen.add(case_id)
            if "gpu_advisor_flags" in raw:
                problems += check_memory_case(raw, Path(tmp))
            elif "settings" in raw:
                problems += check_vision_case(raw)
            else:
                problems += check_throughput_case(raw)
            out += [f"{path.name}: {case_id}: {p}" for p in problems]
    return out


def main(argv: list[str] | None = None) -> int:
    paths = [Path(p) for p in (argv if argv is not None else sys.argv[1:])]
    if not paths:
        print("usage: python -m benchmarks.published_runs.check_added FILE [FILE ...]")
        return 2
    seen, shared = _shared_ids(), _shared_sources()
    problems = [line for path in paths for line in check_file(path, seen, shared)]
    print("\n".join(problems) if problems else f"{len(seen)} ids, no problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
