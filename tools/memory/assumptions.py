"""The plain sentences an estimate returns: every default and modelling choice used for a call."""

from __future__ import annotations

from tools.memory import constants as c
from tools.memory.activations import Activations
from tools.memory.bands.calibration import CalibrationBand
from tools.memory.bands.published_band import BandGroup
from tools.memory.dtypes import saved_dtypes
from tools.memory.inputs import EstimateInput
from tools.memory.results import ReportedFigures
from tools.memory.stacks.describe import stack_sentences
from tools.memory.stacks.quantized import qlora_sentences
from tools.memory.states.inventory import PhysicalLinear, total_params
from tools.memory.states.model_states import ModelStates, adapter_bytes
from tools.units import GB, format_gib


def _size(n_bytes: int) -> str:
    return f"{format_gib(n_bytes, 2)} ({n_bytes / GB:.2f} GB)"


def describe(
    inp: EstimateInput,
    states: ModelStates,
    targets: tuple[PhysicalLinear, ...],
    acts: Activations,
    peak: str = "",
    band: CalibrationBand | None = None,
    published: BandGroup | None = None,
    figures: ReportedFigures | None = None,
) -> list[str]:
    """All assumptions for one call, in reading order."""
    return [
        *_model(inp),
        *stack_sentences(inp, acts),
        *_method(inp, states, targets, acts),
        _precision(inp),
        *_optimizer(inp, states),
        *_sharding(inp, states),
        *_activations(inp),
        *_peak(inp, peak),
        _overhead(inp),
        *_figures(inp, figures),
        *_band(inp, band, published),
        "Sizes are integer bytes; GiB = 2^30 bytes, GB = 10^9 bytes.",
    ]


def _model(inp: EstimateInput) -> list[str]:
    m = inp.model
    out = [f"Model {m.name} ({m.id}): {total_params(m):,} parameters; dimensions from {m.source}."]
    out += [f"Model: {a}." for a in m.assumptions]
    if inp.seq_len > m.max_position_embeddings:
        out.append(
            f"The sequence length {inp.seq_len} exceeds the model's context length "
            f"{m.max_position_embeddings}."
        )
    return out


def _method(
    inp: EstimateInput,
    states: ModelStates,
    targets: tuple[PhysicalLinear, ...],
    acts: Activations,
) -> list[str]:
    if inp.method in ("pretrain", "full"):
        return [f"Method {inp.method}: all {states.total_params:,} parameters are trainable."]
    names = ", ".join(t.name for t in targets)
    base = "fp32" if inp.precision == "fp32" else "16-bit"
    dtype = "bf16" if adapter_bytes(inp.precision) == c.BF16 else "fp32"
    out = [
        f"LoRA rank {inp.lora_rank}, alpha {inp.effective_lora_alpha:g} (alpha does not change "
        f"memory), dropout {inp.lora_dropout:g}, on {names}: {states.trainable_params:,} "
        "trainable parameters, r x (d_in + d_out) per adapted matrix and instance.",
        f"Adapters are kept in {dtype}"
        + (
            " (PEFT upcasts adapters of a 16-bit model to fp32), so their gradients and "
            "optimizer state are fp32 with no separate master copy."
            if dtype == "fp32"
            else "."
        )
        + " The base model is frozen: no gradients or optimizer state for it.",
    ]
    if inp.method == "lora":
        out[-1] += f" Frozen weights are stored in {base}."
        return out
    return out + qlora_sentences(inp, states, acts)


def _precision(inp: EstimateInput) -> str:
    if inp.precision == "fp32":
        return "fp32: 4-byte weights, gradients, optimizer state and activations."
    if inp.precision == "bf16":
        return (
            "Pure bf16: weights, gradients, optimizer state and activations in 16-bit; "
            "no fp32 master copy."
        )
    if inp.effective_engine == "pytorch":
        full = inp.method in ("pretrain", "full")
        weights = (
            "4-byte fp32 weights and gradients (the weights are the master copy)"
            if full
            else "a 16-bit frozen base"
        )
        return (
            f"Precision {inp.precision} as plain PyTorch runs it (torch.autocast, the Hugging "
            f"Face Trainer's default without DeepSpeed; engine {inp.engine}): {weights}; "
            "matmuls in 16-bit while norms, residual stream and loss stay fp32"
            + (
                "; autocast caches a 16-bit copy of every trainable weight it multiplies."
                if full
                else "."
            )
        )
    return (
        f"Precision {inp.precision} as in the ZeRO paper (DeepSpeed; engine {inp.engine}): "
        "16-bit working weights and gradients (2 + 2 bytes per parameter), an fp32 master copy "
        "counted in the optimizer state, 16-bit activations."
    )


