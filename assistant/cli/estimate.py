"""`gpu-advisor estimate`: training memory per GPU for one setup.

    gpu-advisor estimate --model NAME | --params N | --config PATH [options] [--json]

The model is a registry name ("llama 3.1 8b"), a parameter count ("7e9", "70B") or a local
Hugging Face config.json; the other flags are the fields of the job (`tools.job.JobSpec`), and
what is left open takes the job's stated defaults, which the output lists first ("Assumed").
`--json` prints the estimate with sizes as integer bytes (with the resolved `engine` and
`optimizer_impl` it carries) and the defaults used under "assumed"; otherwise a table in GiB
(2^30 bytes) and GB (10^9 bytes): the parts live at the step's peak moment, the total (the whole
device, as nvidia-smi shows it) with its band from published GPU runs and what torch.cuda's
reserved and allocated counters would read, the activations at their own size when the peak
holds fewer, every moment of the step, and the estimator's assumptions. The estimator's `device`
field is not a flag: it models CPU kernels for the calibration, and the advice is about GPUs.
The estimator is imported inside the handler so that building the parser stays light.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

from assistant.cli.job_args import add_job_arguments, job_spec

if TYPE_CHECKING:
    from tools.advice import Assumed
    from tools.memory import MemoryEstimate

PARTS = ("weights", "gradients", "optimizer", "activations", "overhead")
GROUPS = ("training", "plan")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "estimate",
        help="GPU memory per GPU to train or fine-tune a model",
        description="Peak GPU memory per GPU for one training setup, with its parts, the "
        "defaults assumed for what is not given and the estimator's assumptions. Sizes: GiB = "
        "2^30 bytes, GB = 10^9 bytes.",
    )
    add_job_arguments(parser, GROUPS)
    parser.add_argument("--json", action="store_true", help="print JSON (integer bytes)")
    parser.set_defaults(handler=handler, settings_free=True)


def handler(args: argparse.Namespace) -> int:
    from tools.advice import estimate_job

    resolved, result = estimate_job(job_spec(args, GROUPS))
    assumed = resolved.shown_assumptions("estimate")
    try:
        print(as_json(result, assumed) if args.json else render(result, assumed))
    except BrokenPipeError:  # e.g. `| head`: the reader is gone, nothing left to report
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - replaces the closed stream for exit
    return 0


def assumed_lines(assumed: list[Assumed]) -> list[str]:
    """'Assumed (defaults for what was not given):' and one line per default with its reason."""
    if not assumed:
        return []
    return [
        "Assumed (defaults for what was not given):",
        *(f"  - {item.field} = {item.value}: {item.reason}" for item in assumed),
    ]


def as_json(result: MemoryEstimate, assumed: list[Assumed] | None = None) -> str:
    """The estimate as JSON (integer bytes), with the engine and optimizer step it resolved and
    the defaults used for what was not given."""
    data = result.model_dump(mode="json")
    data["assumed"] = [item.model_dump(mode="json") for item in assumed or []]
    return json.dumps(data, indent=2)


def _row(label: str, n_bytes: int, note: str = "") -> str:
    row = f"  {label:<12} {n_bytes / 2**30:>10.2f} {n_bytes / 1e9:>10.2f}"
    return f"{row}  {note}" if note else row


def _count(n: int) -> str:
    return f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:.1f}M"


def render(result: MemoryEstimate, assumed: list[Assumed] | None = None) -> str:
    """A readable table in GiB and GB, the setup (with the engine and optimizer step the
    estimate resolved), the defaults assumed, the step's moments, the activation split and the
    estimator's assumptions."""
    share = result.trainable_params / result.total_params
    setup = (
        f"{result.total_gpus} GPU(s): data parallel {result.data_parallel} x tensor parallel "
        f"{result.tensor_parallel}; engine {result.engine}, optimizer step {result.optimizer_impl}"
    )
    lines = [
        f"{result.model_name} ({result.model_id}): {_count(result.total_params)} parameters, "
        f"{_count(result.trainable_params)} trainable ({share:.2%})",
        setup,
        "",
        f"Peak per GPU: {result.total_with_band()} at the {result.peak_moment or 'peak'}"
        + (f", the largest of the step's {len(result.moments)} moments" if result.moments else ""),
        *_figures(result),
        "",
        *assumed_lines(assumed or []),
        *([""] if assumed else []),
        *_parts_table(result),
        *_moments(result),
        *_activation_split(result),
        "",
        "Assumptions:",
        *(f"  - {a}" for a in result.assumptions),
    ]
    return "\n".join(lines)


def _figures(result: MemoryEstimate) -> list[str]:
    """What the total predicts (nvidia-smi), what torch.cuda's counters would read, and what the
    band was measured on."""
    f, gib = result.figures, 2**30
    lines = [
        f"  the whole device as nvidia-smi shows it; torch.cuda max_memory_reserved "
        f"{f.reserved / gib:.1f} GiB, max_memory_allocated {f.allocated / gib:.1f} GiB"
    ]
    if f.evictable:
        lines.append(
            f"  the card must hold {f.required / gib:.1f} GiB: {f.evictable / gib:.1f} GiB is "
            "paged optimizer state, moved to CPU RAM when the card is full"
        )
    if result.uncertainty_basis:
        lines.append(f"  band: {result.uncertainty_basis}")
    return lines


def _parts_table(result: MemoryEstimate) -> list[str]:
    """What is live at the peak moment, the total, and the activations' own size when the peak
    moment holds fewer of them (e.g. at the optimizer step they are freed)."""
    p, own = result.per_gpu, result.activations.total
    lines = [
        f"  {'per GPU':<12} {'GiB':>10} {'GB':>10}",
        *(_row(name, getattr(p, name)) for name in PARTS),
        _row("total", p.total),
    ]
    if own > p.activations:
        peak = result.peak_moment or "peak"
        live = (
            f"none are live at the {peak}"
            if p.activations == 0
            else f"the {peak} holds {p.activations / 2**30:.2f} GiB of them"
        )
        lines += [
            _row("activations*", own),
            "  * activations at their own peak, the start of the backward pass (saved tensors,",
            f"    weight copies, loss buffers); not in the total: {live}",
        ]
    if result.cpu_offload_bytes:
        lines.append(_row("CPU offload", result.cpu_offload_bytes, "(CPU RAM per GPU)"))
    return lines


def _moments(result: MemoryEstimate) -> list[str]:
    if not result.moments:
        return []
    lines = ["", "Moments of one step (GiB per GPU, before overhead):"]
    for m in result.moments:
        mark = "  <- peak" if m.name == result.peak_moment else ""
        lines.append(f"  {m.name:<20} {m.total / 2**30:>8.2f}{mark}")
    return lines


def _activation_split(result: MemoryEstimate) -> list[str]:
    acts = result.activations
    lines = [""]
    for layer in acts.layers:
        lines.append(
            f"Activations: {layer.count} x {layer.name} keeping "
            f"{layer.stored_per_layer / 2**30:.3f} GiB each "
            f"({layer.per_layer_total / 2**30:.3f} GiB without recomputation)"
        )
    lines.append(
        f"Logits and loss buffers at their largest: {acts.logits_peak / 2**30:.3f} GiB; outside "
        f"the layers: {sum(acts.head.values()) / 2**30:.3f} GiB"
    )
    return lines
