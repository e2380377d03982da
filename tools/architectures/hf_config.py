"""Read (and write) Hugging Face config.json files as `ModelArch`.

Only plain JSON is read: no remote code, no pickles, nothing downloaded. Each supported
`model_type` (SUPPORTED_MODEL_TYPES) names its keys the way its transformers config class does,
mixture-of-experts and latent-attention fields included; any other type is an error naming the
supported ones, never a Llama-shaped guess (a 60-expert Qwen2-MoE read as dense would be 1.9B
parameters instead of 14.3B). Defaults below are those of the transformers config classes (e.g.
`LlamaConfig.tie_word_embeddings = False`, `Gemma2Config.tie_word_embeddings = True`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tools.architectures.architecture import ModelArch, dimension_limit
from tools.errors import InvalidInputError

MAX_CONFIG_BYTES = 1 << 20  # 1 MiB; real config.json files are a few kilobytes

_LLAMA_KEYS = (
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "vocab_size",
)
# model_type -> (family, tied embeddings default, norms per layer, q/k/v bias always on), from
# each transformers config class's defaults (e.g. GemmaConfig.tie_word_embeddings = True,
# Qwen2MoeAttention's q/k/v biases).
_DECODERS: dict[str, tuple[str, bool, int, bool]] = {
    "llama": ("llama", False, 2, False),
    "mistral": ("mistral", False, 2, False),
    "mixtral": ("mixtral", False, 2, False),
    "qwen2": ("qwen2", False, 2, True),
    "qwen3": ("qwen3", False, 2, False),
    "gemma": ("gemma", True, 2, False),
    "gemma2": ("gemma2", True, 4, False),
    "phi3": ("phi3", False, 2, False),
    "qwen2_moe": ("qwen2_moe", False, 2, True),
    "qwen3_moe": ("qwen3_moe", False, 2, False),
    "deepseek_v2": ("deepseek_v2", False, 2, False),
    "deepseek_v3": ("deepseek_v3", False, 2, False),
    "gemma3_text": ("gemma3_text", True, 4, False),
    "olmo2": ("olmo2", False, 2, False),
}
SUPPORTED_MODEL_TYPES = (*_DECODERS, "gpt2", "bert", "t5")


def _require(config: dict[str, Any], keys: tuple[str, ...], what: str) -> None:
    """The keys a reader needs are present and hold positive integers within the limits a real
    model has (`ModelArch`'s: layers, positions, every width)."""
    missing = [key for key in keys if key not in config]
    if missing:
        raise InvalidInputError(
            "config.json", what, f"a config with the keys {', '.join(missing)} (missing)"
        )
    for key in keys:
        value = config[key]
        limit, unit = dimension_limit(key)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= limit:
            raise InvalidInputError(
                f"config.json {key}", value, f"a positive integer up to {limit:,} ({unit})"
            )


def _read_decoder(cfg: dict[str, Any], model_type: str) -> dict[str, Any]:
    if model_type not in _DECODERS:
        raise InvalidInputError(
            "config.json model_type",
            model_type or None,
            f"one of the supported types: {', '.join(SUPPORTED_MODEL_TYPES)} (other architectures"
            " are not read, so that a mixture-of-experts or hybrid model is never counted as a"
            " dense one)",
        )
    family, tied, norms, qkv_bias = _DECODERS[model_type]
    _require(cfg, _LLAMA_KEYS, f"model_type {model_type!r}")
    heads = cfg["num_attention_heads"]
    attention_bias = bool(cfg.get("attention_bias", False))
    return {
        "family": family,
        "arch": "decoder",
        "hidden_size": cfg["hidden_size"],
        "num_layers": cfg["num_hidden_layers"],
        "num_heads": heads,
        "num_kv_heads": cfg.get("num_key_value_heads") or heads,
        "head_dim": cfg.get("head_dim") or cfg["hidden_size"] // heads,
        "intermediate_size": cfg["intermediate_size"],
        "vocab_size": cfg["vocab_size"],
        "max_position_embeddings": cfg.get("max_position_embeddings", 2048),
        "tied_embeddings": cfg.get("tie_word_embeddings", tied),
        "gated_mlp": True,
        "qkv_bias": qkv_bias or attention_bias,
        "o_bias": attention_bias,
        "mlp_bias": bool(cfg.get("mlp_bias", False)),
        "norm": "rmsnorm",
        "norms_per_layer": norms,
        **_qk_norm_fields(model_type),
        **_moe_fields(cfg, model_type),
        **_mla_fields(cfg, model_type),
    }


def _qk_norm_fields(model_type: str) -> dict[str, Any]:
    """Query/key RMSNorms: Qwen3, Qwen3-MoE and Gemma 3 norm each head (one head_dim weight);
    OLMo 2 norms the concatenated heads (Olmo2Attention.q_norm is q_dim wide, k_norm kv_dim)."""
    if model_type == "olmo2":
        return {"qk_norm": True, "qk_norm_span": "all_heads"}
    return {"qk_norm": model_type in ("qwen3", "qwen3_moe", "gemma3_text")}


def _moe_fields(cfg: dict[str, Any], model_type: str) -> dict[str, Any]:
    """Experts, top-k, dense layers and shared experts as each MoE config names them.

    Qwen2-MoE / Qwen3-MoE (Qwen2MoeConfig, Qwen3MoeConfig): `num_experts`, expert width
    `moe_intermediate_size`, a layer is MoE when it is not in `mlp_only_layers` and
    (index + 1) % `decoder_sparse_step` == 0, the rest use `intermediate_size`; Qwen2-MoE adds a
    shared expert of `shared_expert_intermediate_size` with a sigmoid gate. DeepSeek-V2/V3:
    `n_routed_experts`, the first `first_k_dense_replace` layers and those off `moe_layer_freq`
    are dense, `n_shared_experts` x `moe_intermediate_size` of shared experts (V3's per-expert
    `e_score_correction_bias` is a buffer, not a parameter, in transformers' DeepseekV3TopkRouter).
    Mixtral: `num_local_experts` of `intermediate_size`.
    """
    if model_type == "mixtral":
        local = int(cfg.get("num_local_experts", 8))
        return {"num_experts": local, "experts_per_token": int(cfg.get("num_experts_per_tok", 2))}
    if model_type not in ("qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3"):
        return {}
    deepseek = model_type.startswith("deepseek")
    experts = cfg.get("n_routed_experts") if deepseek else cfg.get("num_experts")
    _require(cfg, ("moe_intermediate_size", "num_experts_per_tok"), f"model_type {model_type!r}")
    layers = int(cfg["num_hidden_layers"])
    moe = [_is_moe_layer(cfg, i, deepseek) for i in range(layers)]
    width = int(cfg["moe_intermediate_size"])
    if deepseek:
        shared = int(cfg.get("n_shared_experts") or 0) * width
    else:
        shared = int(cfg.get("shared_expert_intermediate_size") or 0)
    return {
        "num_experts": int(experts or 1),
        "experts_per_token": int(cfg["num_experts_per_tok"]),
        "intermediate_size": width,
        "dense_layers": layers - sum(moe),
        "dense_intermediate_size": int(cfg["intermediate_size"]) if not all(moe) else 0,
        "shared_expert_intermediate_size": shared,
        "shared_expert_gate": model_type == "qwen2_moe" and shared > 0,
    }


def _is_moe_layer(cfg: dict[str, Any], index: int, deepseek: bool) -> bool:
    if deepseek:
        first_dense = int(cfg.get("first_k_dense_replace") or 0)
        freq = int(cfg.get("moe_layer_freq") or 1)
        return index >= first_dense and index % freq == 0
    step = int(cfg.get("decoder_sparse_step") or 1)
    return index not in (cfg.get("mlp_only_layers") or []) and (index + 1) % step == 0


def _mla_fields(cfg: dict[str, Any], model_type: str) -> dict[str, Any]:
    """DeepSeek-V2/V3 multi-head latent attention: q/k heads are qk_nope + qk_rope wide, values
    v_head_dim; `q_lora_rank` null means a plain query projection."""
    if not model_type.startswith("deepseek"):
        return {}
    _require(cfg, ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"),
             f"model_type {model_type!r}")  # fmt: skip
    heads = int(cfg["num_attention_heads"])
    return {
        "num_kv_heads": heads,
        "head_dim": int(cfg["qk_nope_head_dim"]) + int(cfg["qk_rope_head_dim"]),
        "q_lora_rank": int(cfg.get("q_lora_rank") or 0),
        "kv_lora_rank": int(cfg["kv_lora_rank"]),
        "qk_rope_head_dim": int(cfg["qk_rope_head_dim"]),
        "v_head_dim": int(cfg["v_head_dim"]),
    }


def _read_gpt2(cfg: dict[str, Any]) -> dict[str, Any]:
    _require(cfg, ("n_embd", "n_layer", "n_head", "vocab_size"), "model_type 'gpt2'")
    hidden, heads = cfg["n_embd"], cfg["n_head"]
    return {
        "family": "gpt2",
        "arch": "decoder",
        "hidden_size": hidden,
        "num_layers": cfg["n_layer"],
        "num_heads": heads,
        "num_kv_heads": heads,
        "head_dim": hidden // heads,
        "intermediate_size": cfg.get("n_inner") or 4 * hidden,
        "vocab_size": cfg["vocab_size"],
        "max_position_embeddings": cfg.get("n_positions", 1024),
        "tied_embeddings": cfg.get("tie_word_embeddings", True),
        "gated_mlp": False,
        **dict.fromkeys(("qkv_bias", "o_bias", "mlp_bias", "learned_positions"), True),
        "norm": "layernorm",
    }


def _read_bert(cfg: dict[str, Any]) -> dict[str, Any]:
    _require(cfg, _LLAMA_KEYS, "model_type 'bert'")
    hidden, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    return {
        "family": "bert",
        "arch": "encoder",
        "hidden_size": hidden,
        "num_layers": cfg["num_hidden_layers"],
        "num_heads": heads,
        "num_kv_heads": heads,
        "head_dim": hidden // heads,
        "intermediate_size": cfg["intermediate_size"],
        "vocab_size": cfg["vocab_size"],
        "max_position_embeddings": cfg.get("max_position_embeddings", 512),
        "tied_embeddings": True,  # BertModel has no lm_head; nothing extra to count
        "gated_mlp": False,
        **dict.fromkeys(("qkv_bias", "o_bias", "mlp_bias", "learned_positions"), True),
        "type_vocab_size": cfg.get("type_vocab_size", 2),
        "pooler": True,
        "embedding_norm": True,
        "final_norm": False,
        "norm": "layernorm",
    }


def _read_t5(cfg: dict[str, Any]) -> dict[str, Any]:
    _require(cfg, ("d_model", "num_layers", "num_heads", "d_kv", "d_ff", "vocab_size"), "'t5'")
    heads = cfg["num_heads"]
    return {
        "family": "t5",
        "arch": "encoder-decoder",
        "hidden_size": cfg["d_model"],
        "num_layers": cfg["num_layers"],
        "num_decoder_layers": cfg.get("num_decoder_layers") or cfg["num_layers"],
        "num_heads": heads,
        "num_kv_heads": heads,
        "head_dim": cfg["d_kv"],
        "intermediate_size": cfg["d_ff"],
        "vocab_size": cfg["vocab_size"],
        "max_position_embeddings": cfg.get("n_positions", 512),
        "tied_embeddings": cfg.get("tie_word_embeddings", True),
        "gated_mlp": str(cfg.get("feed_forward_proj", "relu")).startswith("gated-"),
        "relative_attention_buckets": cfg.get("relative_attention_num_buckets", 32),
        "norm": "rmsnorm",
    }


def _load_json(path: Path) -> dict[str, Any]:
    """Parse at most MAX_CONFIG_BYTES of JSON; the read is capped, not just the reported size."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise InvalidInputError("config.json", str(path), "an existing readable file") from exc
    if len(raw) > MAX_CONFIG_BYTES:
        raise InvalidInputError(
            "config.json", str(path), f"a JSON file of at most {MAX_CONFIG_BYTES} bytes (1 MiB)"
        )
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInputError("config.json", str(path), f"valid UTF-8 JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise InvalidInputError("config.json", str(path), "a JSON object at the top level")
    return data


def model_from_hf_config(path: Path | str) -> ModelArch:
    """The architecture described by a local Hugging Face config.json (read as JSON only)."""
    path = Path(path)
    cfg = _load_json(path)
    model_type = str(cfg.get("model_type", ""))
    if model_type == "gpt2":
        fields = _read_gpt2(cfg)
    elif model_type == "bert":
        fields = _read_bert(cfg)
    elif model_type == "t5":
        fields = _read_t5(cfg)
    else:
        fields = _read_decoder(cfg, model_type)
    name = str(cfg.get("_name_or_path") or path.resolve().parent.name or path.stem)
    try:
        return ModelArch(id=name, name=name, source=f"local config.json: {path}", **fields)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise InvalidInputError(
            "config.json", str(path), f"consistent dimensions ({problems})"
        ) from exc


def to_hf_config(arch: ModelArch) -> dict[str, Any]:
    """A config.json dict for `arch` in its family's key names; model_from_hf_config reads it."""
    if arch.family == "gpt2":
        return {
            "model_type": "gpt2", "n_embd": arch.hidden_size, "n_layer": arch.num_layers,
            "n_head": arch.num_heads, "n_inner": arch.intermediate_size,
            "vocab_size": arch.vocab_size, "n_positions": arch.max_position_embeddings,
            "tie_word_embeddings": arch.tied_embeddings,
        }  # fmt: skip
    if arch.family == "t5":
        return {
            "model_type": "t5", "d_model": arch.hidden_size, "num_layers": arch.num_layers,
            "num_decoder_layers": arch.num_decoder_layers, "num_heads": arch.num_heads,
            "d_kv": arch.head_dim, "d_ff": arch.intermediate_size, "vocab_size": arch.vocab_size,
            "relative_attention_num_buckets": arch.relative_attention_buckets,
            "feed_forward_proj": "gated-gelu" if arch.gated_mlp else "relu",
            "tie_word_embeddings": arch.tied_embeddings,
        }  # fmt: skip
    config: dict[str, Any] = {
        "model_type": arch.family, "hidden_size": arch.hidden_size,
        "num_hidden_layers": arch.num_layers, "num_attention_heads": arch.num_heads,
        "num_key_value_heads": arch.num_kv_heads, "head_dim": arch.head_dim,
        "intermediate_size": arch.intermediate_size, "vocab_size": arch.vocab_size,
        "max_position_embeddings": arch.max_position_embeddings,
        "tie_word_embeddings": arch.tied_embeddings,
    }  # fmt: skip
    if arch.family == "bert":
        config["type_vocab_size"] = arch.type_vocab_size
    config |= _moe_config(arch) | _mla_config(arch)
    if arch.family in ("llama", "mistral") and arch.qkv_bias:
        config["attention_bias"] = True
    return config


def _moe_config(arch: ModelArch) -> dict[str, Any]:
    """The experts in the family's own key names (the inverse of `_moe_fields`)."""
    if not arch.is_moe:
        return {}
    if arch.family == "mixtral":
        return {
            "num_local_experts": arch.num_experts,
            "num_experts_per_tok": arch.experts_per_token,
        }
    out: dict[str, Any] = {
        "num_experts_per_tok": arch.experts_per_token,
        "moe_intermediate_size": arch.intermediate_size,
        "intermediate_size": arch.dense_intermediate_size or arch.intermediate_size,
    }
    if arch.family.startswith("deepseek"):
        shared = arch.shared_expert_intermediate_size // arch.intermediate_size
        return out | {
            "n_routed_experts": arch.num_experts, "n_shared_experts": shared,
            "first_k_dense_replace": arch.dense_layers, "moe_layer_freq": 1,
        }  # fmt: skip
    return out | {
        "num_experts": arch.num_experts,
        "mlp_only_layers": list(range(arch.dense_layers)),
        "shared_expert_intermediate_size": arch.shared_expert_intermediate_size,
    }


def _mla_config(arch: ModelArch) -> dict[str, Any]:
    if not arch.is_mla:
        return {}
    return {
        "q_lora_rank": arch.q_lora_rank or None, "kv_lora_rank": arch.kv_lora_rank,
        "qk_nope_head_dim": arch.head_dim - arch.qk_rope_head_dim,
        "qk_rope_head_dim": arch.qk_rope_head_dim, "v_head_dim": arch.v_head_dim,
    }  # fmt: skip
