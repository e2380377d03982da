"""The remaining stack mechanisms, each against a hand count: the optimizer inside backward,
paged optimizer state, an fp32 frozen base, 4-bit input retention, repeated K/V, fused RMSNorm."""

from __future__ import annotations

from tests.fakes.jobs import bare_input
from tests.tools.memory.test_estimator_models import llama31_8b
from tools.memory import estimate

EMBED = 128_256 * 4096  # Llama 3.1 8B's largest tensor
N8B = 8_030_261_248
NORMS = 65 * 4096  # 2 per layer + the final one


def test_optimizer_in_backward_holds_one_gradient() -> None:
    """torchtune optimizer_in_bwd: each parameter stepped and its gradient freed in backward, so
    at most the largest one (the embedding, 2 B x 525,336,576) exists, and the foreach step's
    sqrt(v) copy is one parameter's too."""
    inp = bare_input(model=llama31_8b(), precision="bf16", optimizer_impl="foreach",
                     optimizer_in_backward=True)  # fmt: skip
    result = estimate(inp)
    assert max(m.gradients for m in result.moments) == 2 * EMBED == 1_050_673_152
    assert result.model_states.optimizer_step_temporaries == 2 * EMBED, "one parameter's sqrt(v)"
    plain = estimate(inp.model_copy(update={"optimizer_in_backward": False}))
    assert max(m.gradients for m in plain.moments) == 2 * N8B, "every gradient otherwise"


def test_paged_state_is_outside_the_allocator_and_evictable() -> None:
    """bitsandbytes pages the two uint8 states of every tensor of >= 1e5 elements (all but the
    norms here): 2 x (N - norms) bytes, in the device figure, out of allocated and reserved."""
    result = estimate(
        bare_input(model=llama31_8b(), precision="bf16", optimizer="paged-adamw-8bit")
    )
    f = result.figures
    assert f.evictable == 2 * (N8B - NORMS) == 16_059_990_016, "paged uint8 states"
    assert (
        f.device == result.per_gpu.total == f.reserved + result.overhead.cuda_context + f.evictable
    )
    assert f.required == f.device - f.evictable, "the card must hold the rest"
    assert result.host_ram.paged_optimizer == f.evictable, "CPU RAM if it is all paged out"
    unpaged = estimate(bare_input(model=llama31_8b(), precision="bf16", optimizer="adamw-8bit"))
    assert unpaged.figures.evictable == 0 and unpaged.figures.allocated > f.allocated


def test_fp32_frozen_base_under_fsdp() -> None:
    """PEFT's FSDP example loads the base in fp32, and Accelerate casts a mixed-precision model
    to fp32 before sharding: 4 B per frozen parameter, sharded, instead of 2 (the hf stack's
    default under FSDP); FSDP's gathered blocks stay 16-bit (MixedPrecision param_dtype bf16)."""
    kwargs = dict(model=llama31_8b(), method="lora", zero_stage="fsdp-full-shard", num_gpus=8)
    half = estimate(bare_input(**kwargs, frozen_base_dtype="16-bit"))
    fp32 = estimate(bare_input(**kwargs))
    stated = estimate(bare_input(**kwargs, frozen_base_dtype="fp32"))
    assert fp32.model_states == stated.model_states
    frozen = N8B  # every base parameter is frozen
    assert fp32.model_states.unsharded_weights - half.model_states.unsharded_weights == 2 * frozen
    assert fp32.model_states.zero3_gathered_weights == half.model_states.zero3_gathered_weights


def test_kbit_preparation_keeps_an_fp32_stream() -> None:
    """QLoRA after PEFT's prepare_model_for_kbit_training under autocast: the fp32 embeddings
    make the residual stream, and so each checkpoint, fp32 (4 B x 2048 x 4096 per layer)."""
    base = dict(model=llama31_8b(), method="qlora", gradient_checkpointing="full")
    prepared = estimate(bare_input(**base, frozen_base_dtype="fp32"))
    assert prepared.activations.layers[0].stored_per_layer == 4 * 2048 * 4096, "fp32 checkpoint"
    plain = estimate(bare_input(**base))
    assert plain.activations.layers[0].stored_per_layer == 2 * 2048 * 4096, "16-bit otherwise"


def test_old_bitsandbytes_keeps_each_4bit_input() -> None:
    """bitsandbytes < 0.43.2 saves every 4-bit layer's input. With an adapter on q_proj the
    attention input is kept anyway (the adapter's), and o_proj reads SDPA's saved output; new
    are the MLP input (4096) and the MLP product (14336), 2 B per token."""
    base = dict(model=llama31_8b(), method="qlora", precision="bf16", lora_targets="q_proj")
    old = estimate(bare_input(**base, qlora_keeps_input=True)).activations.layers[0]
    new = estimate(bare_input(**base)).activations.layers[0]
    extra = sum(v for k, v in old.per_layer.items() if k.endswith("4bit_input"))
    assert extra == 2 * 2048 * (4096 + 14336), "the MLP's two inputs"
    assert old.per_layer_total - new.per_layer_total == extra, "nothing else changes"


def test_repeated_kv_is_saved_at_every_head() -> None:
    base = dict(model=llama31_8b(), precision="bf16")
    grouped = estimate(bare_input(**base)).activations.layers[0].per_layer
    repeated = estimate(bare_input(**base, repeat_kv=True)).activations.layers[0].per_layer
    assert grouped["attention.key"] == 2 * 2048 * 8 * 128, "8 KV heads"
    assert repeated["attention.key"] == repeated["attention.value"] == 2 * 2048 * 32 * 128


def test_fused_rmsnorm_keeps_its_input_and_rstd() -> None:
    base = dict(model=llama31_8b(), precision="bf16")
    plain = estimate(bare_input(**base)).activations.layers[0].per_layer
    fused = estimate(bare_input(**base, fused_rmsnorm=True)).activations.layers[0].per_layer
    n = 2048
    assert plain["attention.norm.input_fp32"] == 4 * n * 4096, "HF: an fp32 copy"
    assert fused["attention.norm.input"] == 2 * n * 4096, "fused: the 16-bit input"
    assert fused["attention.norm.norm_stats"] == 4 * n, "and one fp32 rstd per token"
    assert "attention.norm.normalized" not in fused, "no normalized copy for the weight grad"
