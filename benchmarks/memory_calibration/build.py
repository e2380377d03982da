"""Real, randomly initialised Hugging Face models for a `Case`; nothing is downloaded.

Every model starts from a built-in registry entry (tools/data/models.yaml), optionally scaled down,
and is turned into a transformers config by `tools.architectures.hf_config.to_hf_config`, so the
estimator and the measured model are built from the very same dimensions. Dropout probabilities stay
at the transformers defaults of each family (0.1 for GPT-2 and BERT, 0 for Llama, Qwen2 and
Mixtral).
"""

from __future__ import annotations

from typing import Any

from benchmarks.memory_calibration.cases import Case, ModelKey
from tools.architectures.architecture import ModelArch
from tools.architectures.hf_config import to_hf_config
from tools.architectures.registry import resolve_model

# key -> (registry name, dimension overrides)
MODELS: dict[ModelKey, tuple[str, dict[str, Any]]] = {
    "gpt2": ("gpt2", {}),
    "gpt2-2l": ("gpt2", {"num_layers": 2}),
    "bert": ("bert-base-uncased", {}),
    # Llama 2 layout (multi-head attention, untied 32k vocabulary) at 512 wide, 4 layers.
    "llama": (
        "Llama 2 7B",
        {
            "hidden_size": 512,
            "num_layers": 4,
            "num_heads": 8,
            "num_kv_heads": 8,
            "head_dim": 64,
            "intermediate_size": 1376,
        },
    ),
    # Qwen2.5-0.5B as published (GQA 14/2, q/k/v biases, tied 152k vocabulary), 2 of 24 layers.
    "qwen2": ("Qwen2.5 0.5B", {"num_layers": 2}),
    # Mixtral layout (8 experts, top-2, GQA 8/2) at 256 wide, 2 layers.
    "mixtral": (
        "Mixtral 8x7B",
        {
            "hidden_size": 256,
            "num_layers": 2,
            "num_heads": 8,
            "num_kv_heads": 2,
            "head_dim": 32,
            "intermediate_size": 512,
        },
    ),
    # Llama 3 layout (GQA 8/2) at 512 wide, 2 layers, with a 512-token vocabulary: long
    # micro-batches whose peak is a layer rebuilt in the backward pass, not the logits.
    "llama-v512": (
        "Llama 3.1 8B",
        {
            "hidden_size": 512,
            "num_layers": 2,
            "num_heads": 8,
            "num_kv_heads": 2,
            "head_dim": 64,
            "intermediate_size": 1792,
            "vocab_size": 512,
        },
    ),
    "llama-1b": ("Llama 3.2 1B", {}),
    "qwen2-0.5b": ("Qwen2.5 0.5B", {}),
}


def arch_for(key: ModelKey) -> ModelArch:
    """The registry architecture behind `key`, with its overrides applied (and validated)."""
    name, overrides = MODELS[key]
    base = resolve_model(name)
    if not overrides:
        return base
    fields = {**base.model_dump(), **overrides}
    fields["id"] = f"{base.id} (scaled: {', '.join(f'{k}={v}' for k, v in overrides.items())})"
    return ModelArch(**fields)


def build_model(case: Case, device: str = "cpu") -> Any:
    """The transformers model for `case` on `device`, in training mode.

    The weights are initialised directly on `device` (fast for billion-parameter models on CUDA).

    Causal language models for the decoders, a masked-LM head for BERT: both compute logits over
    the whole vocabulary at every position, the buffer the estimator models.
    """
    import torch
    import transformers

    arch = arch_for(case.model)
    raw = to_hf_config(arch)
    model_type = raw.pop("model_type")
    config = transformers.AutoConfig.for_model(model_type, **raw)
    config.use_cache = False
    torch.manual_seed(0)
    dtype = torch.bfloat16 if _bf16_weights(case) else torch.float32
    model: Any
    with torch.device(device):
        if model_type == "bert":
            model = transformers.BertForMaskedLM(config)  # type: ignore[arg-type]
            model.set_attn_implementation(case.attention)
        else:
            model = transformers.AutoModelForCausalLM.from_config(
                config, attn_implementation=case.attention
            )
    model.to(dtype=dtype)
    model.train()
    return model


def _bf16_weights(case: Case) -> bool:
    """Pure bf16 keeps bf16 weights; so does a LoRA/QLoRA base under bf16-mixed (loaded with
    `dtype=torch.bfloat16` as fine-tuning recipes do; PEFT keeps the adapters in fp32). Full
    fine-tuning under bf16-mixed keeps fp32 weights and computes under autocast."""
    return case.precision == "bf16" or (case.method != "full" and case.precision == "bf16-mixed")


def add_lora(model: Any, case: Case) -> Any:
    """Wrap `model` with PEFT LoRA adapters (alpha = 2 x rank, no LoRA dropout: PEFT's default).

    PEFT upcasts the adapters of a 16-bit model to fp32 (`autocast_adapter_dtype=True`), which
    is what bf16-mixed means here; pure bf16 keeps them in bf16, as the estimator defines it.
    """
    from peft import LoraConfig, get_peft_model

    targets: str | list[str]
    if case.lora_targets == "all-linear":
        targets = "all-linear"
    else:
        targets = _attention_module_names(case.model)
    config = LoraConfig(
        r=case.lora_rank, lora_alpha=2 * case.lora_rank, lora_dropout=0.0, target_modules=targets
    )
    return get_peft_model(model, config, autocast_adapter_dtype=case.precision != "bf16")


def _attention_module_names(key: ModelKey) -> list[str]:
    """The attention projections by their Hugging Face names."""
    family = arch_for(key).family
    if family == "gpt2":
        return ["c_attn", "attn.c_proj"]
    if family == "bert":
        return ["query", "key", "value", "attention.output.dense"]
    return ["q_proj", "k_proj", "v_proj", "o_proj"]


def make_batch(case: Case, vocab_size: int, device: str) -> dict[str, Any]:
    """Random token ids; the labels are the ids (the model shifts them for causal LMs)."""
    import torch

    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(0, vocab_size, (case.batch, case.seq_len), generator=generator)
    ids = ids.to(device)
    return {"input_ids": ids, "labels": ids.clone()}
