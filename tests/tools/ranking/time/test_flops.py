"""FLOPs per token by kernel kind, worked by hand for Llama 2 7B, plus invariants."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools.architectures.registry import resolve_model
from tools.ranking.time.flops import attention_forward_flops, block_linear_params, token_flops

LLAMA2_7B = resolve_model("meta-llama/Llama-2-7b-hf")
# 32 layers x (4 x 4096^2 + 3 x 4096 x 11008) = 32 x 202,375,168
L7 = 6_476_005_376
HEAD7 = 2 * 32_000 * 4096  # 262,144,000 per forward
ATTN7 = 4 * 2048 * 4096 * 32 // 2  # 536,870,912 per forward, causal half at s = 2048
P = 40_000_000  # adapters (any count: the formula is linear in it)


def test_block_linear_params() -> None:
    assert block_linear_params(LLAMA2_7B) == L7, "attention and MLP matrices of the 32 blocks"
    mixtral = resolve_model("mistralai/Mixtral-8x7B-v0.1")
    every_expert = sum(m.num_params() for m in mixtral.linear_modules())
    assert block_linear_params(mixtral) < every_expert, "2 of 8 experts per token"


@pytest.mark.parametrize(
    ("method", "checkpointing", "linear", "head", "adapters", "attention", "recompute"),
    [
        # full: forward + 2 backward for everything
        ("full", "none", 3 * 2 * L7, 3 * HEAD7, 0, 3 * ATTN7, 0),
        # full recomputation reruns the layers' forward (not the LM head)
        ("full", "full", 4 * 2 * L7, 3 * HEAD7, 0, 4 * ATTN7, 2 * L7 + ATTN7),
        # selective recomputation reruns the attention core only
        ("pretrain", "selective", 3 * 2 * L7, 3 * HEAD7, 0, 4 * ATTN7, ATTN7),
        # LoRA: the frozen base has input gradients only (forward + 1), adapters forward + 2
        ("lora", "none", 2 * 2 * L7, 2 * HEAD7, 3 * 2 * P, 3 * ATTN7, 0),
        ("qlora", "full", 3 * 2 * L7, 2 * HEAD7, 4 * 2 * P, 4 * ATTN7, 2 * L7 + 2 * P + ATTN7),
    ],
)
def test_token_flops_by_hand(
    method: str,
    checkpointing: str,
    linear: int,
    head: int,
    adapters: int,
    attention: int,
    recompute: int,
) -> None:
    got = token_flops(LLAMA2_7B, method, P, 2048, checkpointing, "sdpa")  # type: ignore[arg-type]
    assert got.block_linear == linear, f"{method}/{checkpointing}: block linears"
    assert got.head == head, "LM head"
    assert got.adapters == adapters, "LoRA adapters"
    assert got.attention == attention, "attention"
    assert got.recompute == recompute, "recomputed part"
    assert got.total == linear + head + adapters + attention, "total"
    assert got.model == got.total - recompute, "model FLOPs exclude recomputation"


def test_attention_masks() -> None:
    bert = resolve_model("google-bert/bert-base-uncased")
    # decoder, fused kernel: the causal half is skipped
    assert attention_forward_flops(LLAMA2_7B, 2048, "sdpa", causal=True) == ATTN7
    # eager computes the whole s x s product and masks it afterwards
    assert attention_forward_flops(LLAMA2_7B, 2048, "eager", causal=True) == 2 * ATTN7
    # an encoder attends both ways: 12 layers x 4 x 512 x 768
    assert attention_forward_flops(bert, 512, "sdpa", causal=False) == 12 * 4 * 512 * 768


@given(
    seq=st.integers(min_value=128, max_value=131_072),
    method=st.sampled_from(["pretrain", "full", "lora", "qlora"]),
    checkpointing=st.sampled_from(["none", "selective", "full"]),
)
def test_invariants(seq: int, method: str, checkpointing: str) -> None:
    got = token_flops(LLAMA2_7B, method, P, seq, checkpointing, "sdpa")  # type: ignore[arg-type]
    longer = token_flops(LLAMA2_7B, method, P, 2 * seq, checkpointing, "sdpa")  # type: ignore[arg-type]
    assert longer.attention == pytest.approx(2 * got.attention), "attention is linear in s"
    assert longer.block_linear == got.block_linear, "matmuls per token do not depend on s"
    plain = token_flops(LLAMA2_7B, method, P, seq, "none", "sdpa")  # type: ignore[arg-type]
    assert got.total >= plain.total and got.model == pytest.approx(plain.model), "recompute"
    full = token_flops(LLAMA2_7B, "full", P, seq, checkpointing, "sdpa")  # type: ignore[arg-type]
    assert got.total <= full.total or method in ("pretrain", "full"), "LoRA never costs more"
