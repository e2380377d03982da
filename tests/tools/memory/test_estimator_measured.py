"""The activation model against what PyTorch really saves for backward in Hugging Face models.

Tiny models are built on the CPU (no weights are downloaded), run forward once under
`torch.autograd.graph.saved_tensors_hooks`, and every distinct storage kept for the backward pass
that is not a parameter is summed. One layer's share is the difference between a 2-layer and a
1-layer model, which the estimator must match to the byte.

Two CPU kernels store differently from CUDA, which the estimator models: CPU dropout keeps its
noise in the activation dtype (CUDA keeps a 1-byte bool mask), and CPU LayerNorm keeps mean and
rstd in the activation dtype (CUDA keeps fp32). The GPT-2 case corrects for exactly these.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from tests.fakes.jobs import bare_input
from tools.architectures.architecture import ModelArch
from tools.memory import estimate

pytestmark = pytest.mark.slow

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")

SEQ, BATCH, HIDDEN, HEADS, VOCAB = 64, 2, 128, 4, 1000


def saved_bytes(model: Any, autocast: bool = False) -> int:
    """Bytes of the distinct non-parameter storages autograd saves in one training forward."""
    torch.manual_seed(0)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict[int, int] = {}

    def pack(t: Any) -> Any:
        storage = t.untyped_storage()
        if storage.data_ptr() not in params:
            seen[storage.data_ptr()] = storage.nbytes()
        return t

    ctx = torch.autocast("cpu", dtype=torch.bfloat16) if autocast else contextlib.nullcontext()
    with ctx, torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(input_ids=ids, labels=ids)
    return sum(seen.values())


def measured_layer(build: Any, autocast: bool = False) -> int:
    """One layer's saved bytes: a 2-layer model minus a 1-layer model."""
    return saved_bytes(build(2), autocast) - saved_bytes(build(1), autocast)


def llama_arch(kv_heads: int, inter: int = 344, **extra: Any) -> ModelArch:
    fields: dict[str, Any] = dict(
        id="tiny-llama",
        name="tiny llama",
        family="llama",
        arch="decoder",
        hidden_size=HIDDEN,
        num_layers=2,
        num_heads=HEADS,
        num_kv_heads=kv_heads,
        head_dim=HIDDEN // HEADS,
        intermediate_size=inter,
        vocab_size=VOCAB,
        max_position_embeddings=256,
        tied_embeddings=False,
        gated_mlp=True,
        norm="rmsnorm",
        source="test",
    )
    return ModelArch(**(fields | extra))


def llama_builder(kv_heads: int, attention: str, dtype: Any, lora: dict | None = None) -> Any:
    def build(layers: int) -> Any:
        config = transformers.LlamaConfig(
            hidden_size=HIDDEN,
            num_hidden_layers=layers,
            num_attention_heads=HEADS,
            num_key_value_heads=kv_heads,
            intermediate_size=344,
            vocab_size=VOCAB,
            attn_implementation=attention,
        )
        model = transformers.LlamaForCausalLM(config).to(dtype)
        if lora is not None:
            settings = dict(lora)
            upcast = settings.pop("autocast_adapter_dtype", True)
            model = peft.get_peft_model(
                model, peft.LoraConfig(**settings), autocast_adapter_dtype=upcast
            )
        return model.train()

    return build


def estimated_layer(arch: ModelArch, **settings: Any) -> int:
    inp = bare_input(model=arch, micro_batch_size=BATCH, seq_len=SEQ, **settings)
    return estimate(inp).activations.layers[0].per_layer_total


FULL_CASES = [
    ("GQA, SDPA, bf16", 2, "sdpa", "bf16", "bf16"),
    ("GQA, eager (fp32 softmax, repeat_kv), bf16", 2, "eager", "bf16", "bf16"),
    ("MHA, eager, fp32", HEADS, "eager", "fp32", "fp32"),
    # DeepSpeed-style mixed precision computes on a 16-bit model.
    ("MHA, SDPA, bf16-mixed, 16-bit model", HEADS, "sdpa", "bf16", "bf16-mixed"),
]


@pytest.mark.parametrize(("label", "kv", "attention", "dtype", "precision"), FULL_CASES)
def test_full_finetune_layer_matches_pytorch(
    label: str, kv: int, attention: str, dtype: str, precision: str
) -> None:
    torch_dtype = getattr(torch, "bfloat16" if dtype == "bf16" else "float32")
    measured = measured_layer(llama_builder(kv, attention, torch_dtype))
    estimated = estimated_layer(
        llama_arch(kv), attention=attention, precision=precision, engine="deepspeed"
    )
    assert estimated == measured, f"{label}: estimated {estimated} B, PyTorch saved {measured} B"


@pytest.mark.parametrize(("kv", "attention"), [(HEADS, "sdpa"), (2, "sdpa"), (2, "eager")])
def test_autocast_over_fp32_weights_layer_matches_pytorch(kv: int, attention: str) -> None:
    """Plain PyTorch mixed precision: an fp32 model under torch.autocast. The residual stream and
    RMSNorm stay fp32, q, k, v (and gate, up) each keep their own bf16 cast of the fp32 input,
    and autocast keeps a bf16 copy of every weight for the backward pass."""
    measured = measured_layer(llama_builder(kv, attention, torch.float32), autocast=True)
    arch = llama_arch(kv)
    inp = bare_input(
        model=arch, micro_batch_size=BATCH, seq_len=SEQ, attention=attention,
        precision="bf16-mixed", engine="pytorch",
    )  # fmt: skip
    result = estimate(inp)
    per_layer = result.activations.layers[0].per_layer_total
    copies = 2 * sum(m.d_in * m.d_out for m in arch.linear_modules())  # one layer's weights
    head_copy = result.activations.autocast_weight_copies - copies * arch.num_layers
    assert head_copy == 2 * VOCAB * HIDDEN, "the lm_head's bf16 copy"
    assert per_layer + copies == measured, f"autocast layer: {per_layer} + {copies} B"


