"""The one table of defaults: what an open field of a job becomes, and why.

Every interface (CLI, Python API, MCP and HTTP API, web form, chat) resolves a job through these
values, and says which ones it used. A default is method-aware only where practice differs by
method. Each entry states its reason and source in the `reason` line that interfaces print.

Sources:
- TRL `SFTConfig` (huggingface/trl, trl/trainer/sft_config.py): `gradient_checkpointing` and
  `bf16` default to True for supervised fine-tuning, unlike transformers' `TrainingArguments`.
- The QLoRA reference script (artidoro/qlora, qlora.py): `gradient_checkpointing=True`,
  `per_device_train_batch_size=1`, LoRA on every linear layer (`find_all_linear_names`), double
  quantization; PEFT's `prepare_model_for_kbit_training(use_gradient_checkpointing=True)`.
- Dettmers et al. 2023 (arXiv:2305.14314), section 3: paged optimizers are part of QLoRA; the
  8-bit paged AdamW is what Hugging Face's 4-bit training examples use (`optim="paged_adamw_8bit"`).
- transformers picks `attn_implementation="sdpa"` by default since v4.36 (fused attention).
- Image models: the diffusers example scripts (huggingface/diffusers, examples/dreambooth and
  examples/text_to_image): `--train_text_encoder`, `--with_prior_preservation`, `--cache_latents`
  and `--use_ema` are off unless passed; the DreamBooth scripts encode a fixed instance prompt
  once and free the text encoders; their README examples run `--max_train_steps=500` at
  `--train_batch_size=1`. LLaVA's finetune scripts and LLaMA-Factory (`freeze_vision_tower:
  true`) keep the vision tower frozen.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

from tools.enums import Method
from tools.job.spec import MECHANISM_FIELDS

__all__ = ["DEFAULTS", "Default", "default_for"]


T = TypeVar("T")


@dataclass(frozen=True)
class Default(Generic[T]):
    """The value an open field takes, per method where practice differs, and why."""

    value: T
    reason: str
    by_method: Mapping[Method, T] = field(default_factory=dict)

    def for_method(self, method: str | None) -> T:
        """The value for a job of `method` (the default method when None)."""
        key = method or DEFAULT_METHOD
        return self.by_method.get(key, self.value)  # type: ignore[call-overload]


DEFAULT_METHOD: Final = "lora"
# A CUDA context plus PyTorch's kernels: a bare `torch.randn(1).cuda()` already shows 723 MiB in
# nvidia-smi (https://discuss.pytorch.org/t/what-is-the-reason-for-pytorchs-gpu-memory-floor/73021);
# gpu_poor assumes 650 MB; CUDA's lazy module loading (PyTorch's default since 1.13) loads fewer
# kernels up front. cuBLAS/cuDNN workspaces come from PyTorch's allocator and are counted as
# allocations, not here. 0.75 GiB covers the measured context; set it when yours is known (the
# Hugging Face docs measured 1,343 MiB on a V100 under CUDA 11 without lazy loading).
CUDA_CONTEXT_GIB: Final = 0.75
# PyTorch's caching allocator reserves more than it hands out: blocks freed within a step are
# cached and reused only where they fit (block splitting, 2 MiB / 20 MiB segments). Weights and
# optimizer state, allocated once, leave no holes; 10 % of the bytes each step allocates and
# frees (activations, gradients, gathered weights, temporaries) is the margin, overridable.
FRAGMENTATION: Final = 0.10
# The spare memory a plan keeps on each GPU beyond the estimate: need x (1 + margin) <= VRAM.
# About the estimates' spread: on the published runs the estimate falls below the measured peak
# by up to 12 % for four in five (benchmarks/published_runs, dev + tune, stated mechanisms). A
# plan whose need fits only without it is "tight" (ranked last, flagged; a fit check says so).
MEMORY_MARGIN: Final = 0.10
DEFAULT_TOKENS: Final = 100_000_000
_AS_THE_STACK_RUNS_IT: Final = (
    "as the job's stack runs it (its profile in tools/memory/stacks/profiles.py; the value used is"
    " stated in the estimate's assumptions)"
)

DEFAULTS: Final[dict[str, Default[Any]]] = {
    # -- the training job
    "method": Default(
        DEFAULT_METHOD,
        "LoRA: adapters over a frozen base, the usual way to fine-tune a pretrained model on"
        " rented GPUs; say full for every weight or pretrain for training from scratch",
    ),
    "precision": Default(
        "bf16-mixed",
        "bf16 mixed precision, TRL SFTConfig's default (bf16=True) on Ampere and newer",
    ),
    "optimizer": Default(
        "adamw",
        "AdamW (transformers' and TRL's default optimizer); paged 8-bit AdamW for QLoRA"
        " (QLoRA paper, section 3; Hugging Face's 4-bit training examples)",
        by_method={"qlora": "paged-adamw-8bit"},
    ),
    "lora_rank": Default(16, "LoRA rank 16, a common choice in PEFT and TRL examples"),
    "lora_alpha": Default(None, "LoRA alpha 2 x rank (it does not change memory)"),
    "lora_targets": Default(
        "all-linear", "LoRA on every linear layer of the blocks, as the QLoRA reference script"
    ),
    "lora_dropout": Default(0.0, "no LoRA dropout, PEFT LoraConfig's default"),
    "qlora_double_quant": Default(
        None,
        "the stack's choice: NF4 with double quantization under hf (the QLoRA paper's recipe,"
        " section 3), torchtune and unsloth; litgpt's bnb.nf4 without it",
    ),
    "micro_batch_size": Default(
        1,
        "1 sequence per GPU per step, as the QLoRA reference script: a larger effective batch"
        " comes from gradient accumulation, which does not raise the peak",
    ),
    "seq_len": Default(2048, "2,048 tokens per sequence"),
    "gradient_checkpointing": Default(
        "full",
        "full activation recomputation, on by default in TRL SFTConfig, the QLoRA reference"
        " script and PEFT's prepare_model_for_kbit_training: about a third more compute for a far"
        " smaller peak",
    ),
    "attention": Default(
        "sdpa", "fused attention (PyTorch SDPA), transformers' default since 4.36"
    ),
    "gradient_accumulation_steps": Default(1, "one micro-batch per optimizer step"),
    "engine": Default(
        "auto",
        "engine auto: DeepSpeed's accounting under ZeRO or offload, plain PyTorch autocast"
        " otherwise (the Hugging Face Trainer in each case)",
    ),
    "optimizer_impl": Default(
        "auto", "optimizer step auto: fused under DeepSpeed, PyTorch's foreach otherwise"
    ),
    "tensor_parallel": Default(1, "no tensor parallelism"),
    "sequence_parallel": Default(False, "no sequence parallelism"),
    "cuda_context_gib": Default(
        CUDA_CONTEXT_GIB, "0.75 GiB per GPU for the CUDA context and the framework's kernels"
    ),
    "fragmentation": Default(
        FRAGMENTATION,
        "10% of the bytes each step allocates and frees, for the allocator's rounding and caching",
    ),
    # -- the training stack; each mechanism left open takes the stack's profile value, stated
    # with its source in the estimate's assumptions (tools/memory/stacks/profiles.py)
    "stack": Default(
        "hf",
        "the Hugging Face stack (Trainer, TRL, PEFT, Accelerate, DeepSpeed), the usual way to"
        " fine-tune on rented GPUs; say litgpt, torchtune, torchtitan, unsloth or megatron",
    ),
    "stack_version": Default(
        "current",
        "the stack's current release (say an older one, e.g. litgpt 0.4 or torchtune 2024, where"
        " its mechanisms differ: tools/memory/stacks/profiles.py)",
    ),
    **{name: Default(None, _AS_THE_STACK_RUNS_IT) for name in MECHANISM_FIELDS},
    # -- image models (diffusion and vision-language models only)
    "resolution": Default(
        None,
        "the model's own resolution: 512 px for SD 1.5, 1024 px for SDXL, SD 3.5 and FLUX.1,"
        " 336 px for LLaVA 1.5 (its tower's), 448 px assumed for Qwen2-VL",
    ),
    "dreambooth": Default(False, "not DreamBooth: a captioned image set"),
    "prior_preservation": Default(
        False, "no class images (diffusers' DreamBooth scripts: --with_prior_preservation off)"
    ),
    "train_text_encoder": Default(
        False, "text encoders frozen (diffusers scripts: --train_text_encoder off)"
    ),
    "cache_latents": Default(
        False, "the VAE encodes each batch (diffusers scripts: --cache_latents off)"
    ),
    "cache_text_embeddings": Default(
        None,
        "prompt embeddings pre-computed for DreamBooth without text-encoder training (the"
        " diffusers DreamBooth scripts encode the fixed prompt once and free the encoders);"
        " encoders resident otherwise",
    ),
    "ema": Default(False, "no EMA copy (diffusers train_text_to_image.py: --use_ema off)"),
    "train_vision_tower": Default(
        False, "vision tower frozen (LLaVA's finetune scripts; LLaMA-Factory freeze_vision_tower)"
    ),
    "images_per_sample": Default(1, "one image per training sample"),
    # -- the parallel plan of one estimate (the ranking chooses its own per instance)
    "num_gpus": Default(1, "one GPU"),
    "zero_stage": Default(0, "no ZeRO sharding"),
    "sharding": Default("deepspeed", "DeepSpeed's ZeRO-3 gathering unit (one layer's weights)"),
    "offload_optimizer": Default(False, "optimizer state on the GPU"),
    "offload_params": Default(False, "weights on the GPU"),
    # -- the data
    "tokens": Default(DEFAULT_TOKENS, "100M training tokens (say how many, or how many samples)"),
    "epochs": Default(1.0, "one pass over the data"),
    "images": Default(None, "image models: steps x batch when no image count is given"),
    "steps": Default(
        500,
        "image models: 500 optimizer steps, as the diffusers DreamBooth README examples"
        " (--max_train_steps=500)",
    ),
    # -- limits and objective
    "spot": Default("never", "on-demand prices only (say spot is fine to compare spot prices)"),
    "max_nodes": Default(8, "clusters of at most 8 nodes"),
    "objective": Default("cost", "cheapest total cost"),
}


def default_for(name: str, method: str | None = None) -> Any:
    """The default of field `name` for a job of `method`."""
    return DEFAULTS[name].for_method(method)
