"""Training-memory estimator: bytes per GPU to train or fine-tune a transformer.

`estimate(EstimateInput(...)) -> MemoryEstimate` is pure and deterministic. It counts weights,
gradients and optimizer state as the ZeRO paper does (with sharding, tensor parallelism and CPU
offload), activations tensor by tensor as Korthikanti et al. 2022 do (adapted to GQA, gated and
MoE MLPs, fused attention, recomputation and LoRA), the logits/loss buffers, and a stated
overhead. Every default and modelling choice used for a call is returned in `assumptions`.
All sizes are integer bytes; `tools.units` converts them for display.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from tools.architectures.architecture import ModelArch
from tools.memory.activations import Activations, compute_activations
from tools.memory.assemble import (
    activation_config,
    activations_detail,
    bytes_per_param,
    states_config,
    step_inputs,
)
from tools.memory.assumptions import describe
from tools.memory.bands.calibration import CalibrationBand, calibration_band
from tools.memory.bands.published_band import BandGroup, band_for
from tools.memory.inputs import LORA_METHODS, EstimateInput
from tools.memory.layers import ActivationConfig
from tools.memory.peak import peak_moment, step_moments
from tools.memory.results import (
    ActivationsDetail,
    HostRam,
    MemoryBreakdown,
    MemoryEstimate,
    ModelStatesDetail,
)
from tools.memory.stacks.reporting import overhead
from tools.memory.states.inventory import PhysicalLinear, resolve_targets
from tools.memory.states.model_states import compute_model_states, forget_rank_states

__all__ = ["estimate", "estimate_figures", "estimate_for"]

ACTIVATIONS_CACHE_SIZE = 256


@lru_cache(maxsize=ACTIVATIONS_CACHE_SIZE)
def _activations(cfg: ActivationConfig) -> tuple[Activations, ActivationsDetail]:
    """The activations of a configuration and their detail, remembered: they follow from the
    model, the micro-batch, the recomputation and the tensor degree, not from the data ranks,
    the ZeRO stage or offload, so the many plans a ranking estimates for one job share a few.
    Shared by the estimates made from them: never mutated."""
    acts = compute_activations(cfg)
    return acts, activations_detail(acts)


def estimate(inp: EstimateInput) -> MemoryEstimate:
    """Peak training memory per GPU for `inp`; pure and deterministic.

    `per_gpu` is what is live at the step's largest moment (see tools.memory.peak) plus the
    overhead; every moment is listed in `moments`.
    """
    return _estimate(inp, described=True)


def estimate_figures(inp: EstimateInput) -> MemoryEstimate:
    """`estimate` without its sentences: every figure the same, `assumptions` empty (writing
    them is about a fifth of an estimate's CPU). For searches that size many plans of one job
    and show the assumptions of none of them (`tools.ranking.search`)."""
    return _estimate(inp, described=False)


def _estimate(inp: EstimateInput, described: bool) -> MemoryEstimate:
    targets: tuple[PhysicalLinear, ...] = ()
    if inp.method in LORA_METHODS:
        targets = resolve_targets(inp.stack_model, inp.lora_targets)
    states = compute_model_states(inp.stack_model, states_config(inp, targets))
    acts, acts_detail = _activations(activation_config(inp, targets))
    moments = step_moments(acts, step_inputs(inp, states, acts))
    peak = peak_moment(moments)
    extra = overhead(inp, states, peak)
    band = calibration_band()
    published = band_for(inp.stack, inp.method) if inp.device == "cuda" else None
    uncertainty = published.band if published else (band.band if band else None)
    return MemoryEstimate(
        model_id=inp.model.id,
        model_name=inp.model.name,
        per_gpu=MemoryBreakdown(
            weights=peak.weights,
            gradients=peak.gradients,
            optimizer=peak.optimizer,
            activations=peak.activations,
            overhead=extra.total,
            total=peak.total + extra.total,
        ),
        cpu_offload_bytes=states.cpu_offload,
        host_ram=HostRam(
            offloaded_states=states.cpu_offload,
            offloaded_activations=acts.offloaded,
            paged_optimizer=states.paged_optimizer,
        ),
        total_params=states.total_params,
        trainable_params=states.trainable_params,
        data_parallel=inp.num_gpus,
        tensor_parallel=inp.tensor_parallel,
        total_gpus=inp.num_gpus * inp.tensor_parallel,
        bytes_per_param=bytes_per_param(inp, states),
        model_states=ModelStatesDetail(
            unsharded_weights=states.unsharded_weights,
            unsharded_gradients=states.unsharded_gradients,
            unsharded_optimizer=states.unsharded_optimizer,
            zero3_gathered_weights=states.gathered_weights,
            zero3_gathered_gradients=states.gathered_gradients,
            qlora_dequant_buffer=states.dequant_buffer,
            qlora_lm_head_dequant=states.lm_head_dequant,
            optimizer_step_temporaries=states.step_temporaries,
        ),
        activations=acts_detail,
        overhead=extra.detail,
        peak_moment=peak.name,
        # as plain fields: validated into MomentBytes with the estimate, in one pass (the same
        # checks as a MomentBytes(...) each, without a Python call per moment)
        moments=[
            {
                "name": m.name,
                "weights": m.weights,
                "gradients": m.gradients,
                "optimizer": m.optimizer,
                "activations": m.activations,
                "total": m.total,
            }
            for m in moments
        ],
        figures=extra.figures,
        uncertainty=uncertainty,
        uncertainty_basis=_basis(published, band, inp.device),
        assumptions=describe(inp, states, targets, acts, peak.name, band, published, extra.figures)
        if described
        else [],
        engine=inp.effective_engine,
        optimizer_impl=inp.effective_optimizer_impl,
    )


def forget_remembered() -> None:
    """Drop what estimates remember per job: activations, a tensor-parallel rank's model states
    (benchmarks time new jobs)."""
    _activations.cache_clear()
    forget_rank_states()


def _basis(published: BandGroup | None, band: CalibrationBand | None, device: str) -> str:
    """What the band next to the total was measured on (in words: every figure in an estimate's
    text is a value the answer-grounding check accepts, so the text carries no stray counts)."""
    if published is not None and device == "cuda" and not published.validated:
        return (
            f"unvalidated for {published.stack}: too few of its published GPU runs, so the band "
            "that 19 in 20 runs of every stack fell within (tools/data/memory_published_band.json)"
        )
    if published is not None and device == "cuda":
        return (
            f"published GPU runs ({published.label}): four in five within it, like for like "
            "(tools/data/memory_published_band.json)"
        )
    if band is not None:
        return f"largest error over {band.cases} CPU calibration steps"
    return ""


def estimate_for(model: str | ModelArch, **settings: Any) -> MemoryEstimate:
    """Convenience: `estimate_for("llama 3.1 8b", method="lora")`; a string model is resolved
    by name, config.json path or parameter count."""
    return estimate(EstimateInput(model=model, **settings))
