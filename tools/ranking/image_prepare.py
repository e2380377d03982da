"""What a ranking of an image-model job computes once: its work, checkpoints and assumptions.

Work: a diffusion run trains on `images` instance images (steps x batch, or images x epochs),
each costing `tools.ranking.time.image_flops` FLOPs at its resolution; a vision-language run on
`images` image-text samples of text + image tokens each, the language model's FLOPs per token
(`tools.ranking.time.flops`) with the vision tower and projector added per sample:
2 x weights x tower tokens plus 4 x tokens^2 x width per layer for attention, forward only when
the tower is frozen (no gradient flows into it), forward and backward when it trains; the
projector trains (3 passes). Setup stages the distinct images (JPEG at about
`IMAGE_BYTES_PER_PIXEL` bytes per pixel, an assumption) and the weights as for language jobs.
A checkpoint holds the trainable parameters and their optimizer state: the gradient-width copy
of the trained weights plus the optimizer bytes of an unsharded plan (single GPU, and ZeRO-2 on
one GPU for a VLM's sharded plans).
"""

from __future__ import annotations

from dataclasses import replace

from tools.architectures.diffusion import DiffusionModel
from tools.architectures.vision import VisionLanguageModel
from tools.memory import EstimateInput, MemoryEstimate
from tools.memory.images.jobs import diffusion_job
from tools.ranking.images import ImageRankRequest, ImageSearch
from tools.ranking.models import JobSummary
from tools.ranking.plans import PlanName
from tools.ranking.prepare import PreparedJob, request_terms
from tools.ranking.time.image_flops import image_training_flops
from tools.ranking.time.image_step import ImageWork
from tools.ranking.time.work import TrainingWork, training_work
from tools.ranking.wording import job_assumptions
from tools.units import GIB

__all__ = ["IMAGE_BYTES_PER_PIXEL", "prepare_image_job"]

IMAGE_BYTES_PER_PIXEL = 0.3  # a JPEG at about 2.4 bits per pixel (assumption)
TEXT_BYTES_PER_TOKEN = 4.0
_PLAN_FIELDS = ("num_gpus", "zero_stage", "sharding", "offload_optimizer", "offload_params")
_TOKEN_FLOPS_LINE = "training FLOPs per token"


def prepare_image_job(request: ImageRankRequest) -> PreparedJob:
    """The shared figures of an image job's ranking (see the module docstring)."""
    job, a = request.job, request.assumptions
    search = ImageSearch(job, a.memory_margin)
    base = search.estimate("single", 1)
    total, trainable = int(base.total_params), int(base.trainable_params)
    side = int(job.values["resolution"])
    staged = request.images_per_epoch * side * side * IMAGE_BYTES_PER_PIXEL
    work: TrainingWork | ImageWork
    if isinstance(job.model, DiffusionModel):
        work = _diffusion_work(request, total, trainable)
        tokens, flops = 0.0, work.images * work.flops_per_image
        lines = _diffusion_lines(request, work, staged)
        checkpoints = dict.fromkeys(("single", "zero2"), _checkpoint(base))
    else:
        work, text = _vlm_work(request, job.model, total, trainable)
        tokens, flops = work.tokens, work.flops.total * work.tokens
        staged += request.images * text * TEXT_BYTES_PER_TOKEN
        lines = _vlm_lines(request, job.model, work, staged)
        checkpoints = {"single": _checkpoint(base)}
        checkpoints["zero2"] = _checkpoint(search.estimate("zero2", 1))
    per_plan: dict[PlanName, int] = {"single": checkpoints["single"], "zero2": checkpoints["zero2"]}
    general = job_assumptions(request)
    if isinstance(work, ImageWork):  # the per-token count is the language models'
        general = [line for line in general if not line.startswith(_TOKEN_FLOPS_LINE)]
    summary = JobSummary(
        model=job.model.id,
        method=job.method,
        precision=job.precision,
        total_params=total,
        active_params=total,
        trainable_params=trainable,
        tokens=tokens,
        images=request.images,
        training_flops=flops,
        checkpoint_bytes=max(per_plan.values()),
        objective=request.objective,
        spot_policy=request.constraints.spot,
        memory_margin=a.memory_margin,
        assumptions=[*lines, *general, *base.assumptions],
    )
    return PreparedJob(
        request=request,
        search=search,
        margin=a.memory_margin,
        precision=job.precision,
        tokens=tokens,
        tokens_per_epoch=staged / a.setup.data_bytes_per_token,
        training_flops=flops,
        work=work,
        total_params=total,
        checkpoints=per_plan,
        summary=summary,
        **request_terms(request),
    )


def _checkpoint(est: MemoryEstimate) -> int:
    """Trainable weights (as wide as their gradients) and optimizer state, one GPU's."""
    return int(est.per_gpu.gradients + est.per_gpu.optimizer)


