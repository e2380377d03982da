"""Transformer architectures as typed dimensions, and parameter counts computed from them.

A `ModelArch` holds the dimensions published in a model's Hugging Face `config.json`. Every count
(total, active, embeddings, each linear layer) is derived from those dimensions, never typed in, so
it can be checked against the official figure. Module names follow the Llama naming used by PEFT
(`q_proj`, ..., `down_proj`); families with other names (GPT-2 `c_attn`, BERT `query`, T5 `wi`)
keep their real name in `LinearModule.hf_name`.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ArchKind = Literal["decoder", "encoder", "encoder-decoder"]
NormKind = Literal["rmsnorm", "layernorm"]
QKNormSpan = Literal["head", "all_heads"]


class LinearModule(BaseModel):
    """One kind of nn.Linear in the transformer blocks, and how many instances the model has."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="PEFT-style module name, e.g. 'q_proj', 'down_proj', 'router'")
    group: Literal["attention", "mlp"]
    d_in: int = Field(gt=0, description="input features")
    d_out: int = Field(gt=0, description="output features")
    count: int = Field(gt=0, description="instances in the whole model (layers x experts)")
    bias: bool
    hf_name: str = Field(
        default="",
        description="name of the module in the Hugging Face implementation; several entries "
        "sharing one hf_name are slices of one fused matrix (GPT-2 'c_attn', Phi-3 'qkv_proj')",
    )

    def params_each(self) -> int:
        """Parameters of one instance: weight plus optional bias."""
        return self.d_in * self.d_out + (self.d_out if self.bias else 0)

    def num_params(self) -> int:
        """Parameters of all instances."""
        return self.count * self.params_each()


