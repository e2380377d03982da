"""Command line: measure the cases, compare with the estimator, write one JSON line per case.

    python -m benchmarks.memory_calibration.run --subset quick|full|gpu [--out FILE]
        [--only TEXT] [--measure-only] [--reestimate FILE] [--write-band]

`--reestimate FILE` keeps the measurements of an earlier results file and recomputes only the
estimates (seconds instead of minutes). `--write-band` stores the spread of the errors as the
estimator's uncertainty band (tools/data/memory_calibration.json).
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from benchmarks.memory_calibration.cases import Case, cases
from benchmarks.memory_calibration.compare import CaseResult, compare
from benchmarks.memory_calibration.measure import Measurement, measure_case

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = {
    "quick": "results/quick.jsonl",
    "full": "results/cpu.jsonl",
    "gpu": "results/gpu.jsonl",
}


def _progress(index: int, count: int, result: CaseResult) -> None:
    mib = 2**20
    flag = "ok " if result.within_bounds else "OUT"
    print(
        f"[{index:>2}/{count}] {flag} {result.id:<62} measured {result.measured_peak / mib:8.1f} "
        f"MiB  estimated {result.estimated_peak / mib:8.1f} MiB  error {result.error:+6.1%}  "
        f"({result.measured.seconds:.1f} s)",
        file=sys.stderr,
        flush=True,
    )


def measure_isolated(case: Case) -> Measurement:
    """Measure `case` in a fresh child process.

    Each case gets a clean interpreter state (no tracker hooks, allocator arenas or models left
    over from earlier cases); the child is forked after the imports, so it starts in well under
    a second. CUDA is never initialised in the parent, so forking stays safe there too.
    """
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(measure_case, case).result()


class MeasuredLine(BaseModel):
    """The measurement part of a result line (what `--reestimate` reuses)."""

    model_config = ConfigDict(extra="ignore")

    id: str
    case: Case
    measured: Measurement


def run_cases(
    selected: list[Case], earlier: dict[str, Measurement], raw_log: Path | None = None
) -> list[CaseResult]:
    """Measure (or reuse) every case and compare it with the estimator.

    Fresh measurements are appended to `raw_log` as soon as they exist, so a long run that
    fails later (or an estimator that raises) loses none of them.
    """
    results = []
    for index, case in enumerate(selected, 1):
        measured = earlier.get(case.id)
        if measured is None:
            measured = measure_isolated(case)
            if raw_log is not None:
                line = MeasuredLine(id=case.id, case=case, measured=measured)
                with raw_log.open("a", encoding="utf-8") as handle:
                    handle.write(line.model_dump_json() + "\n")
        result = compare(case, measured)
        _progress(index, len(selected), result)
        results.append(result)
    return results


def measure_only(selected: list[Case], earlier: dict[str, Measurement], raw_log: Path) -> int:
    """Measure the cases not measured yet and append them to `raw_log`; no estimates."""
    todo = [case for case in selected if case.id not in earlier]
    for index, case in enumerate(todo, 1):
        measured = measure_isolated(case)
        line = MeasuredLine(id=case.id, case=case, measured=measured)
        with raw_log.open("a", encoding="utf-8") as handle:
            handle.write(line.model_dump_json() + "\n")
        print(
            f"[{index:>2}/{len(todo)}] {case.id:<62} peak {measured.peak.total / 2**20:8.1f} MiB "
            f"in {measured.peak_phase} ({measured.seconds:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
    print(f"measured {len(todo)} cases; appended to {raw_log}", file=sys.stderr)
    return 0


def load_results(path: Path) -> list[CaseResult]:
    """Result lines of an earlier run."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [CaseResult.model_validate_json(line) for line in lines if line.strip()]


def load_measurements(path: Path) -> dict[str, Measurement]:
    """Measurements by case id from a results file or a raw measurement log."""
    lines = path.read_text(encoding="utf-8").splitlines()
    parsed = [MeasuredLine.model_validate_json(line) for line in lines if line.strip()]
    return {p.id: p.measured for p in parsed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory_calibration.run")
    parser.add_argument("--subset", choices=("quick", "full", "gpu"), default="quick")
    parser.add_argument("--out", type=Path, help="JSONL file (default: results/<subset>.jsonl)")
    parser.add_argument("--only", default="", help="run only cases whose id contains this")
    parser.add_argument("--reestimate", type=Path, help="reuse the measurements in this file")
    parser.add_argument(
        "--measure-only",
        action="store_true",
        help="only measure; append to <out>.measured.jsonl (reuse it with --reestimate)",
    )
    parser.add_argument(
        "--write-band",
        action="store_true",
        help="store the error spread as the estimator's uncertainty band",
    )
    args = parser.parse_args(argv)
    selected = [c for c in cases(args.subset) if args.only in c.id]
    earlier = {}
    if args.reestimate:
        earlier = load_measurements(args.reestimate)
        if not args.measure_only:
            selected = [c for c in selected if c.id in earlier]
    out = args.out or HERE / DEFAULT_OUT[args.subset]
    start = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.measure_only:
        return measure_only(selected, earlier, out.with_suffix(".measured.jsonl"))
    results = run_cases(selected, earlier, out.with_suffix(".measured.jsonl"))
    out.write_text("".join(r.model_dump_json() + "\n" for r in results), encoding="utf-8")
    inside = sum(r.within_bounds for r in results)
    worst = max((abs(r.error) for r in results), default=0.0)
    print(
        f"{inside}/{len(results)} cases within bounds; worst total error {worst:.1%}; "
        f"{time.perf_counter() - start:.0f} s; wrote {out}",
        file=sys.stderr,
    )
    if args.write_band:
        from benchmarks.memory_calibration.band import write_band

        print(f"wrote {write_band(results)}", file=sys.stderr)
    return 0 if inside == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
