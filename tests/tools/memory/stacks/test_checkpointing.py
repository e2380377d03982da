"""Op-level selective checkpointing and activation offload, worked out by hand (Llama 3.1 8B)."""

from __future__ import annotations

from tests.fakes.jobs import bare_input
from tests.tools.memory.test_estimator_models import llama31_8b
from tools.memory import estimate
from tools.memory.assemble import activation_config
from tools.memory.stacks.checkpointing import OFFLOAD_STASH, offload_residue, op_level_kept

TOKENS = 2 * 8192  # torchtitan's Llama 3.1 8B runs: local batch 2 x 8192


def test_op_level_keeps_every_second_mm_and_the_attention_output() -> None:
    """Per layer, 16-bit: its input (4096), the outputs of wq (4096), wv (1024), w1 (14336) and
    w2 (4096) (mm 1, 3, 5, 7 of wq, wk, wv, wo, w1, w3, w2), SDPA's output (4096) and its fp32
    log-sum-exp per head (32): 2 x 16384 x 31744 + 4 x 16384 x 32 = 1,042,284,544 B."""
    inp = bare_input(model=llama31_8b(), micro_batch_size=2, seq_len=8192, engine="deepspeed",
                     gradient_checkpointing="selective", selective_checkpointing="op")  # fmt: skip
    cfg = activation_config(inp, ())
    checkpoint = 2 * TOKENS * 4096
    assert op_level_kept(cfg, checkpoint) == 1_042_284_544, "by hand"
    layer = estimate(inp).activations.layers[0]
    assert layer.stored_per_layer == 1_042_284_544, "what the estimate keeps per layer"
    assert layer.per_layer_total > 3 * layer.stored_per_layer, "far less than without recompute"
    attention = estimate(inp.model_copy(update={"selective_checkpointing": "attention"}))
    assert attention.activations.layers[0].stored_per_layer == layer.per_layer_total, (
        "Korthikanti's selective recomputation is a no-op with fused attention"
    )


def test_torchtitan_selective_is_op_level() -> None:
    inp = bare_input(model=llama31_8b(), micro_batch_size=2, seq_len=8192, engine="deepspeed",
                     gradient_checkpointing="selective", stack="torchtitan")  # fmt: skip
    assert inp.mechanisms.selective_checkpointing == "op", "the torchtitan profile"
    assert estimate(inp).activations.layers[0].stored_per_layer == 1_042_284_544


def test_activation_offload_leaves_the_last_checkpoints() -> None:
    """torchtune's OffloadActivations with full recomputation: 32 checkpoints of 2 x 4096 tokens
    x 4096 x 2 B = 67,108,864 B each; the last OFFLOAD_STASH stay, the rest is in pinned RAM."""
    inp = bare_input(model=llama31_8b(), precision="bf16", gradient_checkpointing="full",
                     micro_batch_size=2, seq_len=4096, stack="torchtune",
                     activation_offload=True)  # fmt: skip
    result = estimate(inp)
    each = 67_108_864
    assert result.activations.offloaded == (32 - OFFLOAD_STASH) * each == 1_811_939_328
    assert result.host_ram.offloaded_activations == result.activations.offloaded, "CPU RAM"
    assert result.host_ram.per_node(8) == 8 * 1_811_939_328, "per node of 8 processes"
    lora = {"method": "lora", "optimizer": "adamw"}  # its peak is at the loss, not the step
    on = estimate(inp.model_copy(update=lora))
    off = estimate(inp.model_copy(update={**lora, "activation_offload": False}))
    loss_moment = {m.name: m.total for m in on.moments}["loss backward"]
    without = {m.name: m.total for m in off.moments}["loss backward"]
    assert without - loss_moment == (32 - OFFLOAD_STASH) * each, "offload frees the rest"
    assert offload_residue(each, 1, 32, True) == OFFLOAD_STASH * each, "the stash"
    assert offload_residue(each, 10, 32, False) == OFFLOAD_STASH * 10, "five largest tensors"