class ParamBreakdown(BaseModel):
    """Parameter counts by component; `total` is their sum."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    embeddings: int = Field(
        ge=0, description="token (+ position, token type) embeddings and lm_head"
    )
    attention: int = Field(ge=0, description="attention projections, all layers")
    mlp: int = Field(ge=0, description="MLP / expert projections and MoE routers, all layers")
    norms: int = Field(ge=0, description="RMSNorm / LayerNorm weights and biases")
    other: int = Field(ge=0, description="pooler, relative attention bias tables")
    total: int = Field(ge=0, description="sum of the components")


# Limits on a model's dimensions: well beyond every published model (Llama 3.1 405B: 126 layers,
# hidden 16,384; DeepSeek-V3: 256 experts, vocabulary 129,280; 10M-token contexts), and far below
# where a typo in a config.json (10^21 layers) would make every figure meaningless.
MAX_LAYERS: Final = 10_000
MAX_WIDTH: Final = 10_000_000  # hidden, head, MLP and vocabulary sizes, head and expert counts
MAX_POSITIONS: Final = 1_000_000_000
_LAYER_KEYS = frozenset({"num_hidden_layers", "n_layer", "num_layers", "num_decoder_layers"})
_POSITION_KEYS = frozenset({"max_position_embeddings", "n_positions", "n_ctx"})


def dimension_limit(key: str) -> tuple[int, str]:
    """The largest value a config.json key (or ModelArch field) may hold, and its unit."""
    if key in _LAYER_KEYS:
        return MAX_LAYERS, "layers"
    if key in _POSITION_KEYS:
        return MAX_POSITIONS, "tokens"
    return MAX_WIDTH, "a width or count"


class ModelArch(BaseModel):
    """Dimensions of a transformer, as in its Hugging Face config.json."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="canonical id, e.g. 'meta-llama/Llama-3.1-8B'")
    name: str = Field(description="display name, e.g. 'Llama 3.1 8B'")
    family: str = Field(description="'llama', 'mistral', 'mixtral', 'qwen2', 'gemma2', ...")
    arch: ArchKind
    hidden_size: int = Field(gt=0, le=MAX_WIDTH)
    num_layers: int = Field(
        gt=0, le=MAX_LAYERS, description="decoder layers; encoder layers for T5"
    )
    num_decoder_layers: int = Field(
        default=0, ge=0, le=MAX_LAYERS, description="T5 decoder layers, else 0"
    )
    num_heads: int = Field(gt=0, le=MAX_WIDTH)
    num_kv_heads: int = Field(
        gt=0, le=MAX_WIDTH, description="key/value heads (grouped-query attention)"
    )
    head_dim: int = Field(gt=0, le=MAX_WIDTH)
    intermediate_size: int = Field(
        gt=0, le=MAX_WIDTH, description="MLP inner width (per expert for MoE)"
    )
    vocab_size: int = Field(gt=0, le=MAX_WIDTH)
    max_position_embeddings: int = Field(
        gt=0, le=MAX_POSITIONS, description="context length in tokens"
    )
    tied_embeddings: bool = Field(description="lm_head shares the input embedding matrix")
    gated_mlp: bool = Field(description="SwiGLU/GeGLU: gate, up, down; else up, down")
    num_experts: int = Field(
        default=1, gt=0, le=MAX_WIDTH, description="routed experts per MoE layer"
    )
    experts_per_token: int = Field(default=1, gt=0)
    dense_layers: int = Field(
        default=0,
        ge=0,
        description="MoE models: decoder layers with a dense MLP instead of experts (DeepSeek's "
        "first_k_dense_replace, Qwen's mlp_only_layers / decoder_sparse_step)",
    )
    dense_intermediate_size: int = Field(default=0, ge=0, description="those layers' MLP width")
    shared_expert_intermediate_size: int = Field(
        default=0,
        ge=0,
        description="width of the always-active shared expert MLP of each MoE layer (DeepSeek: "
        "n_shared_experts x moe_intermediate_size), 0 for none",
    )
    shared_expert_gate: bool = Field(
        default=False, description="Qwen2-MoE: a hidden -> 1 sigmoid gate over the shared expert"
    )
    q_lora_rank: int = Field(default=0, ge=0, description="MLA: query latent width, 0 for none")
    kv_lora_rank: int = Field(
        default=0, ge=0, description="MLA (DeepSeek-V2/V3): key/value latent width; 0: no MLA"
    )
    qk_rope_head_dim: int = Field(default=0, ge=0, description="MLA: rotary part of head_dim")
    v_head_dim: int = Field(default=0, ge=0, description="MLA: value head width")
    qk_norm: bool = Field(
        default=False, description="RMSNorm over the queries and keys (Qwen3, Gemma 3, OLMo 2)"
    )
    qk_norm_span: QKNormSpan = Field(
        default="head",
        description="what one q/k norm weight spans: 'head', one head_dim-wide weight shared by "
        "every head (Qwen3, Gemma 3); 'all_heads', one weight over the concatenated heads, "
        "q_dim and kv_dim wide (OLMo 2's q_norm / k_norm)",
    )
    fused_qkv: bool = Field(
        default=False,
        description="q, k and v are slices of one linear layer, as litgpt's GPT builds them "
        "(CausalSelfAttention.attn); the Hugging Face modules keep them apart",
    )
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    norm: NormKind
    norms_per_layer: int = Field(default=2, ge=0, description="per (encoder) layer; Gemma 2/3: 4")
    final_norm: bool = Field(default=True, description="a norm after the last layer (per stack)")
    embedding_norm: bool = Field(default=False, description="a norm after the embeddings (BERT)")
    learned_positions: bool = Field(default=False, description="max_position x hidden table")
    type_vocab_size: int = Field(default=0, ge=0, description="BERT token-type embeddings")
    pooler: bool = Field(default=False, description="BERT pooler: hidden x hidden + bias")
    relative_attention_buckets: int = Field(
        default=0, ge=0, description="T5: bucket x heads bias table in the first layer of a stack"
    )
    source: str = Field(description="where the dimensions come from, e.g. a config.json URL")
    estimated: bool = Field(default=False, description="dimensions guessed from a parameter count")
    assumptions: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _check_shape(self) -> ModelArch:
        if self.num_heads % self.num_kv_heads:
            raise ValueError(
                f"num_heads ({self.num_heads}) must be a multiple of "
                f"num_kv_heads ({self.num_kv_heads})"
            )
        if self.experts_per_token > self.num_experts:
            raise ValueError(
                f"experts_per_token ({self.experts_per_token}) must be at most "
                f"num_experts ({self.num_experts})"
            )
        if (self.arch == "encoder-decoder") != (self.num_decoder_layers > 0):
            raise ValueError("num_decoder_layers must be > 0 exactly for encoder-decoder models")
        if self.dense_layers >= self.num_layers and self.is_moe:
            raise ValueError(f"dense_layers ({self.dense_layers}) must leave a MoE layer")
        if self.dense_layers and not self.dense_intermediate_size:
            raise ValueError("dense_layers need dense_intermediate_size")
        if self.qk_norm_span != "head" and not self.qk_norm:
            raise ValueError("qk_norm_span needs qk_norm")
        if self.kv_lora_rank and not (self.v_head_dim and self.qk_rope_head_dim < self.head_dim):
            raise ValueError("MLA needs v_head_dim and a qk_rope_head_dim below head_dim")
        return self

    @property
    def q_dim(self) -> int:
        """Width of the concatenated query heads."""
        return self.num_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of the concatenated key (or value) heads."""
        return self.num_kv_heads * self.head_dim

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 1

    @property
    def is_mla(self) -> bool:
        """Multi-head latent attention (DeepSeek-V2/V3)."""
        return self.kv_lora_rank > 0

    @property
    def value_width(self) -> int:
        """Width of the concatenated value heads (MLA's v_head_dim per head)."""
        return self.num_heads * self.v_head_dim if self.is_mla else self.kv_dim

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is routed experts (all MLP layers of a dense model: 0)."""
        return self._mlp_layers() - self.dense_layers if self.is_moe else 0

    def _attention_instances(self) -> int:
        """Attention blocks: one per layer; T5 decoder layers have self- and cross-attention."""
        return self.num_layers + 2 * self.num_decoder_layers

    def _mlp_layers(self) -> int:
        return self.num_layers + self.num_decoder_layers

    def linear_modules(self) -> list[LinearModule]:
        """Every nn.Linear in the transformer blocks (what LoRA can target), one entry per name.

        Embeddings, lm_head and the BERT pooler are not included. MoE routers are ('router').
        """
        return self._attention_modules() + self._mlp_modules()

    def _attention_modules(self) -> list[LinearModule]:
        n, h = self._attention_instances(), self.hidden_size
        hf = _HF_ATTENTION_NAMES.get(self.family, {})
        shapes = self._mla_shapes() if self.is_mla else [
            ("q_proj", h, self.q_dim, self.qkv_bias),
            ("k_proj", h, self.kv_dim, self.qkv_bias),
            ("v_proj", h, self.kv_dim, self.qkv_bias),
            ("o_proj", self.q_dim, h, self.o_bias),
        ]  # fmt: skip
        if self.fused_qkv:
            hf = {**hf, "q_proj": "attn", "k_proj": "attn", "v_proj": "attn"}
        return [
            LinearModule(
                name=name,
                group="attention",
                d_in=d_in,
                d_out=d_out,
                count=n,
                bias=bias,
                hf_name=hf.get(name, name),
            )
            for name, d_in, d_out, bias in shapes
        ]

    def _mla_shapes(self) -> list[tuple[str, int, int, bool]]:
        """DeepSeek-V2/V3 multi-head latent attention: queries through an optional latent,
        keys and values through one shared latent plus a rotary key (HF modeling_deepseek_v3)."""
        h, heads, rope = self.hidden_size, self.num_heads, self.qk_rope_head_dim
        q = [("q_proj", h, self.q_dim, False)]
        if self.q_lora_rank:
            q = [("q_a_proj", h, self.q_lora_rank, False),
                 ("q_b_proj", self.q_lora_rank, self.q_dim, False)]  # fmt: skip
        return [
            *q,
            ("kv_a_proj_with_mqa", h, self.kv_lora_rank + rope, False),
            (
                "kv_b_proj",
                self.kv_lora_rank,
                heads * (self.head_dim - rope + self.v_head_dim),
                False,
            ),
            ("o_proj", self.value_width, h, False),
        ]

    def _mlp_modules(self) -> list[LinearModule]:
        gated_t5 = self.family == "t5" and self.gated_mlp  # T5 v1.1: wi_0, wi_1, wo
        hf = _HF_MLP_NAMES.get("t5-gated" if gated_t5 else self.family, {})
        routed = self._mlp_layers() - self.dense_layers
        modules = self._mlp(routed * self.num_experts, self.intermediate_size, "", hf)
        if self.is_moe:
            modules.append(self._linear("router", self.num_experts, routed, False, "gate"))
        if self.shared_expert_intermediate_size:
            modules += self._mlp(routed, self.shared_expert_intermediate_size, "shared_", {})
        if self.shared_expert_gate:
            modules.append(self._linear("shared_expert_gate", 1, routed, False, ""))
        if self.dense_layers:
            modules += self._mlp(self.dense_layers, self.dense_intermediate_size, "dense_", {})
        return modules

    def _mlp(self, count: int, inter: int, prefix: str, hf: dict[str, str]) -> list[LinearModule]:
        """One (gated) MLP's linear layers, `count` instances; `prefix` names shared-expert and
        dense-layer MLPs of MoE models, whose Hugging Face names are the plain ones."""
        h, bias = self.hidden_size, self.mlp_bias
        shapes = [("gate_proj", h, inter)] if self.gated_mlp else []
        shapes += [("up_proj", h, inter), ("down_proj", inter, h)]
        return [
            LinearModule(
                name=prefix + name, group="mlp", d_in=d_in, d_out=d_out, count=count, bias=bias,
                hf_name=hf.get(name, name),
            )
            for name, d_in, d_out in shapes
        ]  # fmt: skip

    def _linear(self, name: str, d_out: int, count: int, bias: bool, hf: str) -> LinearModule:
        """An MoE router or gate reading the hidden state."""
        h = self.hidden_size
        return LinearModule(
            name=name, group="mlp", d_in=h, d_out=d_out, count=count, bias=bias, hf_name=hf or name
        )

    def embedding_params(self) -> int:
        """Input embeddings, plus an untied lm_head, learned positions and token types."""
        rows = self.vocab_size * (1 if self.tied_embeddings else 2)
        if self.learned_positions:
            rows += self.max_position_embeddings
        rows += self.type_vocab_size
        return rows * self.hidden_size

    def norm_params(self) -> int:
        """All RMSNorm (weight) / LayerNorm (weight + bias) parameters."""
        per_norm = self.hidden_size * (2 if self.norm == "layernorm" else 1)
        norms = self.num_layers * self.norms_per_layer + int(self.final_norm)
        if self.num_decoder_layers:  # decoder layers add a norm before cross-attention
            norms += self.num_decoder_layers * (self.norms_per_layer + 1) + int(self.final_norm)
        norms += int(self.embedding_norm)
        return norms * per_norm + self.inner_norm_params()

    def inner_norm_params(self) -> int:
        """Norms of other widths than the hidden size, all layers: the q/k norms (Qwen3 and
        Gemma 3: head_dim each; OLMo 2: q_dim and kv_dim) and MLA's latent norms (q_lora_rank,
        kv_lora_rank)."""
        per_layer = 0
        if self.qk_norm and self.qk_norm_span == "head":
            per_layer = 2 * self.head_dim
        elif self.qk_norm:
            per_layer = self.q_dim + self.kv_dim
        if self.is_mla:
            per_layer += self.q_lora_rank + self.kv_lora_rank
        return per_layer * self.num_layers

    def other_params(self) -> int:
        """Pooler and T5 relative attention bias tables (first layer of each stack)."""
        pooler = self.hidden_size * self.hidden_size + self.hidden_size if self.pooler else 0
        stacks = 2 if self.num_decoder_layers else 1
        relative = stacks * self.relative_attention_buckets * self.num_heads
        return pooler + relative

    def param_breakdown(self) -> ParamBreakdown:
        """Parameters by component, all experts included."""
        modules = self.linear_modules()
        attention = sum(m.num_params() for m in modules if m.group == "attention")
        mlp = sum(m.num_params() for m in modules if m.group == "mlp")
        parts = {
            "embeddings": self.embedding_params(),
            "attention": attention,
            "mlp": mlp,
            "norms": self.norm_params(),
            "other": self.other_params(),
        }
        return ParamBreakdown(**parts, total=sum(parts.values()))

    def total_params(self) -> int:
        """All parameters, every expert included: what has to sit in memory."""
        return self.param_breakdown().total

    def expert_params(self) -> int:
        """Parameters of one routed expert's MLP in one layer (the whole MLP for dense models)."""
        return sum(m.params_each() for m in self._mlp(1, self.intermediate_size, "", {}))

    def active_params(self) -> int:
        """Parameters used for one token: MoE models run `experts_per_token` of their routed
        experts per MoE layer (shared experts and dense layers always run)."""
        idle_experts = self.num_experts - self.experts_per_token
        layers = self._mlp_layers() - self.dense_layers
        return self.total_params() - idle_experts * layers * self.expert_params()


