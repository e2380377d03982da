"""Allocated, reserved and device figures, and the allocator margin on the step's transients."""

from __future__ import annotations

from tests.fakes.jobs import bare_input
from tests.tools.memory.test_estimator_models import llama31_8b
from tools.memory import estimate


def test_figures_nest_like_the_measurements() -> None:
    """allocated <= reserved <= device; DDP's buckets are allocations; the context is device."""
    result = estimate(bare_input(model=llama31_8b(), num_gpus=8))
    f, o = result.figures, result.overhead
    peak = next(m.total for m in result.moments if m.name == result.peak_moment)
    assert f.allocated == peak + o.comm_buffers, "tensors in the allocator at the peak"
    assert f.reserved == f.allocated + o.fragmentation, "plus the cache's margin"
    assert f.device == f.reserved + o.cuda_context == result.per_gpu.total, "plus the context"
    assert f.required == f.device and f.evictable == 0, "nothing paged"


def test_fragmentation_covers_only_what_the_step_allocates_and_frees() -> None:
    """LoRA on a 16-bit base: the 16 GB of frozen weights rest; only activations and the loss
    buffers churn, and 10 % of those is the margin."""
    result = estimate(bare_input(model=llama31_8b(), method="lora", gradient_checkpointing="full"))
    o = result.overhead
    peak = next(m for m in result.moments if m.name == result.peak_moment)
    resting = result.model_states.unsharded_weights + result.model_states.unsharded_optimizer
    assert o.transient == peak.total - resting, "activations and adapter gradients"
    assert o.fragmentation == -(-o.transient // 10), "10 % of them, rounded up"
    assert o.fragmentation < peak.weights // 20, "far below 10 % of the weights"


def test_cpu_has_no_context_and_no_margin() -> None:
    result = estimate(bare_input(model=llama31_8b(), device="cpu"))
    assert result.figures.device == result.figures.allocated, "exact bytes on the CPU"
