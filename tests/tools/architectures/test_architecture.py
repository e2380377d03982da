"""Parameter counts computed from dimensions, checked against exact published figures."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from tools.architectures.architecture import LinearModule, ModelArch
from tools.architectures.registry import list_models, lookup_model

# Exact total parameter counts (all experts included).
# "safetensors": the parameter total on the model's Hugging Face page (safetensors metadata), as
#   quoted in the issue.
# "shapes": the sum of tensor shapes implied by the published config.json, worked out by hand and
#   cross-checked by test_counts_match_transformers below, which instantiates transformers' own
#   class for the same config on the meta device. BERT is BertModel (with pooler, no MLM head);
#   T5 is T5ForConditionalGeneration with the lm_head tied to the shared embedding (t5 v1.0).
EXPECTED_TOTALS = [
    ("meta-llama/Llama-2-7b-hf", 6_738_415_616, "shapes"),
    ("meta-llama/Llama-2-13b-hf", 13_015_864_320, "shapes"),
    ("meta-llama/Llama-2-70b-hf", 68_976_648_192, "shapes"),
    ("meta-llama/Llama-3.1-8B", 8_030_261_248, "safetensors"),
    ("meta-llama/Llama-3.1-70B", 70_553_706_496, "shapes"),
    ("meta-llama/Llama-3.3-70B-Instruct", 70_553_706_496, "shapes"),
    ("meta-llama/Llama-3.1-405B", 405_853_388_800, "shapes"),
    ("meta-llama/Llama-3.2-1B", 1_235_814_400, "shapes"),
    ("meta-llama/Llama-3.2-3B", 3_212_749_824, "shapes"),
    ("mistralai/Mistral-7B-v0.1", 7_241_732_096, "safetensors"),
    ("mistralai/Mixtral-8x7B-v0.1", 46_702_792_704, "shapes"),
    ("mistralai/Mixtral-8x22B-v0.1", 140_620_634_112, "shapes"),
    ("Qwen/Qwen1.5-MoE-A2.7B", 14_315_784_192, "shapes; model card: 14.3B total, 2.7B active"),
    ("Qwen/Qwen2-57B-A14B", 57_408_658_944, "shapes; model card: 57B total, 14B active"),
    ("Qwen/Qwen3-30B-A3B", 30_532_122_624, "shapes; model card: 30.5B total, 3.3B active"),
    ("deepseek-ai/DeepSeek-V2-Lite", 15_706_484_224, "shapes; model card: 15.7B total"),
    ("deepseek-ai/DeepSeek-V3", 671_026_404_352, "shapes; model card: 671B (MTP module apart)"),
    ("Qwen/Qwen2.5-0.5B", 494_032_768, "shapes"),
    ("Qwen/Qwen2.5-1.5B", 1_543_714_304, "shapes"),
    ("Qwen/Qwen2.5-3B", 3_085_938_688, "shapes"),
    ("Qwen/Qwen2.5-7B", 7_615_616_512, "shapes"),
    ("Qwen/Qwen2.5-14B", 14_770_033_664, "shapes"),
    ("Qwen/Qwen2.5-32B", 32_763_876_352, "shapes"),
    ("Qwen/Qwen2.5-72B", 72_706_203_648, "shapes"),
    ("Qwen/Qwen2.5-Coder-7B", 7_615_616_512, "shapes"),
    ("Qwen/Qwen2.5-Coder-14B", 14_770_033_664, "shapes"),
    ("Qwen/Qwen2.5-Coder-32B", 32_763_876_352, "shapes"),
    ("google/gemma-2-2b", 2_614_341_888, "shapes"),
    ("google/gemma-2-9b", 9_241_705_984, "shapes"),
    ("google/gemma-2-27b", 27_227_128_320, "shapes"),
    ("microsoft/Phi-3-mini-4k-instruct", 3_821_079_552, "shapes"),
    ("microsoft/Phi-3-medium-4k-instruct", 13_960_238_080, "shapes"),
    ("openai-community/gpt2", 124_439_808, "shapes"),
    ("openai-community/gpt2-medium", 354_823_168, "shapes"),
    ("openai-community/gpt2-large", 774_030_080, "shapes"),
    ("openai-community/gpt2-xl", 1_557_611_200, "shapes"),
    ("google-bert/bert-base-uncased", 109_482_240, "BertModel figure quoted in the issue"),
    ("google-bert/bert-large-uncased", 335_141_888, "shapes"),
    ("google-t5/t5-base", 222_903_552, "shapes"),
    ("google-t5/t5-large", 737_668_096, "shapes"),
    ("google-t5/t5-3b", 2_851_598_336, "shapes"),
    # Added for issue 11. "published": a figure found for the checkpoint or for a checkpoint
    # of the same weights' shapes; every row is also checked against transformers below.
    ("Qwen/Qwen3-0.6B", 596_049_920, "shapes; published: 596,049,920 (Keras Hub preset)"),
    ("Qwen/Qwen3-1.7B", 1_720_574_976, "shapes; published: 1.72B (Keras Hub preset)"),
    ("Qwen/Qwen3-4B", 4_022_468_096, "shapes; model name: 4B"),
    ("Qwen/Qwen3-8B", 8_190_735_360, "shapes; model name: 8B"),
    ("Qwen/Qwen3-14B", 14_768_307_200, "shapes; model name: 14B"),
    ("Qwen/Qwen3-32B", 32_762_123_264, "shapes; model name: 32B"),
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct", 30_532_122_624,
     "shapes; published: safetensors index total_size 61,064,245,248 bytes in bf16; model card "
     "30.5B total, 3.3B active"),
    ("google/gemma-3-1b-pt", 999_885_952, "shapes; published: 999,885,952 (Keras Hub preset)"),
    ("microsoft/Phi-3.5-mini-instruct", 3_821_079_552,
     "shapes; published: 3,821,079,552 for Phi-3 mini (Keras Hub), the same shapes"),
    ("microsoft/phi-4", 14_659_507_200, "shapes; model card: 14B"),
    ("mistralai/Mistral-Nemo-Base-2407", 12_247_782_400, "shapes; model name: 12B"),
    ("mistralai/Mistral-Small-24B-Base-2501", 23_572_403_200,
     "shapes; published: 23,572,403,200 text parameters of Mistral-Small-3.2-24B, same text dims"),
    ("allenai/OLMo-2-1124-7B", 7_298_617_344, "safetensors total 7,298,617,344"),
    ("allenai/OLMo-2-1124-13B", 13_716_198_400, "safetensors total 13,716,198,400"),
    ("HuggingFaceTB/SmolLM2-135M", 134_515_008, "shapes; model name: 135M"),
    ("HuggingFaceTB/SmolLM2-360M", 361_821_120, "shapes; model name: 360M"),
    ("HuggingFaceTB/SmolLM2-1.7B", 1_711_376_384, "shapes; model name: 1.7B"),
]  # fmt: skip


def test_every_builtin_model_has_an_expected_count() -> None:
    assert sorted(m.id for m in list_models()) == sorted(row[0] for row in EXPECTED_TOTALS), (
        "the expected-count table must cover exactly the built-in registry"
    )


@pytest.mark.parametrize(("model_id", "expected", "source"), EXPECTED_TOTALS)
def test_total_params_exact(model_id: str, expected: int, source: str) -> None:
    total = lookup_model(model_id).total_params()
    assert total == expected, f"{model_id}: computed {total:,}, expected {expected:,} ({source})"


@pytest.mark.parametrize(
    ("model_id", "expected_active"),
    [
        # total minus the 6 idle experts' SwiGLU MLPs in each layer (6 * layers * 3 * h * i)
        ("mistralai/Mixtral-8x7B-v0.1", 46_702_792_704 - 6 * 32 * 3 * 4096 * 14336),
        ("mistralai/Mixtral-8x22B-v0.1", 140_620_634_112 - 6 * 56 * 3 * 6144 * 16384),
        ("meta-llama/Llama-3.1-8B", 8_030_261_248),  # dense: active == total
    ],
)
def test_active_params(model_id: str, expected_active: int) -> None:
    active = lookup_model(model_id).active_params()
    assert active == expected_active, f"{model_id}: active {active:,} != {expected_active:,}"


def test_llama_31_8b_breakdown_by_hand() -> None:
    got = lookup_model("meta-llama/Llama-3.1-8B").param_breakdown()
    assert got.embeddings == 2 * 128256 * 4096, "untied embed_tokens + lm_head"
    assert got.attention == 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024), "q,o 4096^2; k,v 4096x1024"
    assert got.mlp == 32 * 3 * 4096 * 14336, "gate, up, down per layer"
    assert got.norms == (2 * 32 + 1) * 4096, "two RMSNorms per layer plus the final norm"
    assert got.other == 0, "no pooler or relative attention tables"
    assert got.total == 8_030_261_248, "components sum to the official total"


def test_llama_31_8b_linear_modules() -> None:
    modules = lookup_model("meta-llama/Llama-3.1-8B").linear_modules()
    got = [(m.name, m.group, m.d_in, m.d_out, m.count, m.bias) for m in modules]
    assert got == [
        ("q_proj", "attention", 4096, 4096, 32, False),
        ("k_proj", "attention", 4096, 1024, 32, False),
        ("v_proj", "attention", 4096, 1024, 32, False),
        ("o_proj", "attention", 4096, 4096, 32, False),
        ("gate_proj", "mlp", 4096, 14336, 32, False),
        ("up_proj", "mlp", 4096, 14336, 32, False),
        ("down_proj", "mlp", 14336, 4096, 32, False),
    ], "one entry per Llama module name, one instance per layer"


def test_mixtral_modules_count_every_expert_and_the_router() -> None:
    modules = {m.name: m for m in lookup_model("mixtral 8x7b").linear_modules()}
    assert modules["gate_proj"].count == 32 * 8, "layers x experts"
    assert modules["gate_proj"].hf_name == "w1", "Mixtral names its expert matrices w1/w2/w3"
    router = modules["router"]
    assert (router.d_in, router.d_out, router.count, router.bias) == (4096, 8, 32, False), (
        "one hidden x experts router per layer, no bias"
    )


def test_gpt2_modules_keep_their_fused_hf_names() -> None:
    modules = {m.name: m for m in lookup_model("gpt2").linear_modules()}
    assert {modules[n].hf_name for n in ("q_proj", "k_proj", "v_proj")} == {"c_attn"}, (
        "q/k/v are slices of GPT-2's fused c_attn"
    )
    assert modules["up_proj"].hf_name == "c_fc", "GPT-2 MLP input is c_fc"
    assert modules["q_proj"].params_each() == 768 * 768 + 768, "GPT-2 linear layers have biases"
    assert [m.name for m in modules.values()] == [
        "q_proj", "k_proj", "v_proj", "o_proj", "up_proj", "down_proj",
    ], "plain MLP: no gate_proj"  # fmt: skip


def test_t5_attention_counts_encoder_self_and_decoder_self_and_cross() -> None:
    arch = lookup_model("t5-base")
    q = next(m for m in arch.linear_modules() if m.name == "q_proj")
    assert (q.count, q.hf_name) == (12 + 2 * 12, "q"), "12 encoder + 12x(self+cross) decoder"
    assert arch.other_params() == 2 * 32 * 12, "relative bias: 32 buckets x 12 heads, two stacks"


def test_qwen_biases_only_on_qkv() -> None:
    modules = {m.name: m for m in lookup_model("Qwen/Qwen2.5-7B").linear_modules()}
    assert [modules[n].bias for n in ("q_proj", "k_proj", "v_proj", "o_proj", "up_proj")] == [
        True, True, True, False, False,
    ], "Qwen2 has q/k/v biases only"  # fmt: skip


def test_qk_norms_per_head_and_over_all_heads() -> None:
    """Qwen3 and Gemma 3 share one head_dim-wide q and k weight across heads; OLMo 2 norms the
    concatenated heads (q_dim and kv_dim wide), as Olmo2Attention builds them."""
    qwen3 = lookup_model("Qwen/Qwen3-8B")
    assert qwen3.inner_norm_params() == 36 * 2 * 128, "two head_dim norms per layer"
    gemma3 = lookup_model("google/gemma-3-1b-pt")
    assert gemma3.inner_norm_params() == 26 * 2 * 256, "Gemma 3: head_dim 256"
    assert gemma3.norm_params() == (26 * 4 + 1) * 1152 + 26 * 2 * 256, "four per layer + final"
    olmo = lookup_model("allenai/OLMo-2-1124-7B")
    assert olmo.inner_norm_params() == 32 * (4096 + 4096), "q_norm 32x128, k_norm 32x128 wide"
    assert olmo.norm_params() == (32 * 2 + 1) * 4096 + 32 * 8192, "two hidden norms per layer"
    per_head = olmo.model_copy(update={"qk_norm_span": "head"})
    assert per_head.total_params() == olmo.total_params() - 32 * (8192 - 256), "span matters"


def test_qk_norm_span_needs_qk_norm() -> None:
    with pytest.raises(ValidationError, match="qk_norm_span needs qk_norm"):
        _arch(qk_norm_span="all_heads")


def test_linear_module_param_count() -> None:
    module = LinearModule(name="q_proj", group="attention", d_in=10, d_out=4, count=3, bias=True)
    assert module.params_each() == 44, "10x4 weight + 4 bias"
    assert module.num_params() == 132, "three instances"


def _arch(**overrides: object) -> ModelArch:
    base = lookup_model("meta-llama/Llama-3.1-8B").model_dump()
    return ModelArch(**{**base, **overrides})


def test_rejects_kv_heads_that_do_not_divide_heads() -> None:
    with pytest.raises(ValidationError, match=r"num_heads \(32\) must be a multiple of"):
        _arch(num_kv_heads=5)


def test_rejects_more_active_experts_than_experts() -> None:
    with pytest.raises(ValidationError, match=r"experts_per_token \(3\) must be at most"):
        _arch(num_experts=2, experts_per_token=3)


def test_rejects_decoder_layers_on_a_decoder_only_model() -> None:
    with pytest.raises(ValidationError, match="num_decoder_layers must be > 0 exactly"):
        _arch(num_decoder_layers=4)


def test_arch_is_frozen() -> None:
    arch = lookup_model("gpt2")
    with pytest.raises(ValidationError, match="frozen"):
        arch.hidden_size = 1  # type: ignore[misc]


dims = st.fixed_dictionaries(
    {
        "hidden_size": st.sampled_from([256, 512, 1024, 4096]),
        "num_layers": st.integers(1, 80),
        "intermediate_size": st.integers(1, 30000),
        "vocab_size": st.integers(1, 200000),
        "tied_embeddings": st.booleans(),
        "num_experts": st.integers(1, 16),
        "qkv_bias": st.booleans(),
    }
)


@given(dims)
def test_breakdown_sums_and_active_never_exceeds_total(overrides: dict[str, object]) -> None:
    arch = _arch(**overrides, experts_per_token=1)
    parts = arch.param_breakdown()
    linear = sum(m.num_params() for m in arch.linear_modules())
    assert parts.attention + parts.mlp == linear, "linear modules are the attention+MLP parts"
    assert parts.total == arch.total_params(), "total is the breakdown's sum"
    assert arch.active_params() <= arch.total_params(), "active is a subset of all parameters"
    assert (arch.active_params() == arch.total_params()) == (arch.num_experts == 1), (
        "only MoE models have idle parameters"
    )


@given(dims, st.integers(1, 8))
def test_more_layers_means_more_params(overrides: dict[str, object], extra: int) -> None:
    arch = _arch(**overrides)
    deeper = _arch(**{**overrides, "num_layers": arch.num_layers + extra})
    assert deeper.total_params() > arch.total_params(), "each layer adds parameters"


@pytest.mark.slow
@pytest.mark.parametrize("model_id", [row[0] for row in EXPECTED_TOTALS])
def test_counts_match_transformers(model_id: str) -> None:
    """Build transformers' own class for the same config on the meta device (no weights, no
    network) and count its parameters: an independent check of every formula in
    tools/architectures/architecture.py."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tools.architectures.hf_config import to_hf_config

    arch = lookup_model(model_id)
    config = to_hf_config(arch)
    model_type = config.pop("model_type")
    with torch.device("meta"):
        if model_type == "bert":
            model = transformers.BertModel(transformers.BertConfig(**config))
        elif model_type == "t5":
            model = transformers.T5ForConditionalGeneration(transformers.T5Config(**config))
        else:
            hf_config = transformers.AutoConfig.for_model(model_type, **config)
            model = transformers.AutoModelForCausalLM.from_config(hf_config)
    counted = sum(p.numel() for p in model.parameters())  # shared (tied) tensors counted once
    assert counted == arch.total_params(), f"{model_id}: transformers counts {counted:,}"
    if arch.is_moe:
        return  # transformers 5 stores experts as fused 3-D parameters, not nn.Linear modules
    linear_types = (torch.nn.Linear, transformers.pytorch_utils.Conv1D)  # GPT-2 uses Conv1D
    in_blocks = sum(
        sum(p.numel() for p in module.parameters())
        for name, module in model.named_modules()
        if isinstance(module, linear_types) and name != "lm_head" and "pooler" not in name
    )
    linear = sum(m.num_params() for m in arch.linear_modules())
    assert in_blocks == linear, f"{model_id}: nn.Linear in blocks {in_blocks:,} != {linear:,}"
