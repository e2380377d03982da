"""What each kind of measurement would report for an estimate: allocated, reserved, device.

- allocated (torch.cuda.max_memory_allocated, torchtune's peak active): the tensors in
  PyTorch's caching allocator at the peak moment, DDP's gradient buckets included, the paged
  optimizer state excluded (bitsandbytes allocates it in CUDA unified memory, outside the
  allocator: functional.py get_paged).
- reserved (torch.cuda.max_memory_reserved, torchtitan's max_reserved): allocated plus the
  blocks the caching allocator holds but cannot hand out at that moment. Those come from the
  memory that is allocated and freed within each step (activations, gradients, gathered ZeRO-3
  units, loss buffers, the optimizer step's temporaries): freed blocks of one size are cached
  and reused for later requests only where they fit (CUDACachingAllocator block splitting and
  its 2 MiB / 20 MiB segment rounding). Weights and optimizer state, allocated once and never
  freed, leave no such holes. The margin is `fragmentation` x those step-transient bytes.
- device (nvidia-smi): reserved plus the CUDA context with the framework's kernels and
  workspaces, plus the paged optimizer state while it is resident on the GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from tools.memory.inputs import EstimateInput
from tools.memory.peak import Moment
from tools.memory.results import OverheadDetail, ReportedFigures
from tools.memory.states.model_states import ModelStates

__all__ = ["Overhead", "overhead"]


@dataclass(frozen=True, slots=True)
class Overhead:
    """Bytes on one GPU beyond the peak moment's tensors, and the figures they make."""

    detail: OverheadDetail
    figures: ReportedFigures
    transient: int  # bytes allocated and freed within the step, at the peak

    @property
    def total(self) -> int:
        return self.detail.cuda_context + self.detail.comm_buffers + self.detail.fragmentation


def overhead(inp: EstimateInput, states: ModelStates, peak: Moment) -> Overhead:
    """The CUDA context, DDP's buckets and the allocator's margin on top of the peak moment."""
    paged = states.paged_optimizer
    in_allocator = peak.total - paged + states.comm_buffers
    resting_weights = states.weights - states.gathered_weights - states.dequant_buffer
    resting_state = states.optimizer - paged
    # DDP's buckets and DeepSpeed's buffers are allocated once, like the weights
    transient = max(in_allocator - states.comm_buffers - resting_weights - resting_state, 0)
    fragmentation = ceil(inp.effective_fragmentation * transient)
    context = inp.effective_context_bytes
    device = in_allocator + fragmentation + context + paged
    detail = OverheadDetail(
        cuda_context=context,
        comm_buffers=states.comm_buffers,
        deepspeed_buffers=states.deepspeed_buffers,
        fragmentation=fragmentation,
        transient=transient,
    )
    figures = ReportedFigures(
        allocated=in_allocator,
        reserved=in_allocator + fragmentation,
        device=device,
        evictable=paged,
        required=device - paged,
    )
    return Overhead(detail, figures, transient)
