"""Training-stack profiles: every mechanism has a sourced default per stack, a job's own value
wins, the estimate states what it used, and a mechanism only applies where it can."""

from __future__ import annotations

import re

import pytest

from tests.fakes.jobs import bare_input
from tests.tools.memory.test_estimator_models import llama31_8b
from tools.enums import Stack, choices
from tools.errors import InvalidInputError
from tools.job import DEFAULTS, FIELD_GROUPS, JobSpec
from tools.job.spec import MECHANISM_FIELDS
from tools.memory import estimate
from tools.memory.stacks.profiles import MECHANISMS, PROFILES, resolve_mechanisms

SOURCE = re.compile(r"\.py\b|\.yaml\b|qlora\.py|Korthikanti|Transformer Engine|--recompute|dtype")


def test_every_stack_has_a_profile() -> None:
    assert set(PROFILES) == set(choices(Stack)), "one profile per stack of the vocabulary"


@pytest.mark.parametrize("stack", choices(Stack))
def test_every_mechanism_has_a_value_and_a_reason(stack: str) -> None:
    profile = PROFILES[stack]  # type: ignore[index]
    assert set(profile.values) == set(MECHANISMS), f"{stack}: every mechanism"
    for name, (_, reason) in profile.values.items():
        assert len(reason) > 20, f"{stack}.{name}: a reason"


@pytest.mark.parametrize(
    ("stack", "mechanism", "value"),
    [
        ("hf", "loss", "standard"),
        ("litgpt", "loss", "chunked-16bit"),
        ("torchtune", "loss", "chunked"),
        ("torchtitan", "selective_checkpointing", "op"),
        ("unsloth", "activation_offload", True),
        ("unsloth", "fused_rmsnorm", True),
        ("litgpt", "qlora_keeps_input", True),
        ("litgpt", "qlora_lm_head", True),
        ("hf", "qlora_lm_head", False),
        ("torchtune", "qlora_lm_head", False),
        ("litgpt", "qlora_double_quant", False),
        ("hf", "qlora_double_quant", True),
        ("torchtune", "repeat_kv", True),
        ("megatron", "loss", "fp32-inplace"),
    ],
)
def test_profile_values_cite_their_code(stack: Stack, mechanism: str, value: object) -> None:
    chosen, reason = PROFILES[stack].values[mechanism]
    assert chosen == value, f"{stack}.{mechanism}"
    assert SOURCE.search(reason), f"{stack}.{mechanism}: names its source ({reason!r})"


def test_a_job_value_wins_and_is_marked_given() -> None:
    m = resolve_mechanisms("litgpt", {"loss": "standard", "repeat_kv": None})
    assert (m.loss, m.repeat_kv, m.qlora_keeps_input) == ("standard", True, True), "mixed"
    assert m.given == {"loss"}, "only the job's own values are 'given'"
    text = "\n".join(m.describe())
    assert "Mechanism loss = standard (as given)." in text
    assert "Mechanism repeat kv = True (litgpt: litgpt/model.py CausalSelfAttention" in text


def test_job_fields_and_defaults_cover_the_mechanisms() -> None:
    """The job model carries each mechanism (open by default: the stack decides)."""
    for name in (*MECHANISM_FIELDS, "stack", "offload_params"):
        assert name in JobSpec.model_fields, f"{name} is a job field"
        assert name in DEFAULTS, f"{name} has a stated default"
    assert set(MECHANISM_FIELDS) | {"stack"} <= set(FIELD_GROUPS["training"]), "training group"
    assert "offload_params" in FIELD_GROUPS["plan"], "a plan field"
    assert DEFAULTS["stack"].value == "hf" and all(
        DEFAULTS[n].value is None for n in MECHANISM_FIELDS
    ), "the stack decides every open mechanism"
    assert set(MECHANISM_FIELDS) | {"qlora_double_quant"} == set(MECHANISMS), "same set"


def test_estimate_states_the_stack_and_only_the_mechanisms_that_apply() -> None:
    full = estimate(bare_input(model=llama31_8b(), stack="torchtitan"))
    text = "\n".join(full.assumptions)
    assert "Training stack torchtitan: torchtitan (FSDP2 mixed precision, pretraining)." in text
    assert "Mechanism selective checkpointing = op (torchtitan:" in text
    assert "qlora keeps input" not in text, "QLoRA-only mechanisms are not stated for full"
    qlora = estimate(bare_input(model=llama31_8b(), method="qlora", gradient_checkpointing="full"))
    text = "\n".join(qlora.assumptions)
    assert "Training stack hf: the Hugging Face stack" in text, "the default stack, stated"
    assert "Mechanism qlora keeps input = False" in text, "QLoRA mechanisms for QLoRA"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"method": "full", "frozen_base_dtype": "fp32"}, "frozen_base_dtype.*lora or qlora"),
        (
            {"method": "lora", "qlora_keeps_input": True},
            "qlora_keeps_input.*only with method qlora",
        ),
        ({"method": "full", "offload_params": True}, "offload_params.*zero_stage 3"),
        ({"stack": "pytorch-lightning"}, "stack: got 'pytorch-lightning'"),
        ({"loss": "softmax"}, "loss: got 'softmax'"),
    ],
)
def test_mechanisms_only_where_they_apply(settings: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        bare_input(model=llama31_8b(), **settings)


def test_litgpt_fuses_qkv_for_lora() -> None:
    """litgpt's GPT has one qkv Linear: LoRA on q and v is one adapter, one dropout copy."""
    hf = estimate(bare_input(model=llama31_8b(), method="lora", lora_targets="q_proj,v_proj",
                             lora_dropout=0.05, precision="bf16"))  # fmt: skip
    lit = estimate(bare_input(model=llama31_8b(), method="lora", lora_targets="q_proj,v_proj",
                              lora_dropout=0.05, precision="bf16", stack="litgpt"))  # fmt: skip
    tokens_h = 2048 * 4096
    hf_layer, lit_layer = hf.activations.layers[0].per_layer, lit.activations.layers[0].per_layer
    assert hf_layer["attention.qkv_input.lora_input_copy"] == 2 * 2 * tokens_h, "q and v"
    assert lit_layer["attention.qkv_input.lora_input_copy"] == 2 * tokens_h, "one fused module"
    assert hf.trainable_params == 32 * 16 * (4096 + 4096 + 4096 + 1024), "r (d_in + d_out), q and v"
