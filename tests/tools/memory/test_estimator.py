"""The estimator end to end: Korthikanti's activation formulas, the QLoRA paper's headline,
input validation and the invariants every estimate must keep."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.jobs import bare_input
from tests.tools.memory.test_estimator_models import arch, gpt2_small, llama31_8b, llama_65b
from tools.architectures.architecture import ModelArch
from tools.errors import InvalidInputError
from tools.memory import MemoryEstimate, estimate, estimate_for


def run(model: ModelArch, **settings: Any) -> MemoryEstimate:
    return estimate(bare_input(model=model, **settings))


def gpt_style(h: int, a: int, layers: int = 4, vocab: int = 50257) -> ModelArch:
    """Korthikanti's model: LayerNorm, multi-head attention, 4h GELU MLP, dropout."""
    return arch(
        family="gpt2",
        hidden_size=h,
        num_layers=layers,
        num_heads=a,
        num_kv_heads=a,
        head_dim=h // a,
        intermediate_size=4 * h,
        vocab_size=vocab,
        gated_mlp=False,
        norm="layernorm",
        learned_positions=True,
        tied_embeddings=True,
        max_position_embeddings=1 << 20,
    )


def layer_bytes(result: MemoryEstimate) -> tuple[int, int, int]:
    """(per-layer bytes without norm statistics, the statistics, bytes stored per layer).

    Korthikanti's model has a fused GELU; Hugging Face GPT-2's Python `gelu_new` keeps three
    more tensors of the MLP width (measured in tests/tools/memory/test_estimator_measured.py), which
    the Korthikanti comparison leaves out like the norm statistics.
    """
    layer = result.activations.layers[0]
    stats = sum(v for k, v in layer.per_layer.items() if "norm_stats" in k)
    python_gelu = sum(v for k, v in layer.per_layer.items() if "gelu_python_terms" in k)
    return layer.per_layer_total - stats - python_gelu, stats, layer.stored_per_layer


# --- Korthikanti et al. 2022 (arXiv:2205.05198), §4 -------------------------------------------
SHAPES = [  # s, b, h, a: small, GPT-3 175B (h 12288, 96 heads), a 2048-token batch of 8
    (64, 2, 128, 4),
    (2048, 1, 12288, 96),
    (2048, 8, 4096, 32),
]


@pytest.mark.parametrize(("s", "b", "h", "a"), SHAPES)
def test_per_layer_is_34sbh_plus_5as2b(s: int, b: int, h: int, a: int) -> None:
    result = run(
        gpt_style(h, a), attention="eager", precision="bf16", seq_len=s, micro_batch_size=b
    )
    korthikanti, stats, _ = layer_bytes(result)
    assert korthikanti == 34 * s * b * h + 5 * a * s * s * b, f"eq. (1) for s={s} b={b} h={h}"
    assert stats == 2 * 8 * s * b, "two LayerNorms x fp32 mean and rstd per token"


@pytest.mark.parametrize(("s", "b", "h", "a"), SHAPES)
def test_selective_recompute_and_fused_attention(s: int, b: int, h: int, a: int) -> None:
    common = dict(precision="bf16", seq_len=s, micro_batch_size=b)
    selective = run(
        gpt_style(h, a), attention="eager", gradient_checkpointing="selective", **common
    )
    python_gelu = sum(
        v for k, v in selective.activations.layers[0].per_layer.items() if "gelu_python" in k
    )
    stored, stats = layer_bytes(selective)[2], layer_bytes(selective)[1]
    assert stored - stats - python_gelu == 34 * s * b * h, (
        "selective recomputation keeps 34sbh (Korthikanti eq. 6)"
    )
    fused = run(gpt_style(h, a), attention="sdpa", **common)
    assert layer_bytes(fused)[0] == 34 * s * b * h + 4 * a * s * b, (
        "fused attention: no 5as²b term; an fp32 log-sum-exp per head and token instead"
    )


@pytest.mark.parametrize("t", [2, 4, 8])
def test_tensor_parallel_forms(t: int) -> None:
    s, b, h, a = 2048, 1, 12288, 96
    common = dict(attention="eager", precision="bf16", seq_len=s, micro_batch_size=b)
    tp = run(gpt_style(h, a), tensor_parallel=t, **common)
    expected = 10 * s * b * h + 24 * s * b * h // t + 5 * a * s * s * b // t
    assert layer_bytes(tp)[0] == expected, f"eq. (2): sbh(10 + 24/t + 5as/(ht)), t={t}"
    sp = run(gpt_style(h, a), tensor_parallel=t, sequence_parallel=True, **common)
    assert layer_bytes(sp)[0] == (34 * s * b * h + 5 * a * s * s * b) // t, f"eq. (4), t={t}"
    full = run(
        gpt_style(h, a),
        tensor_parallel=t,
        sequence_parallel=True,
        gradient_checkpointing="full",
        **common,
    )
    assert layer_bytes(full)[2] == 2 * s * b * h // t, "full recompute keeps 2sbh/t per layer"


