"""Reference architectures for the estimator tests, built from published config.json values, and
checks that their parameter counts match the published totals."""

from __future__ import annotations

from typing import Any

from tools.models import ModelArch


def arch(**fields: Any) -> ModelArch:
    """A decoder with Llama defaults, overridden by `fields`."""
    base: dict[str, Any] = dict(
        id="test/model",
        name="test model",
        family="llama",
        arch="decoder",
        hidden_size=4096,
        num_layers=32,
        num_heads=32,
        num_kv_heads=32,
        head_dim=128,
        intermediate_size=11008,
        vocab_size=32000,
        max_position_embeddings=4096,
        tied_embeddings=False,
        gated_mlp=True,
        norm="rmsnorm",
        source="test fixture",
    )
    return ModelArch(**(base | fields))


def llama31_8b() -> ModelArch:
    """meta-llama/Llama-3.1-8B config.json."""
    return arch(
        id="meta-llama/Llama-3.1-8B",
        name="Llama 3.1 8B",
        num_kv_heads=8,
        intermediate_size=14336,
        vocab_size=128256,
        max_position_embeddings=131072,
    )


def llama_65b() -> ModelArch:
    """LLaMA-65B (Touvron et al. 2023, Table 2; huggyllama/llama-65b config.json)."""
    return arch(
        id="huggyllama/llama-65b",
        name="LLaMA 65B",
        hidden_size=8192,
        num_layers=80,
        num_heads=64,
        num_kv_heads=64,
        intermediate_size=22016,
        vocab_size=32000,
        max_position_embeddings=2048,
    )


def gpt2_small() -> ModelArch:
    """openai-community/gpt2 config.json (n_embd 768, 12 layers, 12 heads, 4h MLP)."""
    return arch(
        id="openai-community/gpt2",
        name="GPT-2",
        family="gpt2",
        hidden_size=768,
        num_layers=12,
        num_heads=12,
        num_kv_heads=12,
        head_dim=64,
        intermediate_size=3072,
        vocab_size=50257,
        max_position_embeddings=1024,
        tied_embeddings=True,
        gated_mlp=False,
        norm="layernorm",
        learned_positions=True,
        qkv_bias=True,
        o_bias=True,
        mlp_bias=True,
    )


def mixtral_8x7b() -> ModelArch:
    """mistralai/Mixtral-8x7B-v0.1 config.json."""
    return arch(
        id="mistralai/Mixtral-8x7B-v0.1",
        name="Mixtral 8x7B",
        family="mixtral",
        num_kv_heads=8,
        intermediate_size=14336,
        num_experts=8,
        experts_per_token=2,
        max_position_embeddings=32768,
    )


def test_reference_parameter_counts() -> None:
    assert llama31_8b().total_params() == 8_030_261_248, "Llama 3.1 8B: 8.03B per its model card"
    assert llama_65b().total_params() == 65_285_660_672, "LLaMA-65B: 65.3B (paper: 65.2B)"
    assert gpt2_small().total_params() == 124_439_808, "GPT-2: 124,439,808 per transformers"
    assert mixtral_8x7b().total_params() == 46_702_792_704, "Mixtral 8x7B: 46.7B"
