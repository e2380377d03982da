"""A model's parameter tensors and LoRA adapters, as counts the byte rules can work on.

`ModelArch` gives totals per component; the estimator needs tensor shapes too, because several
rules work per tensor: bitsandbytes keeps 32-bit optimizer state for tensors under 4096 elements,
Adafactor stores rows + columns for a matrix, NF4 rounds each tensor up to whole 64-value blocks,
and DeepSpeed ZeRO-3 gathers one whole module at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from tools.architectures.architecture import LinearModule, ModelArch
from tools.errors import InvalidInputError

TensorKind = Literal["linear", "bias", "embedding", "norm", "other"]
# The canonical names of a MoE model's routed-expert linears (tools/architectures/architecture.py
# names its shared-expert and dense-layer MLPs with a prefix).
ROUTED_EXPERT_LINEARS = frozenset({"gate_proj", "up_proj", "down_proj"})
_CACHE = 256  # architectures kept; ModelArch is frozen and hashable


@lru_cache(maxsize=_CACHE)
def linear_modules(model: ModelArch) -> tuple[LinearModule, ...]:
    """`model.linear_modules()`, built once per architecture (it creates pydantic objects)."""
    return tuple(model.linear_modules())


@lru_cache(maxsize=_CACHE)
def total_params(model: ModelArch) -> int:
    """`model.total_params()`, computed once per architecture."""
    return model.total_params()


@dataclass(frozen=True, slots=True)
class ParamTensor:
    """`count` parameter tensors of shape rows x cols (cols = 1 for a vector)."""

    name: str
    rows: int
    cols: int
    count: int
    kind: TensorKind

    @property
    def numel(self) -> int:
        """Elements of one tensor."""
        return self.rows * self.cols

    @property
    def total(self) -> int:
        """Elements of all `count` tensors."""
        return self.numel * self.count


@dataclass(frozen=True, slots=True)
class PhysicalLinear:
    """One nn.Linear as PEFT sees it: fused slices (GPT-2 `c_attn`) form a single module."""

    name: str  # canonical name, or the fused module's Hugging Face name
    group: str
    d_in: int
    d_out: int
    count: int
    slices: tuple[str, ...]  # canonical names it covers


@lru_cache(maxsize=_CACHE)
def param_tensors(model: ModelArch) -> tuple[ParamTensor, ...]:
    """Every parameter tensor of the model, grouped by shape; sums to `model.total_params()`."""
    h = model.hidden_size
    tensors: list[ParamTensor] = []
    for m in linear_modules(model):
        tensors.append(ParamTensor(m.name, m.d_out, m.d_in, m.count, "linear"))
        if m.bias:
            tensors.append(ParamTensor(f"{m.name}.bias", m.d_out, 1, m.count, "bias"))
    tensors.append(ParamTensor("embed_tokens", model.vocab_size, h, 1, "embedding"))
    if not model.tied_embeddings:
        tensors.append(ParamTensor("lm_head", model.vocab_size, h, 1, "embedding"))
    if model.learned_positions:
        tensors.append(
            ParamTensor("embed_positions", model.max_position_embeddings, h, 1, "embedding")
        )
    if model.type_vocab_size:
        tensors.append(ParamTensor("token_type", model.type_vocab_size, h, 1, "embedding"))
    inner = model.inner_norm_params()  # q/k head norms, MLA latent norms
    norm_vectors = (model.norm_params() - inner) // h
    if norm_vectors:
        tensors.append(ParamTensor("norms", h, 1, norm_vectors, "norm"))
    if inner:
        tensors.append(ParamTensor("inner_norms", inner // model.num_layers, 1, model.num_layers,
                                   "norm"))  # fmt: skip
    if model.pooler:
        tensors += [
            ParamTensor("pooler", h, h, 1, "other"),
            ParamTensor("pooler.bias", h, 1, 1, "bias"),
        ]
    remainder = total_params(model) - sum(t.total for t in tensors)
    if model.relative_attention_buckets and remainder > 0:
        stacks = remainder // (model.relative_attention_buckets * model.num_heads)
        tensors.append(
            ParamTensor(
                "relative_attention_bias",
                model.relative_attention_buckets,
                model.num_heads,
                stacks,
                "other",
            )
        )
        remainder = total_params(model) - sum(t.total for t in tensors)
    if remainder:  # parameters the shapes above do not explain: count them as one vector
        tensors.append(ParamTensor("unaccounted", remainder, 1, 1, "other"))
    return tuple(tensors)


@lru_cache(maxsize=_CACHE)
def physical_linears(model: ModelArch) -> tuple[PhysicalLinear, ...]:
    """Linear modules as separate nn.Linear objects: slices sharing a fused matrix are merged.

    Entries sharing a Hugging Face name, group, input width and instance count are slices of one
    fused matrix (GPT-2 `c_attn` = q, k, v; Phi-3 `gate_up_proj`), which PEFT can only adapt as
    a whole. (A MoE model's dense-layer and shared-expert MLPs share Hugging Face names with
    different instance counts, and stay apart.)
    """
    merged: dict[tuple[str, str, int, int], PhysicalLinear] = {}
    for m in linear_modules(model):
        hf = m.hf_name or m.name
        key = (hf, m.group, m.d_in, m.count) if hf != m.name else (m.name, m.group, -1, -1)
        prior = merged.get(key)
        if prior is None:
            merged[key] = PhysicalLinear(m.name, m.group, m.d_in, m.d_out, m.count, (m.name,))
        else:
            merged[key] = PhysicalLinear(
                hf, m.group, m.d_in, prior.d_out + m.d_out, m.count, (*prior.slices, m.name)
            )
    return tuple(merged.values())


TARGET_PRESETS = ("all-linear", "attention", "mlp")


def valid_target_names(model: ModelArch) -> list[str]:
    """Presets plus every module name (canonical and Hugging Face) the model has."""
    names = [m.name for m in linear_modules(model)]
    names += [m.hf_name for m in linear_modules(model) if m.hf_name]
    return [*TARGET_PRESETS, *dict.fromkeys(names)]


def resolve_targets(model: ModelArch, targets: str | Sequence[str]) -> tuple[PhysicalLinear, ...]:
    """The physical modules LoRA adapts for `targets`: a preset or a list of module names.

    A name that selects one slice of a fused matrix selects the whole fused module, as in PEFT.
    Raises InvalidInputError naming the valid choices for an unknown name or an empty list.
    """
    wanted = [targets] if isinstance(targets, str) else list(targets)
    modules = physical_linears(model)
    chosen: list[PhysicalLinear] = []
    valid = valid_target_names(model)
    for raw in wanted:
        name = raw.strip()
        if name == "all-linear":
            picked = list(modules)
        elif name in ("attention", "mlp"):
            picked = [m for m in modules if m.group == name]
        else:
            picked = [m for m in modules if name == m.name or name in m.slices]
            picked += [m for m in modules if m not in picked and _hf_matches(model, m, name)]
        if not picked:
            raise InvalidInputError("lora_targets", raw, "; ".join(valid))
        chosen += [m for m in picked if m not in chosen]
    if not chosen:
        raise InvalidInputError("lora_targets", targets, "; ".join(valid))
    return tuple(chosen)


def _hf_matches(model: ModelArch, module: PhysicalLinear, name: str) -> bool:
    """Whether `name` is the Hugging Face name of any slice of `module`."""
    return any(m.hf_name == name and m.name in module.slices for m in linear_modules(model))


def adapter_tensors(targets: Iterable[PhysicalLinear], rank: int) -> tuple[ParamTensor, ...]:
    """LoRA A (rank x d_in) and B (d_out x rank) for every instance of every targeted module."""
    out: list[ParamTensor] = []
    for m in targets:
        out.append(ParamTensor(f"{m.name}.lora_A", rank, m.d_in, m.count, "linear"))
        out.append(ParamTensor(f"{m.name}.lora_B", m.d_out, rank, m.count, "linear"))
    return tuple(out)


@lru_cache(maxsize=_CACHE)
def largest_module_params(model: ModelArch) -> int:
    """Parameters of the largest single module (weight + bias), like DeepSpeed's estimator."""
    linear = max(m.params_each() for m in linear_modules(model))
    embeddings = [model.vocab_size * model.hidden_size]
    if model.learned_positions:
        embeddings.append(model.max_position_embeddings * model.hidden_size)
    return max(linear, *embeddings)


@lru_cache(maxsize=_CACHE)
def block_params(model: ModelArch) -> int:
    """Parameters of one transformer block (averaged over encoder and decoder blocks)."""
    layers = model.num_layers + model.num_decoder_layers
    linear = sum(m.num_params() for m in linear_modules(model))
    per_norm = model.hidden_size * (2 if model.norm == "layernorm" else 1)
    norms = model.norms_per_layer * layers + model.num_decoder_layers  # + cross-attention norm
    return (linear + per_norm * norms) // layers
