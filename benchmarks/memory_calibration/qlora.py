"""QLoRA's frozen base: every nn.Linear of the transformer blocks as a bitsandbytes NF4 layer.

Needs CUDA and `bitsandbytes` (not a GPU Advisor dependency; installed only where the GPU part
runs). The layers are swapped in place, as transformers' `BitsAndBytesConfig(load_in_4bit=True,
bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=bfloat16)`
would load them; the embeddings and lm_head stay in bf16, as there. PEFT's
`prepare_model_for_kbit_training` (which upcasts the remaining weights to fp32) is not applied.
"""

from __future__ import annotations

from typing import Any


def quantize_linears_nf4(model: Any) -> None:
    """Replace the block linears of `model` (on CUDA) by NF4 `bnb.nn.Linear4bit` layers."""
    import bitsandbytes as bnb
    import torch

    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if not isinstance(child, torch.nn.Linear) or name == "lm_head":
                continue
            layer = bnb.nn.Linear4bit(
                child.in_features,
                child.out_features,
                bias=child.bias is not None,
                compute_dtype=torch.bfloat16,
                compress_statistics=True,
                quant_type="nf4",
                device="meta",
            )
            weight = child.weight.data.to(torch.bfloat16)
            packed: Any = bnb.nn.Params4bit(
                weight, requires_grad=False, compress_statistics=True, quant_type="nf4"
            )
            layer.weight = packed.to(weight.device)  # quantizes on the way
            if child.bias is not None:
                layer.bias = torch.nn.Parameter(
                    child.bias.data.to(torch.bfloat16), requires_grad=False
                )
            setattr(parent, name, layer)
    torch.cuda.empty_cache()