LORA_CASES = [
    ("all-linear, fp32 adapters under autocast", "all-linear", True, "bf16-mixed"),
    ("q,v only, fp32 adapters under autocast", "q_proj,v_proj", True, "bf16-mixed"),
    ("all-linear, bf16 adapters, pure bf16", "all-linear", False, "bf16"),
    ("q,v only, bf16 adapters, pure bf16", "q_proj,v_proj", False, "bf16"),
]


@pytest.mark.parametrize(("label", "targets", "fp32_adapters", "precision"), LORA_CASES)
def test_lora_layer_matches_peft(
    label: str, targets: str, fp32_adapters: bool, precision: str
) -> None:
    modules = (
        ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
        if targets == "all-linear"
        else targets.split(",")
    )
    lora = {
        "r": 8,
        "target_modules": modules,
        "lora_dropout": 0.0,
        "autocast_adapter_dtype": fp32_adapters,
    }
    build = llama_builder(2, "sdpa", torch.bfloat16, lora)
    measured = measured_layer(build, autocast=precision == "bf16-mixed")
    estimated = estimated_layer(
        llama_arch(2), method="lora", lora_rank=8, lora_targets=targets, precision=precision
    )
    assert estimated == measured, f"LoRA {label}: estimated {estimated} B, saved {measured} B"


def test_moe_layer_matches_mixtral() -> None:
    def build(layers: int) -> Any:
        config = transformers.MixtralConfig(
            hidden_size=HIDDEN,
            num_hidden_layers=layers,
            num_attention_heads=HEADS,
            num_key_value_heads=2,
            intermediate_size=96,
            vocab_size=VOCAB,
            num_local_experts=4,
            num_experts_per_tok=2,
            attn_implementation="sdpa",
        )
        return transformers.MixtralForCausalLM(config).to(torch.bfloat16).train()

    arch = llama_arch(2, inter=96, family="mixtral", num_experts=4, experts_per_token=2)
    measured = measured_layer(build)
    estimated = estimated_layer(arch, precision="bf16")
    assert estimated == measured, f"Mixtral layer: estimated {estimated} B, saved {measured} B"


def test_gpt2_layer_is_korthikanti_on_cuda_terms() -> None:
    """GPT-2 (LayerNorm, MHA, 4h GELU, dropout 0.1, eager 16-bit softmax): 34sbh + 5as²b plus
    LayerNorm statistics, once the two documented CPU storage differences are applied."""

    def build(layers: int) -> Any:
        config = transformers.GPT2Config(
            n_embd=HIDDEN,
            n_layer=layers,
            n_head=HEADS,
            vocab_size=VOCAB,
            n_positions=256,
            attn_implementation="eager",
        )
        return transformers.GPT2LMHeadModel(config).to(torch.bfloat16).train()

    arch = ModelArch(
        id="tiny-gpt2",
        name="tiny gpt2",
        family="gpt2",
        arch="decoder",
        hidden_size=HIDDEN,
        num_layers=2,
        num_heads=HEADS,
        num_kv_heads=HEADS,
        head_dim=HIDDEN // HEADS,
        intermediate_size=4 * HIDDEN,
        vocab_size=VOCAB,
        max_position_embeddings=256,
        tied_embeddings=True,
        gated_mlp=False,
        norm="layernorm",
        learned_positions=True,
        qkv_bias=True,
        o_bias=True,
        mlp_bias=True,
        source="test",
    )
    common = dict(
        model=arch, micro_batch_size=BATCH, seq_len=SEQ, attention="eager", precision="bf16"
    )
    cuda = estimate(bare_input(**common)).activations.layers[0].per_layer
    cpu = estimate(bare_input(**common, device="cpu")).activations.layers[0].per_layer
    masks = sum(v for k, v in cuda.items() if "mask" in k)
    stats = sum(v for k, v in cuda.items() if "norm_stats" in k)
    assert sum(cpu.values()) == sum(cuda.values()) + masks - stats // 2, "bf16 noise, bf16 stats"
    measured = measured_layer(build)
    assert sum(cpu.values()) == measured, f"GPT-2 layer on CPU: {sum(cpu.values())} B predicted"


def test_head_and_loss_saved_tensors_match() -> None:
    """Outside the layers: rotary tables, final norm, lm_head input and the fp32 log-softmax
    output (4 of the 12 bytes per logit counted at the loss peak), plus token ids and labels."""
    build = llama_builder(2, "sdpa", torch.bfloat16)
    one_layer = saved_bytes(build(1))
    outside = one_layer - measured_layer(build)
    result = estimate(
        bare_input(model=llama_arch(2), micro_batch_size=BATCH, seq_len=SEQ, precision="bf16")
    )
    log_softmax = 4 * BATCH * SEQ * VOCAB
    ids_and_labels = 8 * BATCH * SEQ * 2 + 4  # int64 ids and labels, fp32 loss scalar
    expected = sum(result.activations.head.values()) + log_softmax + ids_and_labels
    assert expected == outside, f"outside the layers: expected {expected} B, saved {outside} B"
