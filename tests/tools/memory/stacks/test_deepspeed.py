"""DeepSpeed ZeRO as DeepSpeed runs it, against its own estimators (deepspeed/runtime/zero/
stage_1_and_2.py estimate_zero2_model_states_mem_needs, stage3.py estimate_zero3_...)."""

from __future__ import annotations

import pytest

from tests.fakes.jobs import bare_input
from tests.tools.memory.test_estimator_models import llama31_8b
from tools.memory import MemoryEstimate, estimate
from tools.memory.stacks.deepspeed import DEEPSPEED_DEFAULTS, MAX_REUSE_DISTANCE, zero_extras

N = 8_030_261_248
LARGEST = 128_256 * 4096  # the embedding (and the untied lm_head)


def step(result: MemoryEstimate) -> int:
    return next(m.total for m in result.moments if m.name == "optimizer step")


@pytest.mark.parametrize("gpus", [2, 8, 64])
def test_zero2_step_is_deepspeeds_estimate(gpus: int) -> None:
    """At the optimizer step stage 2 holds the 16-bit weights 2 N, and per rank the 16-bit
    gradient partition, the fp32 master with Adam's m and v, and the fp32 gradient partition it
    builds for the step: DeepSpeed's own estimate of 2 N + 18 N / GPUs, plus the flat 16-bit
    copy of the gradients the fp32 partition is cast from (stage_1_and_2.py step: flatten, then
    .to(fp32)), alive at that instant: 2 N + 20 N / GPUs."""
    result = estimate(
        bare_input(model=llama31_8b(), zero_stage=2, num_gpus=gpus, engine="deepspeed")
    )
    assert step(result) == 2 * N + 20 * N // gpus, f"{gpus} GPUs"
    assert result.model_states.optimizer_step_temporaries == 6 * N // gpus, "flat copy + fp32"


@pytest.mark.parametrize("gpus", [8, 64])
def test_zero3_step_keeps_the_16bit_gradient_partition_too(gpus: int) -> None:
    """Stage 3: 16 N / GPUs of states, 4 x the largest layer gathered (16-bit weight and
    gradient), and the fp32 partition of one sub-group (at most 1e9 elements). DeepSpeed's
    estimator counts 18 N / GPUs: it leaves out the persistent 16-bit gradient partition
    (stage3.py grad_partitions_flat_buffer), 2 N / GPUs."""
    result = estimate(
        bare_input(model=llama31_8b(), zero_stage=3, num_gpus=gpus, engine="deepspeed")
    )
    fp32 = 6 * min(N // gpus, 1_000_000_000)  # the flat 16-bit copy and its fp32 cast
    assert step(result) == 16 * N // gpus + 4 * LARGEST + fp32, f"{gpus} GPUs"
    if N // gpus <= 1_000_000_000:
        assert step(result) - (18 * N // gpus + 4 * LARGEST) == 4 * N // gpus, "DeepSpeed's 18"


def test_buffers_follow_the_hugging_face_auto_sizes() -> None:
    """hf stack: reduce bucket hidden^2 (16-bit), prefetch 0.9 hidden^2, reuse window 1e9
    elements; DeepSpeed's own defaults otherwise (5e8 and 5e7)."""
    h2 = 4096**2
    hf = zero_extras(llama31_8b(), 3, 8, N, 2, True, False, True, 2 * N)
    assert (hf.reduce_bucket, hf.prefetch) == (2 * h2, 2 * int(0.9 * h2) + 2 * MAX_REUSE_DISTANCE)
    assert hf.fp32_grads == 6 * 1_000_000_000, "one sub-group of at most 1e9 elements"
    raw = zero_extras(llama31_8b(), 2, 8, N, 2, True, False, False)
    assert raw.reduce_bucket == 2 * DEEPSPEED_DEFAULTS["reduce_bucket"] and raw.prefetch == 0
    assert zero_extras(llama31_8b(), 2, 8, N, 2, True, True, True).fp32_grads == 0, "offloaded"
    assert zero_extras(llama31_8b(), 0, 8, N, 2, True, False, True).reduce_bucket == 0, "DDP"
    fsdp = estimate(bare_input(model=llama31_8b(), zero_stage="fsdp-full-shard", num_gpus=8))
    assert fsdp.overhead.deepspeed_buffers == 0, "FSDP has none of them"


def test_parameter_offload_leaves_the_working_set() -> None:
    """ZeRO-3 with offload_param and offload_optimizer: on the GPU only the gathered module (and
    the buffers); in CPU RAM 18 bytes per parameter per node: 16-bit weights 2, fp32 master 4,
    Adam 8, fp32 gradients 4 (DeepSpeed's estimator: 18 x 1.5 with its pinned buffers)."""
    result = estimate(bare_input(model=llama31_8b(), zero_stage=3, num_gpus=8, engine="deepspeed",
                                 offload_optimizer=True, offload_params=True))  # fmt: skip
    assert result.per_gpu.weights == 2 * LARGEST, "the gathered embedding only"
    assert result.host_ram.per_node(8) == 18 * N, "18 bytes per parameter per node"
    assert result.cpu_offload_bytes == 18 * N // 8, "per GPU process"