def _optimizer(inp: EstimateInput, states: ModelStates) -> list[str]:
    full = inp.method in ("pretrain", "full")
    state = "2-byte bf16" if inp.precision == "bf16" else "4-byte fp32"
    separate_master = inp.effective_engine == "deepspeed"
    master = (
        " plus the 4-byte fp32 master copy"
        if full and inp.precision in c.MIXED_PRECISIONS and separate_master
        else ""
    )
    text = {
        "adamw": f"AdamW: two {state} states (m, v) per trainable parameter{master}"
        + (" (ZeRO's K = 12)." if master else "."),
        "adamw-8bit": "The bitsandbytes 8-bit AdamW: two uint8 states plus one fp32 absmax per 256 "
        f"values (2.03 bytes per parameter){master}; tensors under 4096 elements keep 32-bit "
        "state.",
        "adafactor": "Adafactor (Hugging Face defaults, beta1=None): no first moment; an fp32 "
        f"second moment factored into rows + columns for each matrix, full for vectors{master}.",
        "sgd": f"SGD without momentum keeps no state{master}.",
        "sgd-momentum": f"SGD with momentum: one {state} momentum buffer per parameter{master}.",
        "lion": f"Lion: one {state} momentum buffer per parameter{master}.",
    }
    if inp.optimizer == "paged-adamw-8bit":
        return [
            text["adamw-8bit"].replace("bitsandbytes", "bitsandbytes paged"),
            "Paged optimizer state lives in CUDA unified memory (tensors of at least 1e5 "
            f"elements: {_size(states.paged_optimizer)}) and moves to CPU RAM under memory "
            "pressure; it is counted here as resident on the GPU in the device total (the worst "
            "case), outside the allocated and reserved figures, and the card need hold only "
            "the rest.",
        ]
    out = [text[inp.optimizer]]
    impl = inp.effective_optimizer_impl
    if inp.optimizer == "adamw":
        step = {
            "fused": "a fused step (DeepSpeed, or torch fused=True) updates in place",
            "foreach": "PyTorch's foreach step (its CUDA default) builds sqrt(v) for every "
            "parameter at once: one more copy of a state",
            "for-loop": "PyTorch's for-loop step (its CPU default) keeps sqrt(v) and its "
            "bias-corrected quotient for one parameter at a time: twice the largest tensor",
        }[impl]
        out.append(
            f"AdamW implementation {impl}: {step} "
            f"({_size(states.step_temporaries)} at the optimizer step)."
        )
    elif inp.optimizer == "adafactor":
        out.append(
            "The Adafactor step keeps fp32 temporaries of the largest parameter's size (two; "
            f"four for 16-bit parameters): {_size(states.step_temporaries)}."
        )
    return out


def _sharding(inp: EstimateInput, states: ModelStates) -> list[str]:
    nd, stage, out = inp.num_gpus, inp.zero_stage, []
    if stage == 0 and nd > 1:
        out.append(
            f"Plain data parallelism over {nd} GPUs: each holds all model states; DDP's "
            f"gradient buckets keep a second copy of the gradients "
            f"({_size(states.comm_buffers)}, in overhead; PyTorch's default "
            "gradient_as_bucket_view=False)."
        )
    elif stage > 0:
        parts = ["optimizer state", "gradients", "weights"][:stage]
        split = f"split {nd} ways" if nd > 1 else "not split (1 GPU)"
        out.append(
            f"ZeRO stage {stage} (Rajbhandari et al. 2019, Table 1): {', '.join(parts)} {split}."
        )
        if inp.effective_engine == "deepspeed" and inp.sharding == "deepspeed":
            fp32 = inp.precision in c.MIXED_PRECISIONS and inp.method in ("pretrain", "full")
            out.append(
                "DeepSpeed as it runs (deepspeed/runtime/zero, tools/memory/stacks/deepspeed.py): "
                + ("an fp32 gradient partition built for the optimizer step (4 bytes per "
                   "parameter / GPUs, at most 1e9 elements per sub-group under ZeRO-3), "
                   if fp32 and not inp.offload_optimizer else "")
                + f"its reduce bucket and ZeRO-3 prefetch and reuse window "
                f"({_size(states.deepspeed_buffers)}, in overhead), "
                + ("with the Hugging Face integration's 'auto' sizes." if inp.stack == "hf"
                   else "with DeepSpeed's default sizes.")
            )  # fmt: skip
    if states.gathered_weights:
        unit = (
            "one transformer block, plus the next one prefetched (FSDP)"
            if inp.sharding == "fsdp"
            else "the largest single module (DeepSpeed)"
        )
        out.append(
            f"ZeRO-3 holds {unit} unsharded while computing: "
            f"{_size(states.gathered_weights + states.gathered_gradients)} of weights "
            "and gradients, counted in those parts."
        )
    if inp.offload_params:
        out.append(
            "ZeRO-3 parameter offload: the 16-bit weight partition lives in pinned CPU RAM and "
            "each module is fetched when it computes."
        )
    if inp.offload_optimizer:
        grads = " The GPU keeps no gradient partition." if stage >= 2 else ""
        out.append(
            f"Optimizer state and an fp32 gradient partition are offloaded to CPU RAM: "
            f"{_size(states.cpu_offload)} per GPU process.{grads}"
        )
    if inp.tensor_parallel > 1:
        sp = " with sequence parallelism" if inp.sequence_parallel else ""
        out.append(
            f"Tensor parallelism {inp.tensor_parallel}{sp}: linear layers and "
            "(vocabulary-parallel) embeddings are split, norms replicated; activations "
            "follow Korthikanti et al. 2022's tensor-parallel forms."
        )
    if nd * inp.tensor_parallel > 1:
        out.append("NCCL's own communication buffers are not counted.")
    return out


