"""The training job a user describes: one definition of every field, its unit and what is valid.

`JobSpec` is the job as given: every field is optional, and an open field (None) takes the
stated default of `tools.job.defaults` when the job is resolved (`tools.advice.resolve_job`),
which lists each default it used. Every interface derives from this class: the command-line
flags of `estimate` and `rank`, the LangChain tool schemas, the MCP and HTTP API endpoints, the
web form and the conversation's state (amended turn by turn: `tools.job.update`).

Units: memory in GiB (2^30 bytes), time in hours, money as `Money` (amount and currency; catalog
prices are USD), data in tokens or samples. The fields fall in five groups (`FIELD_GROUPS`):
the model, how it trains, the parallel plan of one estimate (the ranking chooses its own per
instance), the data, and the limits and objective of a ranking. How it trains includes the
training `stack` and its memory mechanisms (`MECHANISM_FIELDS`): each one left open takes the
stack's profile value (tools/memory/stacks/profiles.py).
"""

from __future__ import annotations

from typing import Any, Final, Self, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from tools.architectures.architecture import ModelArch
from tools.enums import (
    Attention,
    BaseDtype,
    Checkpointing,
    Engine,
    ImageStack,
    Interconnect,
    Loss,
    Method,
    Objective,
    Optimizer,
    OptimizerImpl,
    Precision,
    SelectiveCheckpointing,
    Sharding,
    SpotPolicy,
    Stack,
)
from tools.errors import invalid_input
from tools.job.fields import FIELD_GROUPS, IMAGE_FIELDS, MECHANISM_FIELDS, FieldGroup, FieldName
from tools.job.limits import (
    MAX_BATCH,
    MAX_CONTEXT_GIB,
    MAX_GPUS,
    MAX_HOURS,
    MAX_IMAGES,
    MAX_NODES,
    MAX_RESOLUTION,
    MAX_SEQ_LEN,
    MAX_TOKENS,
    MIN_RESOLUTION,
    VALID,
    attention_alias,
    zero_alias,
)
from tools.job.money import Money

__all__ = [
    "FIELD_GROUPS",
    "IMAGE_FIELDS",
    "JOB_FIELDS",
    "MECHANISM_FIELDS",
    "FieldGroup",
    "FieldName",
    "JobSpec",
]


