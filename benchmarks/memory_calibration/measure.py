"""Run real optimizer steps and measure peak memory, by category and by phase.

CPU: `torch.distributed._tools.mem_tracker.MemTracker` attributes every tensor storage to a
category (Parameter, Buffer, Gradient, Activation, Temp, Optstate) by when it was created: in the
forward pass (Activation), in the backward pass (Temp, then Gradient once autograd hands it to a
parameter), inside `optimizer.step()` (Optstate, including the step's own temporaries). It counts
exact storage bytes, with no allocator rounding or caching.

On CUDA the same loop runs and each phase's total is the allocator's
`max_memory_allocated`; the categories still come from the tracker.

One warm-up step runs first, outside the tracker, so optimizer state exists; the model and
optimizer are then registered with `track_external` and `STEPS` more steps are measured. Each
phase (forward with the loss, backward, optimizer step) gets its own peak snapshot: the tracker
keeps one running peak, which is cleared before each phase through its `_peak_mem` and
`_peak_mem_snap` attributes (private in torch 2.13; checked below so a change fails loudly).
The case's peak is the largest phase peak of the last step; the earlier step must agree, or the
step was not yet steady.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from pydantic import BaseModel, Field

from benchmarks.memory_calibration.build import add_lora, build_model, make_batch
from benchmarks.memory_calibration.cases import Case

STEPS = 2
PHASES = ("forward", "backward", "optimizer")
TRACKER_CATEGORIES = ("Parameter", "Buffer", "Gradient", "Activation", "Temp", "Optstate")


class PhasePeak(BaseModel):
    """The memory snapshot at the peak of one phase, bytes by tracker category."""

    total: int = Field(ge=0, description="bytes live at the phase's peak (CUDA: allocator peak)")
    tracked: int | None = Field(default=None, description="CUDA: the tracker's own total")
    categories: dict[str, int] = Field(description="tracker category -> bytes at that moment")


class Measurement(BaseModel):
    """What one case measured; `peak` is the highest phase peak of the last step."""

    device: str
    peak: PhasePeak
    peak_phase: str
    phases: dict[str, PhasePeak]
    step_totals: list[int] = Field(description="peak bytes of each measured step, in order")
    total_params: int
    trainable_params: int
    seconds: float = Field(description="wall time of the measured steps")
    cuda_reserved: int | None = Field(default=None, description="CUDA peak reserved bytes")
    cuda_outside_allocator: int | None = Field(
        default=None,
        description="bytes in use on the GPU beyond the caching allocator's "
        "reservation (CUDA context, kernels, library handles)",
    )


def make_optimizer(case: Case, params: list[Any]) -> Any:
    """The case's optimizer with library defaults (AdamW: torch's foreach implementation)."""
    import torch

    if case.optimizer == "adamw":
        return torch.optim.AdamW(params, lr=1e-4)
    if case.optimizer == "sgd":
        return torch.optim.SGD(params, lr=1e-3)
    from transformers.optimization import Adafactor

    return Adafactor(params, lr=None, relative_step=True, scale_parameter=True, warmup_init=False)


def prepare(case: Case, device: str) -> tuple[Any, Any, dict[str, Any]]:
    """Model (with LoRA / checkpointing as asked), optimizer and one batch on `device`."""
    model = build_model(case, device)
    if case.method == "qlora":
        from benchmarks.memory_calibration.qlora import quantize_linears_nf4

        quantize_linears_nf4(model)
    if case.checkpointing == "full":
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if case.method in ("lora", "qlora"):
        model = add_lora(model, case)
    model.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = make_optimizer(case, params)
    batch = make_batch(case, model.config.vocab_size, device)
    return model, optimizer, batch


def autocast_for(case: Case, device: str) -> Callable[[], AbstractContextManager[Any]]:
    """bf16 autocast around the forward (and the loss inside it) for bf16-mixed; else nothing."""
    import torch

    if case.precision == "bf16-mixed":
        return lambda: torch.autocast(device_type=device, dtype=torch.bfloat16)
    return nullcontext


def train_step(
    model: Any,
    optimizer: Any,
    batch: dict[str, Any],
    autocast: Any,
    phase: Callable[[str], AbstractContextManager[Any]],
) -> None:
    """One step as a training loop runs it: only the loss outlives the forward call."""
    with phase("forward"), autocast():
        loss = model(**batch).loss
    with phase("backward"):
        loss.backward()
    del loss
    with phase("optimizer"):
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def _counts(model: Any) -> tuple[int, int]:
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return total, trainable


def _tracker_class() -> Any:
    """MemTracker that hooks only trainable parameters.

    torch 2.13's MemTracker registers a gradient hook on every parameter it meets, which raises
    for frozen ones (LoRA's base weights); frozen parameters never get a gradient to track.
    """
    from torch.distributed._tools.mem_tracker import MemTracker, _MemRefType

    class TrainableHookTracker(MemTracker):
        def _track_module_params_and_buffers(
            self, module: Any, install_grad_hooks: bool = True
        ) -> tuple[int, int]:
            sizes = super()._track_module_params_and_buffers(module, install_grad_hooks=False)
            if install_grad_hooks:
                for param in module.parameters():
                    if param.requires_grad and param not in self._param_to_grad_hook_handles:
                        self._param_to_grad_hook_handles[param] = self._hooks_for(param)
            return sizes

        def _hooks_for(self, param: Any) -> tuple[Any, Any]:
            def on_grad(grad: Any) -> None:
                self._update_and_maybe_create_winfos(grad, _MemRefType.GRAD)

            return (
                param.register_hook(on_grad),
                param.register_post_accumulate_grad_hook(lambda p: on_grad(p.grad)),
            )

    return TrainableHookTracker


def measure_case(case: Case) -> Measurement:
    """Peak memory of `case` on its device, by MemTracker category and phase.

    On CUDA the phase totals are `torch.cuda.max_memory_allocated` (the categories still come
    from the tracker) and the result also records the reserved bytes and the driver-level use.
    """
    import torch

    threads = torch.get_num_threads()
    try:
        if case.device == "cpu":
            torch.set_num_threads(max(1, min(2, threads)))
        return _measure(case)
    finally:
        torch.set_num_threads(threads)


def _measure(case: Case) -> Measurement:
    import torch

    model, optimizer, batch = prepare(case, case.device)
    autocast = autocast_for(case, case.device)
    train_step(model, optimizer, batch, autocast, lambda name: nullcontext())  # warm-up
    tracker = _tracker_class()()
    if not hasattr(tracker, "_peak_mem") or not hasattr(tracker, "_peak_mem_snap"):
        raise RuntimeError("this torch's MemTracker has no _peak_mem; update measure.py")
    tracker.track_external(model, optimizer)
    cuda = case.device == "cuda"
    device = torch.device("cuda", torch.cuda.current_device()) if cuda else torch.device("cpu")
    steps: list[dict[str, PhasePeak]] = []

    @contextmanager
    def phase(name: str) -> Iterator[None]:
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        tracker._peak_mem = {}
        tracker._peak_mem_snap = tracker.get_tracker_snapshot()
        yield
        peak = _peak_from_snapshot(tracker.get_tracker_snapshot("peak").get(device, {}))
        if cuda:
            torch.cuda.synchronize()
            allocated = torch.cuda.max_memory_allocated()
            peak = peak.model_copy(update={"tracked": peak.total, "total": allocated})
        steps[-1][name] = peak

    start = time.perf_counter()
    with tracker:
        for _ in range(STEPS):
            tracker.reset_mod_stats()
            steps.append({})
            train_step(model, optimizer, batch, autocast, phase)
    seconds = time.perf_counter() - start
    extra = _cuda_usage() if cuda else {}
    return _summarise(steps, case.device, _counts(model), seconds, extra)


def _cuda_usage() -> dict[str, int]:
    """Reserved bytes (peak) and what the driver reports in use beyond them (context etc.)."""
    import torch

    free, total = torch.cuda.mem_get_info()
    reserved = torch.cuda.max_memory_reserved()
    return {
        "cuda_reserved": reserved,
        "cuda_outside_allocator": total - free - torch.cuda.memory_reserved(),
    }


def _peak_from_snapshot(snap: dict[str, int]) -> PhasePeak:
    categories = {k: int(snap.get(k, 0)) for k in TRACKER_CATEGORIES}
    return PhasePeak(total=int(snap.get("Total", sum(categories.values()))), categories=categories)


def _summarise(
    steps: list[dict[str, PhasePeak]],
    device: str,
    counts: tuple[int, int],
    seconds: float,
    extra: dict[str, int],
) -> Measurement:
    last = steps[-1]
    peak_phase = max(PHASES, key=lambda name: last[name].total)
    return Measurement(
        device=device,
        peak=last[peak_phase],
        peak_phase=peak_phase,
        phases=last,
        step_totals=[max(s[name].total for name in PHASES) for s in steps],
        total_params=counts[0],
        trainable_params=counts[1],
        seconds=round(seconds, 2),
        **extra,
    )
