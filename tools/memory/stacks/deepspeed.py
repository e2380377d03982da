"""What DeepSpeed's ZeRO allocates beyond the ZeRO paper's 2 + 2 + 12 bytes per parameter.

Read from deepspeed/runtime/zero/stage_1_and_2.py and stage3.py (0.15) and its config.py:
- the fp32 gradient partition: before the optimizer step, stage 1/2 flatten the partition's
  16-bit gradients (`self.flatten(...)`, a torch.cat copy) and convert the copy to fp32
  (`single_grad_partition ... .to(fp32)`, set as the fp32 master's `.grad`); stage 3 does so
  per sub-group of at most `sub_group_size` = 1e9 elements (`_prepare_fp32_grad_for_sub_group`).
  At that instant the 16-bit gradients, the flat copy and the fp32 partition are alive: 2 + 4
  bytes per trainable parameter on this rank beyond the gradients (stage_1_and_2.py @02aa38c3;
  DeepSpeed's own estimator counts 18 bytes per sharded parameter, not 16);
- the gradient reduce bucket: `reduce_bucket_size` 16-bit elements (`ipg_buffer` in stage 2,
  `__ipg_bucket_flat_buffer` allocated at start-up in stage 3 with contiguous gradients);
- stage 3 prefetch: up to `stage3_prefetch_bucket_size` parameters gathered ahead of the module
  that computes, besides that module itself (DeepSpeed's estimator: 4 x the largest layer,
  16-bit weight and gradient);
- stage 3 reuse: a module's gathered parameters are not released when they are used again
  within `stage3_max_reuse_distance` parameters of the trace (partitioned_param_coordinator.py
  __params_to_release), which keeps up to that many elements gathered where the forward pass
  turns into the backward pass (the last layers run, then are recomputed and differentiated).
DeepSpeed's defaults are 5e8, 5e7 and 1e9; the Hugging Face integration fills "auto" with
hidden^2 and 0.9 x hidden^2 (transformers integrations/deepspeed.py trainer_config_finalize),
which is what the `hf` stack runs. Stage 3 parameter offload (`offload_param`) moves the
16-bit partition to pinned CPU memory and fetches each module as it computes.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import Final

from tools.architectures.architecture import ModelArch
from tools.memory import constants as c

__all__ = ["DEEPSPEED_DEFAULTS", "ZeroExtras", "zero_extras"]

# deepspeed/runtime/zero/config.py: reduce_bucket_size, stage3_prefetch_bucket_size,
# sub_group_size.
DEEPSPEED_DEFAULTS: Final = {"reduce_bucket": 500_000_000, "prefetch": 50_000_000}
MAX_REUSE_DISTANCE: Final = 1_000_000_000  # stage3_max_reuse_distance, elements
SUB_GROUP_SIZE: Final = 1_000_000_000


@dataclass(frozen=True, slots=True)
class ZeroExtras:
    """Bytes DeepSpeed ZeRO adds on one GPU."""

    reduce_bucket: int  # allocated once, held through the step (a communication buffer)
    prefetch: int  # 16-bit weights gathered ahead or kept for reuse (stage 3)
    fp32_grads: int  # the fp32 gradient partition, at the optimizer step


def zero_extras(
    model: ModelArch,
    stage: int,
    ranks: int,
    trainable: int,
    weight_bytes: int,
    mixed: bool,
    offload: bool,
    hf_auto: bool,
    stored_weights: int = 0,
) -> ZeroExtras:
    """The extras of ZeRO `stage` over `ranks` GPUs for `trainable` trainable elements per
    tensor-parallel rank; `hf_auto`: the Hugging Face integration's bucket sizes;
    `stored_weights`: the bytes of all weights on one tensor-parallel rank before sharding (what
    the reuse window can keep gathered, at most)."""
    if stage == 0:
        return ZeroExtras(0, 0, 0)
    h2 = model.hidden_size**2
    bucket = h2 if hf_auto else DEEPSPEED_DEFAULTS["reduce_bucket"]
    prefetch = int(0.9 * h2) if hf_auto else DEEPSPEED_DEFAULTS["prefetch"]
    partition = ceil(trainable / ranks)
    if stage == 3:
        partition = min(partition, SUB_GROUP_SIZE)
    # the partition's 16-bit gradients are flattened (a torch.cat copy) and then cast to fp32:
    # for a moment the gradients, the flat copy and the fp32 partition are all alive
    # (stage_1_and_2.py step; stage3.py per sub-group)
    fp32 = (c.FP32 + weight_bytes) * partition if mixed and not offload else 0
    reduce = weight_bytes * bucket if trainable and stage >= 2 else 0
    gathered = 0
    if stage == 3:
        reuse = min(weight_bytes * MAX_REUSE_DISTANCE, stored_weights)
        gathered = weight_bytes * prefetch + reuse
    return ZeroExtras(reduce, gathered, fp32)
