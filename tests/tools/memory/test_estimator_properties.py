"""Invariants of the estimator over generated inputs (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fakes.jobs import bare_input
from tests.tools.memory.test_estimator_models import arch, gpt2_small, llama31_8b, mixtral_8x7b
from tools.architectures.architecture import ModelArch
from tools.errors import InvalidInputError
from tools.memory import MemoryEstimate, estimate

MODELS = [
    llama31_8b(),
    gpt2_small(),
    mixtral_8x7b(),
    arch(num_layers=4, hidden_size=1024, num_heads=8, num_kv_heads=2),
]
# Models whose largest module is small next to the whole (4 x largest <= params): for these,
# gathering one module under ZeRO-3 costs less than sharding the weights saves.
LARGE_MODELS = [llama31_8b(), mixtral_8x7b()]
CONFIG = settings(max_examples=40, deadline=None)


@st.composite
def setups(draw: st.DrawFn, models: list[ModelArch] = MODELS) -> dict[str, Any]:
    """A valid input as keyword arguments."""
    model = draw(st.sampled_from(models))
    method = draw(st.sampled_from(["pretrain", "full", "lora", "qlora"]))
    precisions = ["bf16-mixed", "fp16-mixed", "bf16"] + ([] if method == "qlora" else ["fp32"])
    zero = draw(st.integers(0, 3))
    offload = zero > 0 and draw(st.booleans())
    optimizers = ["adamw", "adafactor", "sgd", "sgd-momentum", "lion"]
    if not offload:
        optimizers += ["adamw-8bit", "paged-adamw-8bit"]
    heads = model.num_heads
    out: dict[str, Any] = dict(
        model=model,
        method=method,
        precision=draw(st.sampled_from(precisions)),
        optimizer=draw(st.sampled_from(optimizers)),
        zero_stage=zero,
        offload_optimizer=offload,
        num_gpus=draw(st.integers(1, 1024)),
        tensor_parallel=draw(st.sampled_from([t for t in (1, 2, 4, 8) if heads % t == 0])),
        sequence_parallel=draw(st.booleans()),
        micro_batch_size=draw(st.integers(1, 16)),
        seq_len=draw(st.integers(1, 8192)),
        gradient_checkpointing=draw(st.sampled_from(["none", "selective", "full"])),
        attention=draw(st.sampled_from(["eager", "sdpa"])),
        sharding=draw(st.sampled_from(["deepspeed", "fsdp"])),
    )
    if method in ("lora", "qlora"):
        out["lora_rank"] = draw(st.integers(1, 64))
        out["lora_targets"] = draw(st.sampled_from(["all-linear", "attention", "mlp"]))
        out["lora_dropout"] = draw(st.sampled_from([0.0, 0.05]))
    return out


def total(**kwargs: Any) -> int:
    return estimate(bare_input(**kwargs)).per_gpu.total


def without_lora(s: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in s.items() if not k.startswith("lora_")}


@CONFIG
@given(setups())
def test_never_crashes_and_parts_add_up(s: dict[str, Any]) -> None:
    result: MemoryEstimate = estimate(bare_input(**s))
    p = result.per_gpu
    assert p.total == p.weights + p.gradients + p.optimizer + p.activations + p.overhead, s
    # The parts are those of the peak moment: at the optimizer step no activation is live
    # (measured in benchmarks/memory_calibration), so activations are checked in the detail.
    assert min(p.weights, result.activations.total) > 0 and p.overhead >= 3 << 28, s
    assert p.total - p.overhead == max(m.total for m in result.moments), "the largest moment"
    assert result.trainable_params <= result.total_params or s["method"] in ("lora", "qlora")
    deepspeed = s["zero_stage"] > 0 or s["offload_optimizer"]
    assert result.engine == ("deepspeed" if deepspeed else "pytorch"), "auto: ZeRO -> DeepSpeed"
    assert result.optimizer_impl == ("fused" if deepspeed else "foreach"), "auto step on CUDA"


@CONFIG
@given(setups(), st.integers(1, 8))
def test_more_layers_need_more_memory(s: dict[str, Any], extra: int) -> None:
    deeper = s["model"].model_copy(update={"num_layers": s["model"].num_layers + extra})
    assert total(**(s | {"model": deeper})) > total(**s), "more parameters, more memory"


@CONFIG
@given(setups(), st.integers(1, 4096), st.integers(1, 8))
def test_longer_or_bigger_batches_need_more_activations(
    s: dict[str, Any], more_tokens: int, more_batch: int
) -> None:
    def acts(**changes: int) -> tuple[int, int]:
        result = estimate(bare_input(**(s | changes)))
        return result.activations.total, result.per_gpu.total

    base, base_total = acts()
    longer, longer_total = acts(seq_len=s["seq_len"] + more_tokens)
    bigger, bigger_total = acts(micro_batch_size=s["micro_batch_size"] + more_batch)
    assert longer > base and bigger > base, "longer sequences and bigger batches: more activations"
    assert min(longer_total, bigger_total) >= base_total, "and never a smaller peak"


def modest_sharding(s: dict[str, Any]) -> dict[str, Any]:
    """At most 8 data-parallel GPUs, ZeRO-1 at most, no offload, at most 8192 tokens per
    micro-batch. ZeRO-2 and -3 shard a full fine-tune's gradients as well, which a tiny model's
    LoRA adapters in fp32 can then outweigh (GPT-2 small, pure bf16, SGD, ZeRO-2 on 8 GPUs, rank
    27 on every linear layer: LoRA 2 % above full, a real flip found by hypothesis)."""
    tokens = {"micro_batch_size": min(s["micro_batch_size"], 4), "seq_len": min(s["seq_len"], 2048)}
    plan = {"num_gpus": min(s["num_gpus"], 8), "zero_stage": min(s["zero_stage"], 1)}
    return s | plan | {"offload_optimizer": False} | tokens


@CONFIG
@given(setups())
def test_qlora_le_lora_le_full(s: dict[str, Any]) -> None:
    """QLoRA <= LoRA <= full, for up to 8 data-parallel GPUs at ZeRO-1 at most without offload,
    ranks <= 64, micro-batches up to 8192 tokens and (for the totals) full recomputation.

    Outside that regime the order really can flip, and the estimator says so: ZeRO shards a
    full fine-tune's states but not LoRA's fp32 adapters or QLoRA's dequantization buffer,
    offload leaves a full fine-tune only its 16-bit weights on the GPU, and PEFT's per-adapter
    input copies (measured in test_estimator_measured) can outgrow the savings at very long
    micro-batches, especially when tensor parallelism has already divided the model states.
    """
    s = modest_sharding(s)
    if s["precision"] == "fp32":
        s["precision"] = "bf16-mixed"
    lora = s | {"method": "lora", "lora_rank": s.get("lora_rank", 16)}
    qlora = lora | {"method": "qlora"}
    full = without_lora(s) | {"method": "full"}
    assert total(**qlora) <= total(**lora), "QLoRA <= LoRA"

    def states(**kwargs: Any) -> int:
        """Weights, gradients and optimizer state, all live at the optimizer step (the peak's
        parts are those of the peak moment, where gradients may not exist yet)."""
        result = estimate(bare_input(**kwargs))
        step = next(m for m in result.moments if m.name == "optimizer step")
        return step.weights + step.gradients + step.optimizer

    assert states(**lora) <= states(**full), "LoRA model states <= full"
    recompute = {"gradient_checkpointing": "full"}

    def tensors(**kwargs: Any) -> int:
        """Every tensor at the peak, paged optimizer state included, before the allocator margin
        (which skips paged state, so near-ties could flip on the margin alone) and without the
        communication buffers, which cost the same whatever the method."""
        result = estimate(bare_input(**kwargs))
        figures = result.figures  # DeepSpeed's fixed buffers left out, as in the ZeRO property
        return figures.allocated + figures.evictable - result.overhead.deepspeed_buffers

    # At the loss backward and the top layer's recomputation a full fine-tune holds no gradient
    # yet (GPT-2's lm_head is tied), so LoRA's adapter inputs can make it slightly larger
    # (GPT-2, pure bf16, Adafactor, 1381 tokens, eager: LoRA 0.5 % above); asserted up to 2 %.
    lora_bytes, full_bytes = tensors(**(lora | recompute)), tensors(**(full | recompute))
    assert lora_bytes <= full_bytes * 1.02, "LoRA <= full"


@CONFIG
@given(setups(LARGE_MODELS))
def test_higher_zero_stage_never_costs_more(s: dict[str, Any]) -> None:
    """On two or more GPUs. On one, ZeRO shards nothing and DeepSpeed's ZeRO-3 still gathers
    each module into a fresh buffer, so stage 3 costs more there (as DeepSpeed's estimator says).
    Small models with a large embedding (GPT-2) can also lose at stage 3: the gathered module
    outweighs what sharding saves. The frozen base's storage is held fixed: under FSDP with mixed
    precision the Hugging Face stack stores it in fp32 (Accelerate casts the model before
    sharding), which a DDP run does not."""
    s = s | {"num_gpus": max(s["num_gpus"], 2)}
    if s["method"] in ("lora", "qlora"):
        s = s | {"frozen_base_dtype": "16-bit"}
    stages = range(1, 4) if s["offload_optimizer"] else range(0, 4)

    def sharded(**kwargs: Any) -> int:
        """The total without DeepSpeed's fixed communication buffers (its reduce bucket from
        stage 2 on, ZeRO-3's prefetch): those cost the same whatever sharding saves."""
        result = estimate(bare_input(**kwargs))
        return result.per_gpu.total - result.overhead.deepspeed_buffers

    totals = [sharded(**(s | {"zero_stage": k})) for k in stages]
    assert totals == sorted(totals, reverse=True), f"stage k+1 <= stage k: {totals}"


@CONFIG
@given(setups(LARGE_MODELS), st.integers(2, 64))
def test_more_gpus_under_zero3_never_cost_more(s: dict[str, Any], factor: int) -> None:
    """For models of many blocks; FSDP on one GPU shards nothing and gathers nothing, so a
    4-layer model can cost more on two GPUs (two prefetched blocks outweigh half the weights)."""
    s = s | {"zero_stage": 3}
    more = s | {"num_gpus": min(s["num_gpus"] * factor, 100_000)}
    assert total(**more) <= total(**s), "ZeRO-3 over more GPUs"


INVALID = st.sampled_from(
    [
        {"method": "qlora", "precision": "fp32"},
        {"offload_optimizer": True, "zero_stage": 0},
        {"offload_optimizer": True, "zero_stage": 1, "optimizer": "paged-adamw-8bit"},
        {"method": "full", "lora_rank": 8},
        {"method": "lora", "lora_rank": 1_000_000},
        {"tensor_parallel": 7},
        {"seq_len": 0},
        {"micro_batch_size": 10**6},
        {"num_gpus": 10**6},
    ]
)


@CONFIG
@given(setups(), INVALID)
def test_invalid_combinations_raise(s: dict[str, Any], bad: dict[str, Any]) -> None:
    merged = without_lora(s) | bad
    try:
        bare_input(**merged)
    except InvalidInputError:
        return
    raise AssertionError(f"accepted an invalid input: {bad}")
