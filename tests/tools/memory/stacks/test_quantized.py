"""QLoRA's 4-bit layers as old bitsandbytes and litgpt run them, against hand counts: inputs kept
on the autograd graph until it is freed (and, with the loop holding the logits, into the next
forward), and a 4-bit lm_head with its dequantized copies (tools/memory/stacks/quantized.py,
activations.py, peak.py, model_states.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.jobs import bare_input
from tests.tools.memory.test_estimator_models import llama31_8b
from tools.errors import InvalidInputError
from tools.memory import MemoryEstimate, estimate

TOKENS = 2 * 512  # micro-batch 2 x 512 tokens, as litgpt's QLoRA configs
H, FFN, LAYERS, VOCAB = 4096, 14336, 32, 128_256
LOGITS = TOKENS * VOCAB
# Per layer, 2 B per element: the attention input (shared by the q/v adapters and the 4-bit
# qkv), SDPA's output (o_proj's input), the MLP input and the MLP product (down_proj's input).
HELD_PER_LAYER = 2 * TOKENS * (3 * H + FFN)
BASE: dict[str, Any] = dict(
    model=llama31_8b(), method="qlora", precision="bf16", lora_targets="q_proj,v_proj",
    micro_batch_size=2, seq_len=512, qlora_keeps_input=True, qlora_double_quant=False,
    loss="chunked-16bit",
)  # fmt: skip


def run(**settings: Any) -> MemoryEstimate:
    return estimate(bare_input(**{**BASE, **settings}))


def moments(result: MemoryEstimate) -> dict[str, int]:
    return {m.name: m.activations for m in result.moments}


def test_4bit_inputs_live_as_long_as_the_graph() -> None:
    """The graph (and the inputs on it) lives to the end of the backward pass; litgpt's loop
    holds this step's logits, and so the graph, through the optimizer step and the next
    forward."""
    result = run()
    held = result.activations.graph_held
    assert held == LAYERS * HELD_PER_LAYER == 1_744_830_464
    logits = 2 * LOGITS  # the 16-bit logits the loop holds
    at = moments(result)
    assert at["optimizer step"] == at["embedding backward"] == logits + held == 2_007_498_752
    released = run(loss="standard")  # the Hugging Face Trainer drops everything after backward
    assert moments(released)["embedding backward"] == held, "still alive inside backward"
    assert moments(released)["optimizer step"] == 0, "freed with the graph"
    forward_gap = at["forward"] - moments(run(qlora_keeps_input=False))["forward"]
    new_inputs = LAYERS * 2 * TOKENS * (H + FFN)  # the MLP's: the adapters keep the attention's
    assert forward_gap == new_inputs + held, "this step's new inputs and the previous graph"


def test_no_retention_without_the_old_matmul_or_with_full_recompute() -> None:
    assert run(qlora_keeps_input=False).activations.graph_held == 0
    assert run(gradient_checkpointing="full").activations.graph_held == 0
    lora = run(method="lora", qlora_keeps_input=None, qlora_double_quant=None)
    assert lora.activations.graph_held == 0


def test_4bit_lm_head_is_stored_nf4_and_dequantized_via_fp16() -> None:
    """Lightning quantizes every nn.Linear, lm_head included, from fp16: 0.5625 B per weight
    stored, and for each matmul an fp16 dequantized copy plus its bf16 cast (2 x 2 B)."""
    plain, head = run(), run(qlora_lm_head=True)
    weights = VOCAB * H
    nf4 = weights // 2 + 4 * weights // 64
    saved = plain.model_states.unsharded_weights - head.model_states.unsharded_weights
    assert saved == 2 * weights - nf4 == 755_171_328
    assert head.model_states.qlora_lm_head_dequant == 2 * 2 * weights == 2_101_346_304
    assert head.activations.head["lm_head_input.4bit_input"] == 2 * TOKENS * H
    assert head.activations.graph_held == plain.activations.graph_held + 2 * TOKENS * H
    fp16 = run(qlora_lm_head=True, precision="fp16-mixed")
    assert fp16.model_states.qlora_lm_head_dequant == 2 * weights, "no cast under fp16"


def test_4bit_lm_head_moments() -> None:
    """Writing the last logits: the held and new logits (2 x 2 B per logit) with the
    dequantized weight, instead of the loss's 3 x 2 B; its backward dequantizes again."""
    plain, head = moments(run()), moments(run(qlora_lm_head=True))
    dequant, head_input = 2_101_346_304, 2 * TOKENS * H
    assert head["forward"] - plain["forward"] == (
        2 * head_input + dequant + 2 * 2 * LOGITS - 3 * 2 * LOGITS
    ), "its input on the graph twice (this step's and the held one), the dequantized weight"
    assert "lm_head backward" in head and "lm_head backward" not in plain
    backward = head["lm_head backward"] - head["loss backward"]
    assert backward > 0 and head["forward"] == max(head.values()), "forward stays the peak"


def test_lm_head_quantization_is_qlora_only() -> None:
    with pytest.raises(InvalidInputError, match=r"qlora_lm_head.*only with method qlora"):
        run(method="lora", qlora_keeps_input=None, qlora_double_quant=None, qlora_lm_head=True)
    assert (
        run(
            qlora_lm_head=True, model=llama31_8b().model_copy(update={"tied_embeddings": True})
        ).model_states.qlora_lm_head_dequant
        == 0
    ), "tied: none"


def test_sentences_say_how_long_the_inputs_live() -> None:
    text = " ".join(run(qlora_lm_head=True).assumptions)
    assert "1.63 GiB" in text and "until the next step's forward has returned" in text
    assert "embeddings and norms stay 16-bit" in text and "and the lm_head are stored" in text
    assert "1.96 GiB" in text, "the lm_head's dequantized copies"
    released = " ".join(run(loss="standard").assumptions)
    assert "freed with the graph once the backward pass returns" in released
