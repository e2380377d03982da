"""Where PyTorch departs from the textbook formula, the estimator models what PyTorch does.

Each rule below was found by measuring real training steps with MemTracker
(benchmarks/memory_calibration) and is checked here with exact, hand-worked values: the
optimizer step's temporaries, autocast's weight copies and fp32 stream, the fp32 upcast of the
logits at the loss, the three vocabulary-sized gradient buffers of tied embeddings, and the peak
as the largest moment of the step rather than a sum of everything.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.jobs import bare_input
from tests.tools.memory.test_estimator_models import gpt2_small, llama31_8b
from tools.architectures.architecture import ModelArch
from tools.memory import MemoryEstimate, estimate
from tools.memory.bands.calibration import calibration_band
from tools.memory.bands.published_band import band_for

N8B = 8_030_261_248
LLAMA_EMBED = 128_256 * 4096  # the largest tensor of Llama 3.1 8B (embed_tokens, lm_head)


def run(model: ModelArch, **settings: Any) -> MemoryEstimate:
    return estimate(bare_input(model=model, **settings))


# --- the optimizer step's own temporaries -------------------------------------------------------
TEMPORARIES = [
    # (settings, expected bytes, why)
    ({}, 4 * N8B, "foreach AdamW (CUDA default): sqrt(v) of every parameter at once, fp32"),
    ({"device": "cpu"}, 2 * 4 * LLAMA_EMBED, "for-loop AdamW (CPU default): 2 x largest tensor"),
    ({"engine": "deepspeed"}, 0, "DeepSpeed's fused Adam updates in place"),
    ({"optimizer_impl": "fused"}, 0, "torch AdamW(fused=True)"),
    ({"precision": "bf16"}, 2 * N8B, "pure bf16: the state and its sqrt are bf16"),
    ({"optimizer": "adafactor"}, 2 * 4 * LLAMA_EMBED, "Adafactor: two fp32 buffers of the largest"),
    ({"optimizer": "adafactor", "precision": "bf16"}, 4 * 4 * LLAMA_EMBED, "plus fp32 grad, param"),
    ({"optimizer": "sgd"}, 0, "SGD updates in place"),
]


@pytest.mark.parametrize(("settings", "expected", "why"), TEMPORARIES)
def test_optimizer_step_temporaries(settings: dict[str, Any], expected: int, why: str) -> None:
    result = run(llama31_8b(), **settings)
    assert result.model_states.optimizer_step_temporaries == expected, why
    step = next(m for m in result.moments if m.name == "optimizer step")
    state = result.model_states.unsharded_optimizer
    assert step.optimizer == state + expected, "the step's temporaries count as optimizer-owned"


# --- plain PyTorch mixed precision versus DeepSpeed's -------------------------------------------
@pytest.mark.parametrize(
    ("settings", "per_param"),
    [
        ({}, (4.0, 4.0, 8.0)),  # autocast over fp32 weights: the weights are the master copy
        ({"engine": "pytorch"}, (4.0, 4.0, 8.0)),
        ({"engine": "deepspeed"}, (2.0, 2.0, 12.0)),  # ZeRO paper: 2 + 2 + K, K = 12
        ({"zero_stage": 2, "num_gpus": 2}, (2.0, 2.0, 12.0)),  # auto: DeepSpeed under ZeRO
    ],
)
def test_engine_bytes_per_parameter(
    settings: dict[str, Any], per_param: tuple[float, float, float]
) -> None:
    b = run(llama31_8b(), **settings).bytes_per_param
    assert (b.weights, b.gradients, b.optimizer) == per_param, settings


def test_autocast_keeps_a_16_bit_copy_of_every_weight_it_multiplies() -> None:
    """Every linear weight of the 32 blocks and the lm_head, 2 bytes each; embeddings are looked
    up in fp32, not multiplied. Measured: tests/tools/memory/test_estimator_measured.py."""
    per_layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336
    expected = 2 * (32 * per_layer + LLAMA_EMBED)
    assert run(llama31_8b()).activations.autocast_weight_copies == expected, "bf16 copies"
    assert run(llama31_8b(), engine="deepspeed").activations.autocast_weight_copies == 0, "16-bit"
    lora = run(llama31_8b(), method="lora")
    assert lora.activations.autocast_weight_copies == 0, "a frozen bf16 base needs no copies"


def test_autocast_keeps_the_stream_in_fp32() -> None:
    """Under autocast RMSNorm's normalized output stays fp32 and q, k and v each keep their own
    bf16 cast of it; on a 16-bit model they share one bf16 input."""
    n, h = 2048, 4096
    amp = run(llama31_8b(), seq_len=n).activations.layers[0].per_layer
    ds = run(llama31_8b(), seq_len=n, engine="deepspeed").activations.layers[0].per_layer
    assert amp["attention.norm.normalized"] == 4 * n * h, "fp32 normalized output"
    assert ds["attention.norm.normalized"] == 2 * n * h, "bf16 normalized output"
    assert amp["attention.qkv_input"] == 3 * 2 * n * h, "three bf16 casts (q, k, v)"
    assert ds["attention.qkv_input"] == 2 * n * h, "one shared bf16 input"
    assert amp["mlp.input"] == 2 * 2 * n * h, "gate and up: two casts"


# --- the loss ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("precision", "forward_bytes"),
    [("bf16-mixed", 2 + 4 + 4), ("bf16", 2 + 4 + 4), ("fp32", 4 + 4)],
)
def test_logits_upcast_to_fp32_in_the_loss(precision: str, forward_bytes: int) -> None:
    """Hugging Face's loss upcasts 16-bit logits to fp32 before log-softmax: inside the forward
    pass logits + fp32 copy + fp32 log-softmax; in the backward 12 bytes per logit."""
    logits = 4096 * 128_256
    acts = run(llama31_8b(), precision=precision, seq_len=4096).activations
    assert acts.logits_forward == forward_bytes * logits, f"{precision}: forward loss buffers"
    assert acts.logits_peak == 12 * logits, "saved log-softmax + its gradient in and out"


# --- tied embeddings and the moments of a step ------------------------------------------------
def gpt2_2_layers() -> ModelArch:
    return gpt2_small().model_copy(update={"num_layers": 2})


def test_tied_embedding_gradient_needs_three_buffers() -> None:
    """GPT-2 (2 layers), fp32 AdamW on the CPU, batch 2 x 128: MemTracker measured the peak at
    the end of the backward pass with 463,168,512 B of temporaries (3 x 50257 x 768 x 4: the
    lm_head's gradient contribution, the embedding's, their sum) and 59,854,848 B of gradients
    (every parameter but the tied embedding). Total measured: 1,165,758,584 B."""
    result = run(gpt2_2_layers(), precision="fp32", device="cpu", micro_batch_size=2, seq_len=128)
    assert result.peak_moment == "embedding backward", "the end of the backward pass"
    p = result.per_gpu
    assert p.activations == 3 * 4 * 50257 * 768 == 463_168_512, "three fp32 vocabulary buffers"
    assert p.gradients == 4 * (53_561_088 - 50257 * 768) == 59_854_848, "all but the embedding"
    assert p.weights == 4 * 53_561_088 == 214_244_352, "fp32 weights"
    assert p.overhead == 0, "no CUDA context, no fragmentation margin on the CPU"
    assert p.total == pytest.approx(1_165_758_584, rel=1e-5), "measured with MemTracker"


def test_peak_is_the_largest_moment() -> None:
    result = run(llama31_8b(), seq_len=8192, micro_batch_size=2)
    peak = max(result.moments, key=lambda m: m.total)
    p = result.per_gpu
    assert result.peak_moment == peak.name, "per_gpu describes the largest moment"
    assert (p.weights, p.gradients, p.optimizer, p.activations) == (
        peak.weights,
        peak.gradients,
        peak.optimizer,
        peak.activations,
    ), "the parts live at that moment"
    assert p.total == peak.total + p.overhead, "plus overhead"
    names = [m.name for m in result.moments]
    assert names == [
        "forward",
        "loss backward",
        "lm_head backward",
        "embedding backward",
        "optimizer step",
    ], "the candidate moments of a full fine-tune without recomputation"


def test_optimizer_step_holds_no_activations() -> None:
    result = run(llama31_8b(), seq_len=512)
    assert result.peak_moment == "optimizer step", "8B at 512 tokens: model states dominate"
    assert result.per_gpu.activations == 0, "activations are freed before the step"
    p = result.per_gpu
    assert p.weights + p.gradients == 8 * N8B, "fp32 weights and gradients"
    assert p.optimizer == 8 * N8B + 4 * N8B, "AdamW m, v and foreach temporaries"


def test_gradient_accumulation_keeps_gradients_through_the_step() -> None:
    once = run(llama31_8b(), seq_len=8192, micro_batch_size=4)
    accumulated = run(llama31_8b(), seq_len=8192, micro_batch_size=4, gradient_accumulation_steps=8)
    forward = next(m for m in accumulated.moments if m.name == "forward")
    assert forward.gradients == 4 * N8B, "gradients of the earlier micro-batches stay"
    first = next(m for m in once.moments if m.name == "forward")
    assert first.gradients == 0, "set_to_none: no gradients before the backward pass"
    assert accumulated.per_gpu.total > once.per_gpu.total, "accumulating costs memory"


def test_cpu_has_no_cuda_context() -> None:
    cpu = run(llama31_8b(), device="cpu")
    assert cpu.overhead.cuda_context == 0 and cpu.overhead.fragmentation == 0, "no overhead"
    margin = run(llama31_8b(), device="cpu", fragmentation=0.1)
    assert margin.overhead.fragmentation > 0, "a margin still applies when asked for"


def test_gpu_band_comes_from_published_runs_and_cpu_band_from_the_cpu_calibration() -> None:
    """Next to a GPU estimate: the band of published GPU runs of its stack and method (never the
    CPU calibration's, which only checks the tensor count); on the CPU: the CPU calibration's."""
    cpu_band = calibration_band()
    assert cpu_band is not None, "tools/data/memory_calibration.json ships with the package"
    published = band_for("hf", "lora")
    assert published is not None, "tools/data/memory_published_band.json ships with the package"
    result = run(llama31_8b(), method="lora")
    assert result.uncertainty == published.band, "the published runs' band"
    assert result.uncertainty_basis.startswith("published GPU runs (hf lora)"), "and says so"
    assert "four in five" in result.uncertainty_basis, "the 80th percentile, in words"
    gib = result.per_gpu.total / 2**30
    assert result.total_with_band() == f"{gib:.1f} GiB (±{published.band:.0%})", "displayed"
    text = "\n".join(result.assumptions)
    assert f"±{published.band:.0%}" in text and "published GPU runs" in text, "and stated"
    cpu = run(llama31_8b(), method="lora", device="cpu")
    assert cpu.uncertainty == cpu_band.band, "CPU: the CPU calibration's band"


def test_assumptions_state_the_measured_behaviour() -> None:
    text = "\n".join(run(gpt2_small()).assumptions + run(gpt2_small(), device="cpu").assumptions)
    for phrase in [
        "torch.autocast",
        "caches a 16-bit copy",
        "foreach",
        "for-loop",
        "largest of the step's moments",
        "three vocabulary-sized gradient buffers",
        "no CUDA context",
    ]:
        assert phrase in text, f"assumptions should mention {phrase!r}"