class JobSpec(BaseModel):
    """One training or fine-tuning job as described; None = open (a stated default is used)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # -- the model
    model: str | ModelArch | None = Field(
        None,
        description="the model: a registry name or Hugging Face id such as 'llama 3.1 8b' or"
        " 'meta-llama/Llama-3.1-8B', a parameter count such as '70B' or '7e9', or an"
        " architecture read from a config.json",
    )
    # -- how it trains
    method: Method | None = Field(
        None,
        description="pretrain or full: every weight trains; lora: adapters over a frozen 16-bit"
        " base; qlora: adapters over a frozen 4-bit NF4 base",
    )
    precision: Precision | None = Field(
        None,
        description="bf16-mixed or fp16-mixed (16-bit compute, fp32 master weights), bf16 (pure"
        " 16-bit), fp32, or fp8 (bf16-mixed with FP8 matmuls in the linear layers, on GPUs with"
        " FP8 tensor cores)",
    )
    optimizer: Optimizer | None = Field(None, description="optimizer; its state bytes differ")
    lora_rank: int | None = Field(
        None, gt=0, le=MAX_BATCH, description="LoRA rank r, dimensions (lora, qlora)"
    )
    lora_alpha: float | None = Field(
        None,
        gt=0,
        description="LoRA alpha, a scaling factor (lora, qlora; it does not change memory)",
    )
    lora_targets: str | None = Field(
        None,
        min_length=1,
        max_length=500,
        description="layers with adapters: all-linear, attention, mlp or module names a,b,c",
    )
    lora_dropout: float | None = Field(
        None, ge=0, lt=1, description="LoRA dropout, a probability (lora, qlora)"
    )
    qlora_double_quant: bool | None = Field(
        None, description="QLoRA: quantize the NF4 block constants too (qlora)"
    )
    micro_batch_size: int | None = Field(
        None, gt=0, le=MAX_BATCH, description="micro-batch: sequences per GPU per step"
    )
    seq_len: int | None = Field(None, gt=0, le=MAX_SEQ_LEN, description="tokens per sequence")
    gradient_checkpointing: Checkpointing | None = Field(
        None, description="activation recomputation: none, selective or full"
    )
    attention: Attention | None = Field(
        None, description="sdpa: fused kernels (PyTorch SDPA, FlashAttention); eager"
    )
    gradient_accumulation_steps: int | None = Field(
        None,
        gt=0,
        le=MAX_BATCH,
        description="micro-batches per optimizer step (count); above 1 the gradients stay resident",
    )
    tensor_parallel: int | None = Field(
        None, gt=0, le=1024, description="tensor-parallel degree: GPUs per model replica (count)"
    )
    sequence_parallel: bool | None = Field(
        None, description="Megatron sequence parallelism (with tensor_parallel > 1)"
    )
    engine: Engine | None = Field(
        None,
        description="pytorch: torch.autocast over fp32 weights (Hugging Face Trainer without"
        " DeepSpeed); deepspeed: 16-bit weights, fp32 master in the optimizer; auto: deepspeed"
        " under ZeRO or offload, else pytorch",
    )
    optimizer_impl: OptimizerImpl | None = Field(
        None,
        description="how the optimizer step runs: foreach (PyTorch's CUDA default, one extra"
        " state copy at the step), for-loop, fused; auto: fused under deepspeed, else foreach",
    )
    cuda_context_gib: float | None = Field(
        None, ge=0, le=MAX_CONTEXT_GIB, description="CUDA context and framework per GPU, GiB"
    )
    fragmentation: float | None = Field(
        None,
        ge=0,
        le=1,
        description="allocator margin, a fraction of the bytes a step allocates and frees",
    )
    # -- the training stack and its memory mechanisms (open: the stack's profile decides)
    stack: Stack | ImageStack | None = Field(
        None,
        description="training stack: hf (Trainer, TRL, PEFT, Accelerate, DeepSpeed), litgpt,"
        " torchtune, torchtitan, unsloth or megatron for a language model; diffusers,"
        " simpletuner, ai-toolkit or kohya (sd-scripts) for a diffusion model; it supplies the"
        " mechanisms left open",
    )
    stack_version: str | None = Field(
        None,
        max_length=32,
        description="the stack's release whose mechanisms apply: current (default) or an older"
        " one where they differ (hf 4.45, litgpt 0.4, torchtune 2024, torchtitan 0.0.2,"
        " unsloth 2024)",
    )
    loss: Loss | None = Field(
        None,
        description="cross-entropy implementation: standard (fp32 upcast, 12 bytes per logit at"
        " its peak), older-hf (transformers < 4.46), chunked (torchtune), chunked-16bit"
        " (litgpt), fused (16-bit logits, in-place gradient), fused-linear (Liger: no logits"
        " kept), chunked-linear (torchtune's LinearCrossEntropyLoss), forward-grad (unsloth's"
        " fused loss, gradient in the forward) or fp32-inplace (Megatron)",
    )
    selective_checkpointing: SelectiveCheckpointing | None = Field(
        None,
        description="what selective recomputation keeps: attention (all but the attention"
        " core) or op (only matmul and attention outputs, torchtitan)",
    )
    activation_offload: bool | None = Field(
        None, description="saved activations / checkpoints moved to CPU RAM during the step"
    )
    optimizer_in_backward: bool | None = Field(
        None, description="the optimizer steps each parameter during the backward pass"
    )
    frozen_base_dtype: BaseDtype | None = Field(
        None,
        description="storage of the frozen base's non-quantized weights (lora, qlora): 16-bit"
        " or fp32 (fp32-loaded models, PEFT's k-bit preparation)",
    )
    qlora_keeps_input: bool | None = Field(
        None, description="each 4-bit layer keeps its input for backward (bitsandbytes < 0.43.2)"
    )
    qlora_lm_head: bool | None = Field(
        None,
        description="qlora: the lm_head is quantized to 4-bit too (litgpt: Lightning's"
        " bitsandbytes plugin replaces every nn.Linear)",
    )
    repeat_kv: bool | None = Field(
        None, description="K and V are repeated to every query head before attention (litgpt)"
    )
    fused_rmsnorm: bool | None = Field(
        None, description="a fused RMSNorm kernel: keeps its 16-bit input and an fp32 rstd"
    )
    compile: bool | None = Field(
        None,
        description="torch.compile on; what it compiles is the stack's: torchtune and the"
        " Hugging Face Trainer compile the loss (it then keeps 16-bit logits), torchtitan"
        " only the blocks",
    )
    loop_keeps_output: bool | None = Field(
        None,
        description="the training loop holds the model's output (its logits) through the"
        " backward pass and the optimizer step, as `out = model(...); out.loss.backward()` loops"
        " do; the Hugging Face Trainer drops it first",
    )
    # -- image models: diffusion fine-tuning (DreamBooth, LoRA, full) and vision-language models
    resolution: int | None = Field(
        None,
        ge=MIN_RESOLUTION,
        le=MAX_RESOLUTION,
        description="image side, a count of pixels, e.g. 1024 (diffusion and vision-language"
        " models)",
    )
    dreambooth: bool | None = Field(
        None,
        description="DreamBooth: a few images of one subject under a fixed instance prompt"
        " (diffusion; with method lora or full)",
    )
    prior_preservation: bool | None = Field(
        None, description="DreamBooth class images trained alongside: twice the images per step"
    )
    train_text_encoder: bool | None = Field(
        None, description="diffusion: LoRA on the CLIP text encoder(s) too"
    )
    cache_latents: bool | None = Field(
        None, description="diffusion: images pre-encoded by the VAE, which is then not kept"
    )
    cache_text_embeddings: bool | None = Field(
        None, description="diffusion: prompts pre-encoded, the text encoders then not kept"
    )
    ema: bool | None = Field(
        None, description="diffusion: an EMA copy of the trained weights (fp32)"
    )
    train_vision_tower: bool | None = Field(
        None, description="vision-language models: the vision tower trains too"
    )
    images_per_sample: int | None = Field(
        None,
        ge=0,
        le=64,
        description="vision-language models: images in each training sample (count)",
    )
    # -- the parallel plan of one estimate
    num_gpus: int | None = Field(
        None,
        gt=0,
        le=MAX_GPUS,
        description="GPUs (count): the data-parallel degree of an estimate; a ranking then"
        " considers only clusters of exactly this many GPUs",
    )
    zero_stage: int | None = Field(
        None,
        ge=0,
        le=3,
        description="ZeRO stage 0-3 across num_gpus, or an alias such as fsdp-full-shard (3) or"
        " fsdp-shard-grad-op (2)",
    )
    sharding: Sharding | None = Field(
        None, description="which ZeRO-3 implementation decides the gathered unit: deepspeed, fsdp"
    )
    offload_optimizer: bool | None = Field(
        None, description="optimizer state in CPU RAM (needs zero_stage >= 1)"
    )
    offload_params: bool | None = Field(
        None, description="ZeRO-3 weights in CPU RAM, fetched layer by layer (zero_stage 3)"
    )
    # -- the data
    tokens: float | None = Field(
        None,
        gt=0,
        le=MAX_TOKENS,
        allow_inf_nan=False,
        description="training tokens per epoch, e.g. 2e8",
    )
    samples: int | None = Field(
        None, gt=0, le=int(MAX_TOKENS), description="training samples per epoch (seq_len each)"
    )
    epochs: float | None = Field(
        None, gt=0, le=10_000, allow_inf_nan=False, description="passes over the data (epochs)"
    )
    images: int | None = Field(
        None, gt=0, le=MAX_IMAGES, description="training images per epoch (count; image models)"
    )
    steps: int | None = Field(
        None,
        gt=0,
        le=MAX_IMAGES,
        description="optimizer steps (count; image models, instead of epochs): steps x batch"
        " images",
    )
    # -- limits and objective
    max_price_per_hour: Money | None = Field(
        None, description="most per hour for the whole cluster (all nodes), e.g. 3 or '2.5 EUR'"
    )
    budget: Money | None = Field(None, description="most for the whole run, e.g. 200 or '150 EUR'")
    deadline_hours: float | None = Field(
        None, gt=0, le=MAX_HOURS, description="hours until the run must be done"
    )
    spot: SpotPolicy | None = Field(
        None,
        description="never: on-demand prices only; allowed: spot when it ranks better;"
        " required: spot only",
    )
    providers: list[str] | None = Field(
        None, max_length=64, description="only these providers, e.g. ['runpod', 'lambda']"
    )
    regions: list[str] | None = Field(
        None,
        max_length=64,
        description="only these regions: an area (eu, us, asia) or a region name as the catalog"
        " spells it, e.g. us-east-1 (eu-west matches eu-west-1 and eu-west-2)",
    )
    gpus: list[str] | None = Field(
        None, max_length=64, description="only these GPUs, e.g. ['H100', 'A100-80GB', 'L40S']"
    )
    max_vram_gib: float | None = Field(
        None, gt=0, le=4096, description="only GPUs with at most this much memory, GiB"
    )
    min_gpus: int | None = Field(
        None, ge=1, le=MAX_GPUS, description="at least this many GPUs (count)"
    )
    max_gpus: int | None = Field(
        None, ge=1, le=MAX_GPUS, description="at most this many GPUs (count)"
    )
    interconnect: Interconnect | None = Field(
        None, description="required GPU-to-GPU link: nvswitch, nvlink (also NVSwitch) or pcie"
    )
    max_nodes: int | None = Field(
        None,
        ge=1,
        le=MAX_NODES,
        description="largest multi-node cluster considered (count of nodes)",
    )
    objective: Objective | None = Field(
        None, description="cost: cheapest total; time: fastest; price: cheapest per hour"
    )

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        found = zero_alias(data.get("zero_stage"))
        if found is not None:
            data["zero_stage"], sharding = found
            if sharding is not None and data.get("sharding") is None:
                data["sharding"] = sharding
        if "attention" in data:
            data["attention"] = attention_alias(data["attention"])
        return data

    @field_validator("providers", "regions", "gpus", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        """A comma-separated text or a list; names are trimmed, blanks dropped, duplicates kept
        once; an empty list is open (None)."""
        if value is None:
            return None
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            return value
        names = [str(item).strip() for item in items if str(item).strip()]
        return list(dict.fromkeys(names)) or None

    @classmethod
    def parse(cls, values: dict[str, Any]) -> Self:
        """A spec from plain values; a bad value is an InvalidInputError naming the field, the
        value given and what is valid."""
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise invalid_input(exc, VALID) from None

    def filled(self) -> dict[str, object]:
        """The fields that hold a value, by name."""
        return {name: value for name, value in self if value is not None}

    def model_label(self) -> str | None:
        """How the model is named: its spec text, or the name of an uploaded architecture."""
        if isinstance(self.model, ModelArch):
            return self.model.name
        return self.model


JOB_FIELDS: Final[tuple[str, ...]] = tuple(JobSpec.model_fields)
assert set(get_args(FieldName)) == set(JOB_FIELDS), "FieldName lists every JobSpec field"
