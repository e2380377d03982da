"""Mixture-of-experts and latent-attention models through the estimator: dense-MLP layers apart,
shared experts over every token, routed experts over k tokens each, MLA's latents."""

from __future__ import annotations

from tools.architectures.registry import lookup_model
from tools.memory import estimate_for

TOKENS = 1024
BF16 = 2


def layers(model: str) -> dict[str, dict[str, int]]:
    result = estimate_for(model, method="full", precision="bf16", gradient_checkpointing="none",
                          micro_batch_size=1, seq_len=TOKENS)  # fmt: skip
    return {g.name: g.per_layer for g in result.activations.layers}


def test_deepseek_v2_lite_layers() -> None:
    """First layer dense (width 10944), 26 MoE layers: 6 of 64 routed experts of 1408 per token
    plus the shared experts' 2 x 1408 over every token; MLA keeps the 512-wide KV latent."""
    groups = layers("DeepSeek-V2-Lite")
    assert list(groups) == ["dense-MLP layer", "MoE layer"], "two kinds of layer"
    counts = [g.count for g in estimate_for("DeepSeek-V2-Lite").activations.layers]
    assert counts == [1, 26], "first_k_dense_replace = 1"
    dense, moe = groups["dense-MLP layer"], groups["MoE layer"]
    assert dense["mlp.act_input"] == BF16 * TOKENS * 10944, "dense width"
    assert moe["mlp.act_input"] == BF16 * TOKENS * 6 * 1408, "k routed copies of each token"
    assert moe["mlp.shared.act_input"] == BF16 * TOKENS * 2816, "shared experts, every token"
    assert "mlp.shared.act_input" not in dense, "no shared expert in the dense layer"
    assert moe["attention.kv_latent"] == BF16 * TOKENS * 512, "the KV latent feeds kv_b_proj"
    assert moe["attention.value"] == BF16 * TOKENS * 16 * 128, "16 heads x v_head_dim 128"
    assert moe["attention.key"] == BF16 * TOKENS * 16 * 192, "16 heads x (128 + 64)"


def test_qwen_moe_shared_expert_and_gate() -> None:
    layer = layers("Qwen1.5-MoE-A2.7B")["decoder layer"]
    assert layer["mlp.shared.act_input"] == BF16 * TOKENS * 5632, "shared expert width 5632"
    assert layer["mlp.act_input"] == BF16 * TOKENS * 4 * 1408, "4 of 60 experts per token"
    assert layer["mlp.shared.gate"] == 2 * 4 * TOKENS + BF16 * TOKENS * 2048, "sigmoid gate"


def test_qwen3_keeps_its_qk_norm_inputs() -> None:
    layer = layers("Qwen3-30B-A3B")["decoder layer"]
    assert layer["attention.q_norm.input_fp32"] == 4 * TOKENS * 32 * 128, "fp32 copy of q"
    assert layer["attention.k_norm.input_fp32"] == 4 * TOKENS * 4 * 128, "fp32 copy of k"


def test_moe_states_count_every_expert_and_time_counts_the_active() -> None:
    model = lookup_model("Qwen3-30B-A3B")
    full = estimate_for(model, method="full", num_gpus=8, zero_stage=3)
    assert full.total_params == model.total_params() == 30_532_122_624, "every expert in memory"
    assert model.active_params() == 3_353_032_704, "8 of 128 experts per token (time model)"