def test_fp32_doubles_tensors_but_not_masks() -> None:
    s, b, h, a = 512, 2, 1024, 16
    half = run(gpt_style(h, a), attention="eager", precision="bf16", seq_len=s, micro_batch_size=b)
    full = run(gpt_style(h, a), attention="eager", precision="fp32", seq_len=s, micro_batch_size=b)
    masks = 2 * s * b * h + a * s * s * b  # residual and attention dropout masks, 1 byte each
    assert layer_bytes(full)[0] == 2 * layer_bytes(half)[0] - masks, "fp32 activations"


def test_llama31_8b_layer_tensor_by_tensor() -> None:
    """GQA (8 KV heads), SwiGLU 14336, RMSNorm, SDPA, bf16, no dropout; s=4096, b=1."""
    s, b, h, i, kv = 4096, 1, 4096, 14336, 1024
    result = run(llama31_8b(), seq_len=s, micro_batch_size=b, engine="deepspeed")
    n = s * b
    norms = 2 * (4 * n * h + 4 * n + 2 * n * h)  # fp32 copy, fp32 rsqrt, normalized bf16
    attention = 2 * n * h + 2 * n * h + 2 * 2 * n * kv + 2 * n * h + 4 * 32 * n  # in, Q, K V, out
    mlp = 2 * n * h + 4 * 2 * n * i  # input, gate out, SiLU out, up out, product
    layer = result.activations.layers[0]
    assert layer.per_layer_total == norms + attention + mlp, "Llama 3.1 8B layer bytes"
    assert result.activations.logits_peak == 12 * n * 128256, "12 bytes per logit at the loss"


def test_full_recompute_peak() -> None:
    model = llama31_8b()
    result = run(model, gradient_checkpointing="full", seq_len=2048, engine="deepspeed")
    acts = result.activations
    rotary = acts.head["rotary_cos_sin"]
    at_loss = sum(acts.head.values()) - rotary + acts.logits_peak
    expected = 32 * 2 * 2048 * 4096 + rotary + max(at_loss, acts.recompute_working_set)
    assert acts.total == expected, "checkpoints + the larger of the two moments"
    assert acts.recompute_working_set == acts.layers[0].per_layer_total, "one layer rebuilt"


# --- QLoRA paper (Dettmers et al. 2023, arXiv:2305.14314), abstract and §1 ----------------------
def test_qlora_paper_65b_headline() -> None:
    """'reduces the average memory requirements of finetuning a 65B parameter model from >780GB
    of GPU memory to <48GB'. Paper setting: LoRA r=64 on all linear layers, dropout 0.1 for
    65B, NF4 with double quantization, paged 8-bit AdamW, gradient checkpointing, adapters in
    bf16 (its reference script casts them under --bf16); micro-batch 1 x 512 tokens."""
    model = llama_65b()
    full = run(model, gradient_checkpointing="full", seq_len=512, engine="deepspeed")
    assert full.per_gpu.total > 780e9, f"16-bit full fine-tuning: {full.per_gpu.total / 1e9} GB"
    states = full.per_gpu.weights + full.per_gpu.gradients + full.per_gpu.optimizer
    assert states == 16 * model.total_params(), "2 + 2 + 12 bytes per parameter"
    qlora = run(
        model,
        method="qlora",
        precision="bf16",
        lora_rank=64,
        lora_dropout=0.1,
        optimizer="paged-adamw-8bit",
        gradient_checkpointing="full",
        seq_len=512,
    )
    assert qlora.per_gpu.total < 48e9, f"QLoRA 65B: {qlora.per_gpu.total / 1e9:.1f} GB"
    assert qlora.trainable_params == 80 * 64 * (4 * 2 * 8192 + 3 * (8192 + 22016)), "r=64 LoRA"


