"""Reference architectures for the estimator tests (the registry's, plus LLaMA-65B, which the
registry does not carry, built from its published config.json) and their published totals."""

from __future__ import annotations

from typing import Any

from tools.architectures.architecture import ModelArch
from tools.architectures.registry import lookup_model


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
    """meta-llama/Llama-3.1-8B, from the registry."""
    return lookup_model("meta-llama/Llama-3.1-8B")


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
    """openai-community/gpt2 (n_embd 768, 12 layers, 12 heads, 4h MLP), from the registry."""
    return lookup_model("gpt2")


def mixtral_8x7b() -> ModelArch:
    """mistralai/Mixtral-8x7B-v0.1, from the registry."""
    return lookup_model("mixtral 8x7b")


def test_reference_parameter_counts() -> None:
    assert llama31_8b().total_params() == 8_030_261_248, "Llama 3.1 8B: 8.03B per its model card"
    assert llama_65b().total_params() == 65_285_660_672, "LLaMA-65B: 65.3B (paper: 65.2B)"
    assert gpt2_small().total_params() == 124_439_808, "GPT-2: 124,439,808 per transformers"
    assert mixtral_8x7b().total_params() == 46_702_792_704, "Mixtral 8x7B: 46.7B"
