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
from tools.memory.stacks.profiles import MECHANISMS, PROFILES, JobContext, resolve_mechanisms

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
        ("torchtune", "loss", "chunked-linear"),
        ("unsloth", "loss", "forward-grad"),
        ("torchtitan", "selective_checkpointing", "op"),
        ("unsloth", "activation_offload", True),
        ("unsloth", "fused_rmsnorm", True),
        ("litgpt", "qlora_keeps_input", False),
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
    assert (m.loss, m.repeat_kv, m.qlora_keeps_input) == ("standard", True, False), "mixed"
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
    assert (
        "Training stack torchtitan: torchtitan (FSDP2 mixed precision, pretraining); release"
        " 2026, torchtitan's configurable trainer of 2026" in text
    )
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


@pytest.mark.parametrize(
    ("stack", "version", "mechanism", "value"),
    [
        ("litgpt", "0.4", "qlora_keeps_input", True),
        ("torchtune", "2024", "loss", "chunked"),
        ("unsloth", "2024", "loss", "fused"),
        ("hf", "4.45", "loss", "older-hf"),
    ],
)
def test_an_older_release_changes_only_what_it_names(
    stack: Stack, version: str, mechanism: str, value: object
) -> None:
    current, older = resolve_mechanisms(stack, {}), resolve_mechanisms(stack, {}, version)
    assert getattr(older, mechanism) == value and getattr(current, mechanism) != value
    assert older.version == version and current.version == PROFILES[stack].current
    release = PROFILES[stack].release(version)
    assert release is not None
    others = [n for n in MECHANISMS if n not in release.values]
    assert [getattr(older, n) for n in others] == [getattr(current, n) for n in others]


def test_torchtitan_0_0_2_compiled_the_blocks_not_the_loss() -> None:
    assert resolve_mechanisms("torchtitan", {"compile": True}).compiled_loss
    assert not resolve_mechanisms("torchtitan", {"compile": True}, "0.0.2").compiled_loss


def test_job_dependent_defaults() -> None:
    """torchtune steps the optimizer in backward only in its full single-device recipes; the hf
    stack stores a LoRA base in fp32 only under FSDP with mixed precision."""
    one = JobContext(method="full", num_gpus=1)
    assert resolve_mechanisms("torchtune", {}, job=one).optimizer_in_backward
    for job in (JobContext(method="lora"), JobContext(method="full", num_gpus=8)):
        assert not resolve_mechanisms("torchtune", {}, job=job).optimizer_in_backward
    fsdp = JobContext(method="lora", num_gpus=8, sharding="fsdp", zero_stage=3)
    assert resolve_mechanisms("hf", {}, job=fsdp).frozen_base_dtype == "fp32"
    deepspeed = JobContext(method="lora", num_gpus=8, sharding="deepspeed", zero_stage=3)
    assert resolve_mechanisms("hf", {}, job=deepspeed).frozen_base_dtype == "16-bit"
    reason = resolve_mechanisms("hf", {}, job=fsdp).describe(("frozen_base_dtype",))[0]
    assert reason.endswith("here fp32 for LoRA under FSDP with mixed precision).")


def test_an_unknown_release_names_the_valid_ones() -> None:
    with pytest.raises(InvalidInputError, match=r"stack_version: got '0.1'; valid: current or a"
                       r" release of litgpt: 0.5, 0.4"):  # fmt: skip
        bare_input(model=llama31_8b(), stack="litgpt", stack_version="0.1")