# --- input validation ---------------------------------------------------------------------------
INVALID = [
    (dict(method="qlora", precision="fp32"), "precision: got 'fp32'.*qlora"),
    (dict(offload_optimizer=True), "offload_optimizer.*zero_stage 1, 2 or 3"),
    (dict(offload_optimizer=True, zero_stage=2, optimizer="adamw-8bit"), "optimizer.*offload"),
    (dict(method="full", lora_rank=8), "lora_rank: got 8; valid: only with method lora"),
    (dict(method="pretrain", qlora_double_quant=False), "qlora_double_quant.*only with method"),
    (dict(method="lora", qlora_double_quant=False), "qlora_double_quant.*only with method qlora"),
    (dict(method="lora", lora_rank=5000), "lora_rank: got 5000.*hidden size \\(4096\\)"),
    (dict(method="lora", lora_targets=["q_proj", "wq"]), "lora_targets: got 'wq'.*q_proj"),
    (dict(tensor_parallel=3), "tensor_parallel: got 3.*divisor of the 32 attention heads"),
    (dict(seq_len=0), "seq_len: got 0; valid: an integer from 1 to 10000000"),
    (dict(seq_len=10_000_001), "seq_len: got 10000001"),
    (dict(micro_batch_size=100_001), "micro_batch_size: got 100001"),
    (dict(num_gpus=100_001), "num_gpus: got 100001"),
    (dict(num_gpus=-1), "num_gpus: got -1"),
    (dict(zero_stage=4), "zero_stage: got 4; valid: 0, 1, 2, 3 or an alias"),
    (dict(zero_stage="zero-4"), "zero_stage: got 'zero-4'"),
    (dict(method="dpo"), "method: got 'dpo'"),
    (dict(fragmentation=1.5), "fragmentation: got 1.5; valid: a fraction"),
]