def _activations(inp: EstimateInput) -> list[str]:
    m = inp.model
    d = saved_dtypes(
        inp.precision, inp.effective_engine, inp.method in ("pretrain", "full"), inp.device
    )
    stream = f", {d.stream}-byte residual stream" if d.stream != d.act else ""
    out = [
        f"Activations for {inp.micro_batch_size} x {inp.seq_len} tokens per GPU, {d.act}-byte "
        f"matmul outputs{stream}, counted tensor by tensor (Korthikanti et al. 2022), checked "
        "against the tensors PyTorch saves for Hugging Face models and against measured steps."
    ]
    mech = inp.mechanisms
    if inp.attention == "sdpa":
        kv = f"{m.num_heads} heads: K and V repeated" if mech.repeat_kv else f"{m.num_kv_heads}"
        out.append(
            f"Fused attention (SDPA/FlashAttention) keeps Q, K and V ({kv} KV heads), its "
            "output and an fp32 log-sum-exp; no s x s tensors. A padded batch can make PyTorch "
            "fall back to a kernel that stores them."
        )
    else:
        soft = "16-bit" if m.family in ("gpt2", "bert") else "fp32"
        out.append(
            f"Eager attention keeps the s x s softmax output ({soft}) and the 16-bit "
            f"probabilities per head; K and V are expanded to all {m.num_heads} heads."
        )
    core = (
        ", which fused attention already does"
        if inp.attention == "sdpa"
        else ("; its s x s tensors are not kept")
    )
    recompute = {
        "none": "No recomputation: every layer keeps all its tensors.",
        "selective": f"Selective recomputation (Korthikanti et al. 2022): the attention core is "
        f"recomputed{core}.",
        "full": "Full recomputation: each layer keeps only its input, and one layer's full set "
        "is rebuilt during the backward pass.",
    }[inp.gradient_checkpointing]
    if not (inp.gradient_checkpointing == "selective" and mech.selective_checkpointing == "op"):
        out.append(recompute)  # op level: stated with the stack (tools/memory/stacks/describe.py)
    mask = "1-byte masks" if inp.device == "cuda" else "masks in the input's dtype (CPU)"
    drop = (
        f"on ({mask} for attention probabilities and residuals)"
        if inp.effective_dropout
        else "off (modern configs set it to 0)"
    )
    out.append(f"Dropout {drop}.")
    if m.norm == "rmsnorm" and mech.fused_rmsnorm:
        out.append("RMSNorm as one fused kernel: keeps its input and an fp32 rstd per token.")
    elif m.norm == "rmsnorm":
        out.append(
            "RMSNorm as in Hugging Face: keeps an fp32 copy of its input and the fp32 "
            "rsqrt, plus the normalized tensor when its weight is trainable."
        )
    if inp.method in ("lora", "qlora"):
        kept = (
            "Frozen linear layers keep no input, except the 4-bit ones, which keep theirs "
            "(bitsandbytes before 0.43.2)."
            if inp.method == "qlora" and mech.qlora_keeps_input
            else "Frozen linear layers keep no input."
        )
        out.append(
            f"{kept} Under mixed precision PEFT casts each adapter's input, so every adapted "
            "module keeps its own 16-bit copy; each also keeps its rank-r output."
        )
    if m.is_moe:
        out.append(
            f"Mixture of experts: each token goes to {m.experts_per_token} of "
            f"{m.num_experts} experts; routing is taken as balanced."
        )
    if m.num_decoder_layers:
        out.append(
            "Encoder-decoder: source and target both take seq_len tokens; cross-attention "
            "is counted like self-attention."
        )
    if inp.device == "cpu":
        out.append(
            "CPU kernels: LayerNorm keeps its statistics in the input's dtype, and attention "
            "with dropout runs SDPA's math kernel in fp32, keeping the s x s tensors."
        )
    return out


