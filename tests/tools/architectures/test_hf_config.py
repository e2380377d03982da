"""Reading Hugging Face config.json files: published layouts, round trips, and bad input."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from tools.architectures.architecture import ModelArch
from tools.architectures.hf_config import MAX_CONFIG_BYTES, model_from_hf_config, to_hf_config
from tools.architectures.registry import list_models, lookup_model
from tools.errors import InvalidInputError


def _write(tmp_path: Path, config: Any, name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


# Configs laid out as published on the Hugging Face hub (keys the reader needs plus some it must
# ignore); each must give the registry's exact count for that model.
PUBLISHED = [
    (
        {
            "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
            "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32,
            "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
            "rope_scaling": {"factor": 8.0, "rope_type": "llama3"}, "rope_theta": 500000.0,
            "tie_word_embeddings": False, "torch_dtype": "bfloat16", "attention_bias": False,
            "mlp_bias": False, "rms_norm_eps": 1e-05,
        },
        8_030_261_248,
    ),
    (
        {
            "model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
            "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
            "vocab_size": 151936, "max_position_embeddings": 32768, "tie_word_embeddings": True,
            "sliding_window": 32768, "use_sliding_window": False,
        },
        494_032_768,
    ),
    (
        {
            "model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
            "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
            "vocab_size": 32000, "max_position_embeddings": 32768, "num_local_experts": 8,
            "num_experts_per_tok": 2, "router_aux_loss_coef": 0.02,
        },
        46_702_792_704,
    ),
    (
        {
            "model_type": "gemma2", "hidden_size": 2304, "intermediate_size": 9216,
            "num_attention_heads": 8, "num_hidden_layers": 26, "num_key_value_heads": 4,
            "head_dim": 256, "vocab_size": 256000, "max_position_embeddings": 8192,
            "final_logit_softcapping": 30.0, "query_pre_attn_scalar": 256,
        },  # no tie_word_embeddings key: Gemma 2 ties by default
        2_614_341_888,
    ),
    (
        {
            "model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12, "n_inner": None,
            "n_positions": 1024, "n_ctx": 1024, "vocab_size": 50257,
            "activation_function": "gelu_new",
        },
        124_439_808,
    ),
    (
        {
            "model_type": "bert", "hidden_size": 768, "intermediate_size": 3072,
            "num_attention_heads": 12, "num_hidden_layers": 12, "vocab_size": 30522,
            "max_position_embeddings": 512, "type_vocab_size": 2, "hidden_act": "gelu",
        },
        109_482_240,
    ),
    (
        {
            "model_type": "t5", "d_model": 768, "d_ff": 3072, "d_kv": 64, "num_heads": 12,
            "num_layers": 12, "vocab_size": 32128, "n_positions": 512,
            "relative_attention_num_buckets": 32, "feed_forward_proj": "relu",
        },
        222_903_552,
    ),
]  # fmt: skip


@pytest.mark.parametrize(("config", "expected"), PUBLISHED, ids=lambda v: str(v)[:30])
def test_published_layouts(tmp_path: Path, config: dict[str, Any], expected: int) -> None:
    arch = model_from_hf_config(_write(tmp_path, config))
    assert arch.total_params() == expected, f"{config['model_type']}: {arch.total_params():,}"
    assert arch.source == f"local config.json: {tmp_path / 'config.json'}", "source names the file"


def _dims(arch: ModelArch) -> dict[str, Any]:
    return arch.model_dump(exclude={"id", "name", "source"})


@pytest.mark.parametrize("arch", list_models(), ids=lambda a: a.id)
def test_round_trip_every_builtin(tmp_path: Path, arch: ModelArch) -> None:
    parsed = model_from_hf_config(_write(tmp_path, to_hf_config(arch)))
    assert _dims(parsed) == _dims(arch), f"{arch.id}: dimensions survive config.json"
    assert parsed.total_params() == arch.total_params(), f"{arch.id}: same count"


def test_name_comes_from_name_or_path(tmp_path: Path) -> None:
    config = {**to_hf_config(lookup_model("llama 3.2 1b")), "_name_or_path": "me/tiny-llama"}
    arch = model_from_hf_config(_write(tmp_path, config))
    assert (arch.id, arch.name) == ("me/tiny-llama", "me/tiny-llama"), "named after the checkpoint"


@pytest.mark.parametrize("model_type", ["new_arch", "mamba", "jamba", "", "falcon_h1"])
def test_unsupported_model_type_is_an_error_naming_the_supported(
    tmp_path: Path, model_type: str
) -> None:
    """Never a silent Llama-shaped reading: an unknown type could be MoE, hybrid or SSM."""
    config = {**to_hf_config(lookup_model("meta-llama/Llama-2-7b-hf")), "model_type": model_type}
    supported = r"llama, mistral, mixtral, qwen2, qwen3, gemma, gemma2, phi3, qwen2_moe"
    with pytest.raises(InvalidInputError, match=rf"model_type.*valid: one of the .*{supported}"):
        model_from_hf_config(_write(tmp_path, config))


# Mixture-of-experts configs as published (the keys the transformers config classes read), with
# each model's official total and active counts: Qwen1.5-MoE-A2.7B "14.3B parameters, 2.7B
# activated"; Qwen3-30B-A3B "30.5B, 3.3B activated"; DeepSeek-V2-Lite "15.7B total"; DeepSeek-V3
# "671B total parameters with 37B activated" (its 14B multi-token-prediction module is not part of
# the HF model and is not counted).
MOE_CONFIGS = [
    (
        {
            "model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632,
            "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16,
            "vocab_size": 151936, "num_experts": 60, "num_experts_per_tok": 4,
            "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
            "decoder_sparse_step": 1, "mlp_only_layers": [], "tie_word_embeddings": False,
            "max_position_embeddings": 8192,
        },
        14_315_784_192, 2_689_173_504,
    ),
    (
        {
            "model_type": "qwen3_moe", "hidden_size": 2048, "intermediate_size": 6144,
            "moe_intermediate_size": 768, "num_hidden_layers": 48, "num_attention_heads": 32,
            "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936,
            "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1,
            "mlp_only_layers": [], "tie_word_embeddings": False, "attention_bias": False,
        },
        30_532_122_624, 3_353_032_704,
    ),
    (
        {
            "model_type": "deepseek_v2", "hidden_size": 2048, "intermediate_size": 10944,
            "num_hidden_layers": 27, "num_attention_heads": 16, "num_key_value_heads": 16,
            "vocab_size": 102400, "q_lora_rank": None, "kv_lora_rank": 512,
            "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
            "n_routed_experts": 64, "num_experts_per_tok": 6, "n_shared_experts": 2,
            "moe_intermediate_size": 1408, "first_k_dense_replace": 1, "moe_layer_freq": 1,
            "tie_word_embeddings": False,
        },
        15_706_484_224, 2_661_150_208,
    ),
    (
        {
            "model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432,
            "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128,
            "vocab_size": 129280, "q_lora_rank": 1536, "kv_lora_rank": 512,
            "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
            "n_routed_experts": 256, "num_experts_per_tok": 8, "n_shared_experts": 1,
            "moe_intermediate_size": 2048, "first_k_dense_replace": 3, "moe_layer_freq": 1,
            "num_nextn_predict_layers": 1, "tie_word_embeddings": False,
        },
        671_026_404_352, 37_552_282_624,
    ),
]  # fmt: skip


@pytest.mark.parametrize(("config", "total", "active"), MOE_CONFIGS,
                         ids=[c["model_type"] for c, _, _ in MOE_CONFIGS])  # fmt: skip
def test_moe_configs_are_read_as_moe(
    tmp_path: Path, config: dict[str, Any], total: int, active: int
) -> None:
    arch = model_from_hf_config(_write(tmp_path, config))
    assert arch.is_moe, f"{config['model_type']}: experts read"
    assert arch.total_params() == total, f"{config['model_type']}: {arch.total_params():,}"
    assert arch.active_params() == active, f"{config['model_type']}: {arch.active_params():,}"
    assert (
        abs(arch.total_params() - lookup_model(f"{_REGISTRY[config['model_type']]}").total_params())
        == 0
    )


_REGISTRY = {
    "qwen2_moe": "Qwen/Qwen1.5-MoE-A2.7B",
    "qwen3_moe": "Qwen/Qwen3-30B-A3B",
    "deepseek_v2": "deepseek-ai/DeepSeek-V2-Lite",
    "deepseek_v3": "deepseek-ai/DeepSeek-V3",
}


# Dense configs with q/k norms, keys as in the published config.json files (tie_word_embeddings
# left out where the file leaves it out: Gemma3TextConfig ties by default, Olmo2Config does not).
QK_NORM_CONFIGS = [
    (
        {
            "model_type": "olmo2", "hidden_size": 5120, "intermediate_size": 13824,
            "num_hidden_layers": 40, "num_attention_heads": 40, "num_key_value_heads": 40,
            "vocab_size": 100352, "max_position_embeddings": 4096, "attention_bias": False,
            "tie_word_embeddings": False,
        },
        "allenai/OLMo-2-1124-13B", 13_716_198_400,
    ),
    (
        {
            "model_type": "gemma3_text", "hidden_size": 1152, "intermediate_size": 6912,
            "num_hidden_layers": 26, "num_attention_heads": 4, "num_key_value_heads": 1,
            "head_dim": 256, "vocab_size": 262144, "max_position_embeddings": 32768,
            "sliding_window": 512, "sliding_window_pattern": 6, "attention_bias": False,
        },
        "google/gemma-3-1b-pt", 999_885_952,
    ),
    (
        {
            "model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288,
            "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
            "head_dim": 128, "vocab_size": 151936, "max_position_embeddings": 40960,
            "tie_word_embeddings": False, "attention_bias": False,
        },
        "Qwen/Qwen3-8B", 8_190_735_360,
    ),
]  # fmt: skip


@pytest.mark.parametrize(("config", "model_id", "total"), QK_NORM_CONFIGS,
                         ids=[c["model_type"] for c, _, _ in QK_NORM_CONFIGS])  # fmt: skip
def test_qk_norm_configs(tmp_path: Path, config: dict[str, Any], model_id: str, total: int) -> None:
    arch = model_from_hf_config(_write(tmp_path, config))
    assert arch.qk_norm, f"{config['model_type']}: q/k norms read"
    assert arch.total_params() == total, f"{config['model_type']}: {arch.total_params():,}"
    assert _dims(arch) == _dims(lookup_model(model_id)), f"{model_id}: the registry's dimensions"


def test_qwen2_moe_sparse_step_and_dense_layers(tmp_path: Path) -> None:
    """decoder_sparse_step 2 and mlp_only_layers [0]: layers 1, 3, 5 are MoE, the rest dense."""
    config = {**MOE_CONFIGS[0][0], "num_hidden_layers": 6, "decoder_sparse_step": 2,
              "mlp_only_layers": [1]}  # fmt: skip
    arch = model_from_hf_config(_write(tmp_path, config))
    assert (arch.dense_layers, arch.moe_layers) == (4, 2), "MoE at (i + 1) % 2 == 0, not i = 1"
    assert arch.dense_intermediate_size == 5632, "dense layers use intermediate_size"


def test_missing_gpt2_keys_are_named(tmp_path: Path) -> None:
    path = _write(tmp_path, {"model_type": "gpt2", "n_embd": 768, "vocab_size": 50257})
    with pytest.raises(InvalidInputError, match=r"keys n_layer, n_head \(missing\)"):
        model_from_hf_config(path)


def test_oversize_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"pad": "' + "x" * MAX_CONFIG_BYTES + '"}', encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"a JSON file of at most 1048576 bytes"):
        model_from_hf_config(path)


def test_invalid_json(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama",', encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"valid UTF-8 JSON"):
        model_from_hf_config(path)


def test_pickle_is_not_loaded(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(pickle.dumps({"model_type": "llama"}))
    with pytest.raises(InvalidInputError, match=r"valid UTF-8 JSON"):
        model_from_hf_config(path)


def test_top_level_must_be_an_object(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"a JSON object at the top level"):
        model_from_hf_config(_write(tmp_path, [1, 2, 3]))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"an existing readable file"):
        model_from_hf_config(tmp_path / "absent.json")


def test_inconsistent_dimensions(tmp_path: Path) -> None:
    config = {**to_hf_config(lookup_model("mistral 7b")), "num_key_value_heads": 5}
    with pytest.raises(InvalidInputError, match=r"consistent dimensions .*num_heads \(32\)"):
        model_from_hf_config(_write(tmp_path, config))


def test_wrong_value_type(tmp_path: Path) -> None:
    config = {**to_hf_config(lookup_model("mistral 7b")), "hidden_size": "big"}
    del config["head_dim"]
    with pytest.raises(
        InvalidInputError, match=r"config.json hidden_size: got 'big'; valid: a pos"
    ):
        model_from_hf_config(_write(tmp_path, config))


def test_wrong_optional_value_type(tmp_path: Path) -> None:
    config = {**to_hf_config(lookup_model("mistral 7b")), "num_key_value_heads": 2.5}
    with pytest.raises(InvalidInputError, match=r"consistent dimensions \(num_kv_heads: Input"):
        model_from_hf_config(_write(tmp_path, config))


@pytest.mark.parametrize(
    ("key", "value", "valid"),
    [
        ("num_hidden_layers", 10**21, "a positive integer up to 10,000 (layers)"),
        ("hidden_size", 10**8, "a positive integer up to 10,000,000 (a width or count)"),
        ("vocab_size", 2**63, "a positive integer up to 10,000,000 (a width or count)"),
    ],
)
def test_dimensions_beyond_any_real_model_are_refused_naming_the_key(
    tmp_path: Path, key: str, value: int, valid: str
) -> None:
    """A typo such as 10^21 layers is refused at the file, naming the key, instead of sizing a
    model no figure of which means anything (issue 26: it broke the web session)."""
    config = {**to_hf_config(lookup_model("mistral 7b")), key: value}
    with pytest.raises(InvalidInputError) as caught:
        model_from_hf_config(_write(tmp_path, config))
    assert (caught.value.field, caught.value.valid) == (f"config.json {key}", valid)


def test_the_largest_published_dimensions_still_read(tmp_path: Path) -> None:
    for name in ("llama 3.1 405b", "deepseek v3"):
        arch = lookup_model(name)
        read = model_from_hf_config(_write(tmp_path, to_hf_config(arch)))
        assert read.total_params() == arch.total_params(), name
