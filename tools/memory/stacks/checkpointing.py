"""What a layer keeps under recomputation policies beyond "none" and "full", and what activation
offloading leaves on the GPU.

Op-level selective checkpointing (torchtitan parallelisms/parallelize_llama.py, `_save_list` and
`_custom_policy`): inside each checkpointed transformer block the outputs of `aten.mm`, of the
SDPA kernels and of reduce-scatter are saved (MUST_SAVE), except every second mm, counted per
block in forward order; everything else is recomputed. For a Llama block (wq, wk, wv, wo, w1, w3,
w2) that keeps the outputs of wq, wv, w1 and w2, the attention output with its fp32 log-sum-exp,
and the block's input, which the checkpoint itself saves. Eager attention's matmuls are
`aten.bmm`, not in the list: its score tensors are recomputed. Mixture-of-experts layers run
their experts as grouped matmuls (not `aten.mm`): only the router's matmul counts.

Activation offloading (torchtune training/_activation_offloading.py `OffloadActivations`): every
saved tensor of at least 1 KiB is copied to pinned CPU memory in the forward pass; with streams,
the last `max_fwd_stash_size` = 5 of them stay on the GPU until the backward pass starts, and the
backward brings one layer's tensors back at a time. The output layer and the loss are excluded
(torchtune wraps them in `NoOpManager`), so the logits stay on the GPU.
"""

from __future__ import annotations

from math import ceil
from typing import Final

from tools.memory import constants as c
from tools.memory.layers import ActivationConfig
from tools.memory.states.inventory import physical_linears

__all__ = ["OFFLOAD_STASH", "offload_residue", "op_level_kept"]

OFFLOAD_STASH: Final = 5  # OffloadActivations(max_fwd_stash_size=5)
_ROW_PARALLEL = frozenset({"o_proj", "down_proj"})  # their outputs are unsplit partial sums


def op_level_kept(cfg: ActivationConfig, checkpoint: int) -> int:
    """Bytes one layer keeps under op-level selective checkpointing on one GPU: its input
    (`checkpoint`), the output of every odd-numbered mm and the fused attention's outputs."""
    m, tp = cfg.model, cfg.tensor_parallel
    tokens, e = cfg.seq_len * cfg.micro_batch, cfg.dtypes.act
    widths = [
        _mm_width(p.d_out, p.slices, tp) for p in physical_linears(m) if p.group == "attention"
    ]
    if m.is_moe:  # the router's mm; the experts are grouped matmuls
        widths.append(m.num_experts)
    else:
        widths += [
            _mm_width(p.d_out, p.slices, tp) for p in physical_linears(m) if p.group == "mlp"
        ]
    kept = checkpoint + sum(e * tokens * w for w in widths[::2])  # mm 1, 3, 5, ...
    if cfg.attention == "sdpa":
        heads = m.num_heads // tp
        kept += e * tokens * heads * m.head_dim + c.FP32 * tokens * heads
    return kept


def _mm_width(d_out: int, slices: tuple[str, ...], tp: int) -> int:
    """Columns of an mm output on one rank: column-parallel layers are split, row-parallel
    ones (o_proj, down_proj) produce full-width partial sums."""
    return d_out if set(slices) & _ROW_PARALLEL else ceil(d_out / tp)


def offload_residue(
    stored_each: int, largest_tensor: int, layers: int, full: bool, stash: int = OFFLOAD_STASH
) -> int:
    """Bytes of saved activations still on the GPU at the loss when offloading: the stash of the
    last `stash` saved tensors (with full recomputation, the last checkpoints). unsloth's
    offloaded checkpointing (unsloth_zoo/gradient_checkpointing.py @0373fcc5) leaves 3: the last
    layer's input, which it never offloads, and its two GPU staging buffers of one hidden state
    each, which it keeps from step to step."""
    if full:
        return min(layers, stash) * stored_each
    return stash * largest_tensor