def _diffusion_work(request: ImageRankRequest, total: int, trainable: int) -> ImageWork:
    job = request.job
    assert isinstance(job.model, DiffusionModel)
    setup = diffusion_job(job.model, job.values)
    executed = image_training_flops(setup)
    model = image_training_flops(setup.model_copy(update={"gradient_checkpointing": False}))
    return ImageWork(
        method=setup.method,
        precision=setup.precision,
        flops_per_image=executed,
        model_flops_per_image=model,
        micro_batch=setup.micro_batch_size,
        accumulation=int(job.values.get("gradient_accumulation_steps") or 1),
        images=request.images,
        total_params=total,
        trainable_params=trainable,
    )


def _vlm_work(
    request: ImageRankRequest, vlm: VisionLanguageModel, total: int, trainable: int
) -> tuple[TrainingWork, int]:
    """The language model's work over text + image tokens, the vision side added per token;
    and the text tokens per sample."""
    job, values = request.job, request.job.values
    fields = {k: v for k, v in job.language.items() if k not in _PLAN_FIELDS}
    text = int(fields.pop("seq_len", 2048))  # as the image estimator reads it
    side, per_sample = int(values["resolution"]), int(values["images_per_sample"])
    seq = text + per_sample * vlm.image_tokens(side)
    tower_trained = bool(values["train_vision_tower"])
    lm_trainable = trainable - vlm.projector_params()
    lm_trainable -= vlm.vision_params() if tower_trained else 0
    inp = EstimateInput(model=vlm.language, seq_len=seq, **fields)
    work = training_work(
        inp, request.images * seq, total, lm_trainable, request.assumptions.throughput
    )
    linear, attention, again = _vision_flops(vlm, side, tower_trained, inp)
    flops = replace(
        work.flops,
        block_linear=work.flops.block_linear + per_sample * linear / seq,
        attention=work.flops.attention + per_sample * attention / seq,
        recompute_matmul=work.flops.recompute_matmul + per_sample * again / seq,
    )
    return replace(work, flops=flops, trainable_params=trainable), text


def _vision_flops(
    vlm: VisionLanguageModel, side: int, trained: bool, inp: EstimateInput
) -> tuple[float, float, float]:
    """(linear, attention, recomputed linear) FLOPs of one image through the tower and the
    projector, per training step."""
    tokens = vlm.vision_tokens(side)
    tower_linear = 2.0 * vlm.vision_params() * tokens
    tower_attention = 4.0 * tokens * tokens * vlm.vision.width * vlm.vision.layers
    projector = 2.0 * vlm.projector_params() * vlm.image_tokens(side) * 3.0
    again = tower_linear if trained and inp.gradient_checkpointing != "none" else 0.0
    passes = 3.0 if trained else 1.0
    return tower_linear * passes + again + projector, tower_attention * passes, again


def _diffusion_lines(request: ImageRankRequest, work: ImageWork, staged: float) -> list[str]:
    values = request.job.values
    side = values["resolution"]
    lines = [
        f"work: {request.work}",
        f"{work.flops_per_image / 1e12:.3g} TFLOPs per training image at {side} px (denoiser"
        " forward + backward: 2 x for trained weights, 1 x for frozen ones; LoRA adapters;"
        " recomputation under gradient checkpointing; the VAE encoder and text encoders forward"
        " unless cached), all at the GPU's 16-bit GEMM rate (convolutions as implicit GEMMs);"
        " memory-bound kernels are not counted apart",
        "plans: one GPU, or DDP over several as the diffusers scripts, kohya sd-scripts,"
        " SimpleTuner and ai-toolkit train (Accelerate, data parallel): each GPU holds the whole"
        " job, so more GPUs shorten the run but never lower the memory per GPU; no ZeRO,"
        " tensor or pipeline parallelism and no CPU offload",
        _staged_line(request, staged),
    ]
    if values.get("prior_preservation"):
        lines.append(
            "prior preservation: every instance image trains with a class image, twice the"
            " images per step in FLOPs and activations; generating the class images beforehand"
            " is not counted"
        )
    return lines


def _vlm_lines(
    request: ImageRankRequest, vlm: VisionLanguageModel, work: TrainingWork, staged: float
) -> list[str]:
    values = request.job.values
    side, per_sample = values["resolution"], values["images_per_sample"]
    tower = "trained (forward and backward)" if values["train_vision_tower"] else "frozen"
    return [
        f"work: {request.work}",
        f"{work.seq_len} language-model tokens per sample ({per_sample} image(s) of {side} px x"
        f" {vlm.image_tokens(side)} tokens + text); the vision tower, {tower}, and the projector"
        " add their FLOPs per sample (a frozen tower runs forward only)",
        "plans: one GPU, DDP, ZeRO-2 or ZeRO-3 (DeepSpeed, as LLaVA's scripts and LLaMA-Factory"
        " run them), sized by the image estimator at each plan's ZeRO stage and data ranks; no"
        " tensor or pipeline parallelism and no CPU offload",
        _staged_line(request, staged),
    ]


def _staged_line(request: ImageRankRequest, staged: float) -> str:
    return (
        f"data staged before training: {request.images_per_epoch:,.0f} images at"
        f" {IMAGE_BYTES_PER_PIXEL:g} B per pixel (JPEG, an assumption), {staged / GIB:.2g} GiB"
    )