def _peak(inp: EstimateInput, peak: str) -> list[str]:
    grads = (
        f"Gradients stay resident through the step ({inp.gradient_accumulation_steps} "
        "micro-batches are accumulated)."
        if inp.gradient_accumulation_steps > 1
        else "Gradients are freed after each optimizer step (zero_grad(set_to_none=True)) "
        "and exist only from the backward pass on."
    )
    return [
        grads,
        "The total is the largest of the step's moments (forward at the loss, loss backward, "
        "lm_head backward, recompute, first layer backward, embedding backward, optimizer "
        "step); the parts are what "
        f"is live at that moment: here the {peak}. Tied embeddings need three "
        "vocabulary-sized gradient buffers at the end of the backward pass.",
    ]


def _band(
    inp: EstimateInput, band: CalibrationBand | None, published: BandGroup | None
) -> list[str]:
    """On a GPU, the band from published GPU runs; on the CPU, the CPU calibration's."""
    out = []
    if published is not None and inp.device == "cuda" and not published.validated:
        out.append(
            f"Uncertainty ±{published.band:.0%}: unvalidated for {published.stack}: fewer than "
            "four of its published GPU runs have been compared with the estimate, so the band "
            "is the one that 19 in 20 published runs of every stack fell within, like for like "
            "(benchmarks/published_runs; tools/data/memory_published_band.json)."
        )
    elif published is not None and inp.device == "cuda":
        group = "all stacks and methods" if published.label == "all" else published.label
        out.append(
            f"Uncertainty ±{published.band:.0%}: the published GPU runs of {group} were "
            "compared like for like (allocated, reserved or whole-device figures); four in "
            f"five of their estimates fell within this band, the median at "
            f"{published.median_ratio:.2f} x the measured peak (benchmarks/published_runs; "
            "the runs are counted in tools/data/memory_published_band.json)."
        )
    if band is not None:
        scope = "Uncertainty" if inp.device == "cpu" else "The tensor count itself, on the CPU"
        out.append(
            f"{scope}: ±{band.band:.0%}, the largest error of the total against {band.cases} "
            f"measured training steps ({', '.join(band.devices)}; mean error "
            f"{band.mean_error:+.1%}; benchmarks/memory_calibration), bytes of tensors only."
        )
    return out


def _figures(inp: EstimateInput, figures: ReportedFigures | None) -> list[str]:
    """Which measurement the total predicts, and what the others would read."""
    if figures is None or inp.device == "cpu":
        return []
    paged = (
        f"; {_size(figures.evictable)} of it is paged optimizer state the driver can move to "
        f"CPU RAM, so the card must hold {_size(figures.required)}"
        if figures.evictable
        else ""
    )
    return [
        f"The total predicts the whole device as nvidia-smi shows it, {_size(figures.device)}"
        f"{paged}. Compared like for like, torch.cuda.max_memory_reserved would read about "
        f"{_size(figures.reserved)} (no CUDA context) and max_memory_allocated "
        f"{_size(figures.allocated)} (tensors only)."
    ]


def _overhead(inp: EstimateInput) -> str:
    if inp.device == "cpu":
        return (
            "Overhead on the CPU: no CUDA context; "
            f"{inp.effective_fragmentation:.0%} of the step's transient bytes for fragmentation."
        )
    default = " (default)" if "cuda_context_bytes" not in inp.model_fields_set else ""
    frag = " (default)" if "fragmentation" not in inp.model_fields_set else ""
    return (
        f"Overhead: {_size(inp.cuda_context_bytes)} for the CUDA context and kernels{default}, "
        f"plus {inp.fragmentation:.0%} of the bytes the step allocates and frees (activations, "
        f"gradients, gathered weights, temporaries; not the resting weights and optimizer "
        f"state) for the caching allocator's fragmentation{frag} (tools/memory/stacks/"
        "reporting.py)."
    )
