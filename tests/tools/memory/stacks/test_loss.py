"""Bytes the cross-entropy keeps per logit, by implementation: exact values from each stack's
code, the estimator's use of them, and (slow) the implementations themselves measured op by op on
the CPU."""

from __future__ import annotations

import weakref
from typing import Any

import pytest

from tests.fakes.jobs import bare_input
from tests.tools.memory.test_estimator_models import llama31_8b
from tools.memory import estimate
from tools.memory.stacks.loss import LossBytes, loss_bytes, unsloth_chunks

N = 8000  # logits
# (loss, 16-bit logits, fp32 logits): forward, backward, lm_head backward, held, per the code
# paths in tools/memory/stacks/loss.py's docstring; 512 tokens per sequence (litgpt's 128-token
# chunks are a quarter), 1000 tokens x hidden for the fused-linear kernel's input gradient.
EXPECTED = [
    ("standard", LossBytes(10 * N, 12 * N, 2 * N, 0), LossBytes(8 * N, 12 * N, 4 * N, 0)),
    ("older-hf", LossBytes(12 * N, 12 * N, 2 * N, 0), LossBytes(12 * N, 12 * N, 4 * N, 0)),
    ("chunked", LossBytes(6 * N + 4 * N // 8, 4 * N + 10 * N // 8, 2 * N // 8, 0),
     LossBytes(8 * N, 4 * N + 8 * N // 8, 4 * N // 8, 0)),
    ("chunked-16bit", LossBytes(6 * N, 4 * N + 4 * N // 4, 2 * N + 2 * N // 4, 2 * N),
     LossBytes(12 * N, 8 * N + 8 * N // 4, 4 * N + 4 * N // 4, 4 * N)),
    ("fused", LossBytes(2 * N, 2 * N, 2 * N, 0), LossBytes(4 * N, 4 * N, 4 * N, 0)),
    ("fused-linear", LossBytes(2000, 2000, 2000, 0), LossBytes(2000, 2000, 2000, 0)),
    ("chunked-linear", LossBytes(4 * N + 6 * N // 8 + 2000, 4 * N + 10 * N // 8 + 2000,
                                 2 * N // 8, 0),
     LossBytes(4 * N + 8 * N // 8 + 2000, 4 * N + 12 * N // 8 + 2000, 4 * N // 8, 0)),
    ("forward-grad", LossBytes(4000 + 14 * N, 2000, 0, 0), LossBytes(8000 + 16 * N, 4000, 0, 0)),
    ("fp32-inplace", LossBytes(6 * N, 6 * N, 2 * N, 0), LossBytes(4 * N, 4 * N, 4 * N, 0)),
]  # fmt: skip


@pytest.mark.parametrize(("tokens", "chunks"), [(2048, 1), (4096, 4), (8192, 4), (16384, 12)])
def test_unsloth_chunks_follow_its_4_gib_target(tokens: int, chunks: int) -> None:
    """unsloth_zoo get_chunk_size: 16 bytes per logit against 4 GiB less the kept gradient
    (Llama 3.1 8B: vocabulary 128,256, hidden 4,096, 16-bit)."""
    logits, kept = tokens * 128256, 2 * tokens * 4096
    assert unsloth_chunks(logits, kept) == chunks


@pytest.mark.parametrize(("loss", "half", "full"), EXPECTED, ids=[e[0] for e in EXPECTED])
def test_bytes_per_logit(loss: str, half: LossBytes, full: LossBytes) -> None:
    assert loss_bytes(loss, N, 2, 512, 1000) == half, f"{loss}, 16-bit logits"
    assert loss_bytes(loss, N, 4, 512, 1000) == full, f"{loss}, fp32 logits"


@pytest.mark.parametrize("loss", ["standard", "older-hf", "chunked"])
def test_compiled_loss_keeps_the_16bit_logits(loss: str) -> None:
    """torch.compile's partitioner keeps the logits and recomputes the fp32 softmax."""
    grad = N // 8 if loss == "chunked" else N
    assert loss_bytes(loss, N, 2, 512, 1000, compiled=True) == LossBytes(
        2 * N, 2 * N + 2 * grad, 2 * grad, 0
    ), loss
    for kept_as_is in ("fused", "chunked-linear", "forward-grad"):
        assert loss_bytes(kept_as_is, N, 2, 512, 1000, compiled=True) == loss_bytes(
            kept_as_is, N, 2, 512, 1000
        ), f"compile leaves {kept_as_is} as it is"


def test_unknown_loss_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown loss implementation 'softmax'"):
        loss_bytes("softmax", N, 2, 512, 1000)


def test_estimator_takes_the_stack_loss() -> None:
    """Llama 3.1 8B, 2 x 4096 tokens: the loss buffers the estimate reports are stacks/loss.py's,
    and every implementation but the older one keeps less at its peak than the standard one."""
    logits = 2 * 4096 * 128256
    peaks = {}
    for loss in ("standard", "older-hf", "chunked", "chunked-16bit", "fused", "fp32-inplace"):
        result = estimate(bare_input(model=llama31_8b(), micro_batch_size=2, seq_len=4096,
                                     precision="bf16", loss=loss))  # fmt: skip
        expected = loss_bytes(loss, logits, 2, 4096, 2 * 4096 * 4096)
        assert result.activations.logits_peak == expected.backward, f"{loss}: backward"
        assert result.activations.logits_forward == expected.forward, f"{loss}: forward"
        assert result.activations.logits_held == expected.held, f"{loss}: held by the loop"
        peaks[loss] = result.activations.logits_peak
    assert peaks["older-hf"] == peaks["standard"] == 12 * logits, "12 bytes per logit"
    assert max(v for k, v in peaks.items() if k not in ("standard", "older-hf")) < peaks["standard"]


def test_torchtune_stack_defaults_to_its_current_loss_and_2024_to_the_older_one() -> None:
    """The current recipes' LinearCrossEntropyLoss; torchtune 2024's CEWithChunkedOutputLoss."""
    logits, hidden = 2048 * 128256, 2048 * 4096
    current = estimate(bare_input(model=llama31_8b(), precision="bf16", stack="torchtune"))
    assert current.activations.logits_peak == (
        loss_bytes("chunked-linear", logits, 2, 2048, hidden).backward
    )
    text = "\n".join(current.assumptions)
    assert "Mechanism loss = chunked-linear (torchtune: configs set loss: LinearCross" in text
    older = estimate(bare_input(model=llama31_8b(), precision="bf16", stack="torchtune",
                                stack_version="2024"))  # fmt: skip
    assert older.activations.logits_peak == loss_bytes("chunked", logits, 2, 2048, 0).backward
    text = "\n".join(older.assumptions)
    assert "Mechanism loss = chunked (torchtune: configs set loss: CEWithChunkedOutputLoss" in text
    assert "release 2024, torchtune's recipes with CEWithChunkedOutputLoss" in text


@pytest.mark.parametrize(("loss", "kept"), [("standard", 2), ("older-hf", 4), ("fused", 2)])
def test_a_loop_that_keeps_the_output_holds_its_logits_through_the_step(
    loss: str, kept: int
) -> None:
    """`loop_keeps_output`: the logits as the model returns them (16-bit; fp32 where the model
    upcasts them) stay alive through the loss backward, the lm_head backward and the optimizer
    step, not in this step's forward pass (they are its own logits there)."""
    logits = 2 * 4096 * 128256
    job = {"model": llama31_8b(), "micro_batch_size": 2, "seq_len": 4096, "precision": "bf16",
           "loss": loss}  # fmt: skip
    dropped, held = estimate(bare_input(**job)), estimate(bare_input(**job, loop_keeps_output=True))
    assert held.activations.logits_kept == kept * logits
    assert held.activations.logits_peak == dropped.activations.logits_peak + kept * logits
    assert held.activations.logits_forward == dropped.activations.logits_forward
    before = {m.name: m.activations for m in dropped.moments}
    after = {m.name: m.activations for m in held.moments}
    assert after["forward"] == before["forward"]
    for name in ("loss backward", "lm_head backward", "embedding backward", "optimizer step"):
        assert after[name] - before[name] == kept * logits, name
    assert "Mechanism loop keeps output = True (as given)." in held.assumptions


def test_a_loss_fused_with_the_lm_head_leaves_no_output_to_keep() -> None:
    for loss in ("fused-linear", "chunked-linear", "forward-grad", "chunked-16bit"):
        job = bare_input(model=llama31_8b(), precision="bf16", loss=loss, loop_keeps_output=True)
        assert estimate(job).activations.logits_kept == 0, loss


def test_the_stacks_drop_the_output_unless_told() -> None:
    for stack in ("hf", "litgpt", "torchtune", "torchtitan", "unsloth", "megatron"):
        result = estimate(bare_input(model=llama31_8b(), precision="bf16", stack=stack))
        assert result.activations.logits_kept == 0, stack


def test_an_older_transformers_model_feeds_a_patched_kernel_its_shifted_fp32_copy() -> None:
    """transformers < 4.46 with a fused cross-entropy patched in (fms-acceleration's fast_loss):
    the model's fp32 logits and the shifted copy the kernel works on (8 bytes per logit), and in
    the backward pass the copy's gradient beside the unshifted one slicing writes (8)."""
    logits = 2 * 4096 * 128256
    result = estimate(bare_input(model=llama31_8b(), micro_batch_size=2, seq_len=4096,
                                 precision="bf16", loss="fused", stack_version="4.45"))  # fmt: skip
    assert result.activations.logits_forward == 8 * logits
    assert result.activations.logits_peak == 8 * logits


# --- the implementations, measured -----------------------------------------------------------
def _peaks(run: Any, logits_shape: tuple[int, int]) -> tuple[float, float]:
    """Peak bytes per logit of tensors created inside `run`'s forward and backward (CPU)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class Live(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.live: dict[int, int] = {}
            self.cur = self.peak = 0

        def _free(self, key: int) -> None:
            self.cur -= self.live.pop(key, 0)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            out = func(*args, **(kwargs or {}))
            for t in tree_flatten(out)[0]:
                if isinstance(t, torch.Tensor):
                    storage = t.untyped_storage()
                    key = storage.data_ptr()
                    if key not in self.live and storage.nbytes():
                        self.live[key] = storage.nbytes()
                        self.cur += storage.nbytes()
                        self.peak = max(self.peak, self.cur)
                        weakref.finalize(storage, self._free, key)
            return out

    tokens, vocab = logits_shape
    torch.manual_seed(0)
    hidden = torch.randn(tokens, 64, dtype=torch.bfloat16, requires_grad=True)
    weight = torch.randn(vocab, 64, dtype=torch.bfloat16) * 0.02
    labels = torch.randint(0, vocab, (tokens,))
    live = Live()
    with live:
        loss, kept = run(hidden, weight, labels)
        forward, live.peak = live.peak, live.cur
        loss.backward()
    del kept
    n = tokens * vocab
    return forward / n, live.peak / n


@pytest.mark.slow
def test_measured_bytes_per_logit_match() -> None:
    """The standard (transformers >= 4.46), older transformers (model upcast + shifted copy),
    torchtune chunked and litgpt chunked losses, written as their code does, on 2 x 256 tokens
    of an 8192-token vocabulary: the measured peaks per logit are stacks/loss.py's to within
    0.3 byte (the lm_head's weight-sized backward buffer, 64 x 8192 x 2 B = 0.25 per logit)."""
    import torch
    import torch.nn.functional as F

    def standard(h: Any, w: Any, y: Any) -> tuple[Any, Any]:
        logits = F.linear(h, w)
        return F.cross_entropy(logits.float(), y), None

    def older(h: Any, w: Any, y: Any) -> tuple[Any, Any]:
        logits = F.linear(h.view(2, -1, 64), w).float()
        shifted = logits[..., :-1, :].contiguous()
        return F.cross_entropy(
            shifted.view(-1, shifted.size(-1)), y.view(2, -1)[:, 1:].reshape(-1)
        ), None

    def torchtune(h: Any, w: Any, y: Any) -> tuple[Any, Any]:
        chunks = [F.linear(c, w) for c in h.tensor_split(8, 0)]
        total = sum(F.cross_entropy(c.float(), t, reduction="sum")
                    for c, t in zip(chunks, y.tensor_split(8, 0), strict=True))  # fmt: skip
        return total / y.numel(), None

    def litgpt(h: Any, w: Any, y: Any) -> tuple[Any, Any]:
        chunks = [F.linear(c, w) for c in h.split(128, 0)]
        losses = [F.cross_entropy(c, t, reduction="none")
                  for c, t in zip(chunks, y.split(128, 0), strict=True)]  # fmt: skip
        return torch.cat(losses).sum() / y.numel(), chunks  # the loop keeps the chunks

    tokens, vocab = 512, 8192
    n = tokens * vocab
    for name, run, loss in (("standard", standard, "standard"), ("older", older, "older-hf"),
                            ("torchtune", torchtune, "chunked"),
                            ("litgpt", litgpt, "chunked-16bit")):  # fmt: skip
        forward, backward = _peaks(run, (tokens, vocab))
        expected = loss_bytes(loss, n, 2, tokens, 0)  # litgpt: 128 of 512 tokens per chunk
        held = expected.held / n  # the previous step's logits: not in this one-step measurement
        assert forward == pytest.approx(expected.forward / n - held, abs=0.3), f"{name}: forward"
        assert backward == pytest.approx(expected.backward / n, abs=0.3), f"{name}: backward"


@pytest.mark.slow
def test_measured_kept_output_and_patched_kernel_match() -> None:
    """Two chains written as their code does, measured like the losses above: the older
    transformers model whose loop keeps its output (fsdp_qlora train.py: the fp32 logits live
    until after the step: 12 + 4 bytes per logit in the backward pass), and the same model with
    an in-place fused cross-entropy patched in for CrossEntropyLoss (a kernel that keeps its
    input and writes the gradient into it, as unsloth's Fast_CrossEntropyLoss does)."""
    import torch
    import torch.nn.functional as F

    class InPlaceCrossEntropy(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, logits: Any, labels: Any) -> Any:  # type: ignore[override]
            lse = torch.logsumexp(logits, dim=-1)
            ctx.save_for_backward(logits, lse, labels)
            return (lse - logits.gather(1, labels[:, None])[:, 0]).mean()

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:  # type: ignore[override]
            logits, lse, labels = ctx.saved_tensors
            logits.sub_(lse[:, None]).exp_()  # the softmax, written over the saved input
            logits[torch.arange(len(labels)), labels] -= 1
            return logits.mul_(grad / len(labels)), None

    def upcast_and_shift(h: Any, w: Any) -> tuple[Any, Any]:
        logits = F.linear(h.view(2, -1, 64), w).float()
        return logits, logits[..., :-1, :].contiguous()

    def older_kept(h: Any, w: Any, y: Any) -> tuple[Any, Any]:
        logits, shifted = upcast_and_shift(h, w)
        labels = y.view(2, -1)[:, 1:].reshape(-1)
        return F.cross_entropy(shifted.view(-1, shifted.size(-1)), labels), logits

    def patched(h: Any, w: Any, y: Any) -> tuple[Any, Any]:
        _, shifted = upcast_and_shift(h, w)
        labels = y.view(2, -1)[:, 1:].reshape(-1)
        return InPlaceCrossEntropy.apply(shifted.view(-1, shifted.size(-1)), labels), None

    tokens, vocab = 512, 8192
    forward, backward = _peaks(older_kept, (tokens, vocab))
    assert forward == pytest.approx(12, abs=0.3)
    assert backward == pytest.approx(16, abs=0.3)
    forward, backward = _peaks(patched, (tokens, vocab))
    assert forward == pytest.approx(8, abs=0.3)
    assert backward == pytest.approx(8, abs=0.3)
