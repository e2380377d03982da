"""The image-model memory estimators against published memory figures and statements.

    python -m benchmarks.vision_published.run [--added | --frozen] [--json FILE]

Each case of cases.json is a published sentence about one setup: it ran on a card of N GB
('fits'), it needs more than N GB ('exceeds'), or it used about N GB ('measured'). The setup's
fields (`settings`) go unchanged to tools.memory.images.diffusion (a diffusion pipeline) or to
tools.memory.images.vision.estimate_vlm (a vision-language model); a 'fits' case passes when the
estimate is at most the card, an 'exceeds' case when it is above the stated figure, a 'measured'
case when the estimate is within +-20 % of it. The ratio estimate / figure is printed for every
case; the summary counts measured figures within +-10 % and +-20 %.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from tools.architectures.diffusion import DiffusionModel
from tools.architectures.multimodal import find_multimodal
from tools.memory.images.diffusion import DiffusionJob, estimate_diffusion
from tools.memory.images.vision import estimate_vlm
from tools.units import GIB

CASES = Path(__file__).with_name("cases.json")
BAND = 0.20


def load_cases(path: Path = CASES) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["cases"]
    return cases


def evaluate(case: dict[str, Any]) -> dict[str, Any]:
    """The estimate for one case, its ratio to the stated figure and whether it agrees."""
    model = find_multimodal(case["model"])
    if model is None:
        raise ValueError(f"{case['id']}: {case['model']!r} is not a built-in image model")
    if isinstance(model, DiffusionModel):
        total = estimate_diffusion(DiffusionJob(model=model, **case["settings"])).per_gpu.total
    else:
        total = estimate_vlm(model, **case["settings"]).per_gpu.total
    gib = total / GIB
    ratio = gib / case["gib"]
    kind = case["kind"]
    if kind == "fits":
        ok = gib <= case["gib"]
    elif kind == "exceeds":
        ok = gib > case["gib"]
    else:
        ok = abs(ratio - 1) <= BAND
    return {"id": case["id"], "kind": kind, "stated_gib": case["gib"], "estimate_gib": gib,
            "ratio": ratio, "agrees": ok}  # fmt: skip


def chosen_cases(added: bool = False, frozen: bool = False) -> list[dict[str, Any]]:
    """The development cases, plus the additions' tune half (`added`), or the frozen half."""
    from benchmarks.published_runs.evidence import evidence

    if frozen:
        return [t.raw for t in evidence("vision", ("frozen",))]
    extra = [t.raw for t in evidence("vision", ("tune",))] if added else []
    return load_cases() + extra


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    measured = [r for r in results if r["kind"] == "measured"]
    checks = [r for r in results if r["kind"] != "measured"]
    return {
        "cases": len(results),
        "agree": sum(r["agrees"] for r in results),
        "fit_checks": len(checks),
        "fit_checks_agree": sum(r["agrees"] for r in checks),
        "measured": len(measured),
        "measured_within_10pct": sum(abs(r["ratio"] - 1) <= 0.10 for r in measured),
        "measured_within_20pct": sum(r["agrees"] for r in measured),
        "median_ratio": statistics.median(r["ratio"] for r in results) if results else None,
        "median_measured_ratio": (
            statistics.median(r["ratio"] for r in measured) if measured else None
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the results here")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--added", action="store_true", help="also the additions' tune half")
    which.add_argument("--frozen", action="store_true", help="the additions' frozen half alone")
    args = parser.parse_args(argv)
    results = [evaluate(case) for case in chosen_cases(args.added, args.frozen)]
    for r in results:
        mark = "ok " if r["agrees"] else "NO "
        print(f"{mark} {r['id']:<42} {r['kind']:<8} stated {r['stated_gib']:>5.1f} GiB"
              f"  estimate {r['estimate_gib']:>6.2f} GiB  ratio {r['ratio']:.2f}")  # fmt: skip
    total = summary(results)
    print(
        f"{total['agree']} of {total['cases']} agree; fit checks {total['fit_checks_agree']} of"
        f" {total['fit_checks']}; measured within +-10 %: {total['measured_within_10pct']}, within"
        f" +-20 %: {total['measured_within_20pct']} of {total['measured']}; median ratio"
        f" {total['median_ratio']:.2f} (measured {total['median_measured_ratio']:.2f})"
    )
    if args.json:
        args.json.write_text(json.dumps({"results": results, "summary": total}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