@pytest.mark.parametrize(("settings", "message"), INVALID)
def test_invalid_input_is_one_clear_error(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        bare_input(model=arch(), **settings)


def test_aliases() -> None:
    fsdp = bare_input(model=arch(), zero_stage="fsdp-full-shard", num_gpus=8)
    assert (fsdp.zero_stage, fsdp.sharding) == (3, "fsdp"), "FSDP full-shard is ZeRO-3"
    assert bare_input(model=arch(), zero_stage="shard_grad_op").zero_stage == 2, "grad-op"
    flash = bare_input(model=arch(), attention="flash_attention_2")
    assert flash.attention == "sdpa", "FlashAttention-2 keeps what SDPA keeps"
    lora = bare_input(model=arch(), method="lora", lora_targets="q_proj, v_proj")
    assert lora.lora_targets == ("q_proj", "v_proj"), "comma-separated module names"
    assert lora.effective_lora_alpha == 32.0, "alpha defaults to 2 x rank"


def test_estimate_for_resolves_a_count() -> None:
    result = estimate_for("7e9", method="lora")
    assert result.model_id == "estimated-7B", "a bare count goes through model_from_param_count"
    assert any("estimated" in a for a in result.assumptions), "the estimate says so"


# --- the result ---------------------------------------------------------------------------------
def test_parts_add_up_and_overhead_is_stated() -> None:
    result = run(llama31_8b(), num_gpus=8)
    p = result.per_gpu
    parts = p.weights + p.gradients + p.optimizer + p.activations
    assert p.total == parts + p.overhead, "total = sum of the parts"
    o = result.overhead
    # Plain PyTorch DDP under autocast keeps fp32 gradients (measured: 4 bytes per parameter
    # in benchmarks/memory_calibration), so its buckets copy 4 bytes per parameter.
    assert o.comm_buffers == 4 * llama31_8b().total_params(), "DDP buckets copy the gradients"
    # The allocator's margin covers what is allocated and freed within the step: everything at
    # the peak but the resting weights, optimizer state and the buckets (allocated once).
    resting = result.model_states.unsharded_weights + result.model_states.unsharded_optimizer
    assert o.transient == parts - resting, "the step's transient bytes"
    assert o.fragmentation == -(-o.transient // 10), "10 % default of them, rounded up"
    f = result.figures
    assert (f.allocated, f.reserved) == (
        parts + o.comm_buffers,
        parts + o.comm_buffers + o.fragmentation,
    )
    assert f.device == p.total == f.required, (
        "no paged state: the card holds the whole device figure"
    )
    assert p.overhead == o.cuda_context + o.comm_buffers + o.fragmentation, "overhead parts"
    assert o.cuda_context == 3 << 28, "0.75 GiB default CUDA context"
    assert result.bytes_per_param.optimizer == 8.0, "autocast: AdamW m and v; weights are master"
    zero = run(llama31_8b(), num_gpus=8, engine="deepspeed")
    assert zero.bytes_per_param.optimizer == 12.0, "ZeRO's K = 12"
    assert zero.overhead.comm_buffers == 2 * llama31_8b().total_params(), "16-bit gradients"


# (settings, engine, optimizer step, bytes per parameter for weights/gradients/optimizer):
# full bf16-mixed AdamW on Llama 3.1 8B. PyTorch autocast keeps fp32 weights (the master) and
# gradients, 4 + 4 + 8 B; DeepSpeed 16-bit weights and gradients with the fp32 master in the
# optimizer, 2 + 2 + 12 B (the ZeRO paper's K = 12).
RESOLVED = [
    ({}, "pytorch", "foreach", (4.0, 4.0, 8.0)),
    ({"device": "cpu"}, "pytorch", "for-loop", (4.0, 4.0, 8.0)),
    ({"zero_stage": 1}, "deepspeed", "fused", (2.0, 2.0, 12.0)),
    ({"zero_stage": 2}, "deepspeed", "fused", (2.0, 2.0, 12.0)),
    ({"zero_stage": 3}, "deepspeed", "fused", (2.0, 2.0, 12.0)),
    ({"zero_stage": 2, "offload_optimizer": True}, "deepspeed", "fused", (2.0, 2.0, 12.0)),
    ({"zero_stage": 3, "engine": "pytorch"}, "pytorch", "foreach", (4.0, 4.0, 8.0)),
    ({"engine": "deepspeed"}, "deepspeed", "fused", (2.0, 2.0, 12.0)),
    ({"zero_stage": 2, "optimizer_impl": "for-loop"}, "deepspeed", "for-loop", (2.0, 2.0, 12.0)),
]


@pytest.mark.parametrize(("settings", "engine", "impl", "per_param"), RESOLVED)
def test_result_carries_the_resolved_engine_and_step(
    settings: dict[str, Any], engine: str, impl: str, per_param: tuple[float, ...]
) -> None:
    inp = bare_input(model=llama31_8b(), num_gpus=8, **settings)
    result = estimate(inp)
    assert (result.engine, result.optimizer_impl) == (engine, impl), f"{settings}: resolved"
    assert (result.engine, result.optimizer_impl) == (
        inp.effective_engine,
        inp.effective_optimizer_impl,
    ), "the input's resolution"
    b = result.bytes_per_param
    assert (b.weights, b.gradients, b.optimizer) == per_param, f"{engine}: counted as such"
    dumped = result.model_dump(mode="json")
    assert (dumped["engine"], dumped["optimizer_impl"]) == (engine, impl), "in the JSON dump"


def test_assumptions_name_every_choice() -> None:
    paged = run(
        llama31_8b(),
        method="qlora",
        optimizer="paged-adamw-8bit",
        zero_stage=3,
        num_gpus=4,
        gradient_checkpointing="full",
        tensor_parallel=2,
        fragmentation=0.05,
    )
    offload = run(llama31_8b(), zero_stage=2, num_gpus=4, offload_optimizer=True)
    text = "\n".join(paged.assumptions + offload.assumptions)
    for phrase in [
        "LoRA rank 16, alpha 32",
        "4-bit NF4",
        "0.127 bits",
        "counted here as resident",
        "ZeRO stage 3",
        "ZeRO stage 2",
        "offloaded to CPU RAM",
        "Tensor parallelism 2",
        "Full recomputation",
        "5% of the bytes the step allocates and frees",
        "GiB = 2^30",
    ]:
        assert phrase in text, f"assumptions should mention {phrase!r}"
    for sentence in paged.assumptions + offload.assumptions:
        assert sentence[0].isupper() and sentence.endswith("."), f"not a sentence: {sentence!r}"


def test_gpt2_defaults_to_dropout_and_eager_text() -> None:
    result = run(gpt2_small(), attention="eager")
    text = "\n".join(result.assumptions)
    assert "Dropout on" in text and "(16-bit)" in text, "GPT-2: dropout 0.1, 16-bit softmax"


# --- every built-in architecture ----------------------------------------------------------------
def builtin_models() -> list[ModelArch]:
    from tools.architectures.registry import list_models

    return list_models()


@pytest.mark.parametrize("model", builtin_models(), ids=lambda m: m.id)
def test_every_builtin_model_estimates(model: ModelArch) -> None:
    seq = min(2048, model.max_position_embeddings)
    for settings in (
        {},
        {"method": "lora", "attention": "eager"},
        {"method": "qlora", "gradient_checkpointing": "full", "zero_stage": 3, "num_gpus": 4},
        {"optimizer": "adafactor", "zero_stage": "fsdp-full-shard", "num_gpus": 8},
    ):
        result = run(model, seq_len=seq, **settings)
        p = result.per_gpu
        assert p.total == p.weights + p.gradients + p.optimizer + p.activations + p.overhead
        layers = sum(g.count for g in result.activations.layers)
        assert layers == model.num_layers + model.num_decoder_layers, f"{model.id}: every layer"


def test_fused_projections_get_one_adapter_each() -> None:
    """Phi-3 mini fuses q,k,v (qkv_proj 3072 -> 9216) and gate,up (gate_up_proj 3072 -> 16384):
    r=16 on all linear layers is 32 x 16 x [(3072+9216) + (3072+3072) + (3072+16384) +
    (8192+3072)] = 25,165,824 trainable parameters."""
    from tools.architectures.registry import lookup_model

    result = run(lookup_model("microsoft/Phi-3-mini-4k-instruct"), method="lora")
    by_hand = 32 * 16 * ((3072 + 9216) + (3072 + 3072) + (3072 + 16384) + (8192 + 3072))
    assert result.trainable_params == by_hand == 25_165_824, "fused modules adapted whole"