# Real module names in the Hugging Face implementations, where they differ from the Llama ones.
_HF_ATTENTION_NAMES: dict[str, dict[str, str]] = {
    "gpt2": {"q_proj": "c_attn", "k_proj": "c_attn", "v_proj": "c_attn", "o_proj": "attn.c_proj"},
    "bert": {
        "q_proj": "query",
        "k_proj": "key",
        "v_proj": "value",
        "o_proj": "attention.output.dense",
    },
    "t5": {"q_proj": "q", "k_proj": "k", "v_proj": "v", "o_proj": "o"},
    "phi3": {"q_proj": "qkv_proj", "k_proj": "qkv_proj", "v_proj": "qkv_proj"},
}
_HF_MLP_NAMES: dict[str, dict[str, str]] = {
    "gpt2": {"up_proj": "c_fc", "down_proj": "mlp.c_proj"},
    "bert": {"up_proj": "intermediate.dense", "down_proj": "output.dense"},
    "t5": {"up_proj": "wi", "down_proj": "wo"},
    "t5-gated": {"gate_proj": "wi_0", "up_proj": "wi_1", "down_proj": "wo"},
    "phi3": {"gate_proj": "gate_up_proj", "up_proj": "gate_up_proj"},
    # Names in the released checkpoints (experts.N.w1); transformers 5 fuses the experts into
    # 3-D parameters (experts.gate_up_proj, experts.down_proj) that are not nn.Linear modules.
    "mixtral": {"gate_proj": "w1", "up_proj": "w3", "down_proj": "w2"},
}
