"""Registry contents, forgiving name lookup and resolve_model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tools.architectures.hf_config import to_hf_config
from tools.architectures.registry import (
    list_models,
    lookup_model,
    model_names,
    normalize_name,
    resolve_model,
)
from tools.errors import InvalidInputError, UnknownNameError

REQUIRED_IDS = {
    "meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-13b-hf", "meta-llama/Llama-2-70b-hf",
    "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.1-405B",
    "meta-llama/Llama-3.2-1B", "meta-llama/Llama-3.2-3B", "mistralai/Mistral-7B-v0.1",
    "mistralai/Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x22B-v0.1",
    "Qwen/Qwen1.5-MoE-A2.7B", "Qwen/Qwen2-57B-A14B", "Qwen/Qwen3-30B-A3B",
    "deepseek-ai/DeepSeek-V2-Lite", "deepseek-ai/DeepSeek-V3",
    "Qwen/Qwen2.5-0.5B", "Qwen/Qwen2.5-1.5B", "Qwen/Qwen2.5-3B", "Qwen/Qwen2.5-7B",
    "Qwen/Qwen2.5-14B", "Qwen/Qwen2.5-32B", "Qwen/Qwen2.5-72B",
    "google/gemma-2-2b", "google/gemma-2-9b", "google/gemma-2-27b",
    "microsoft/Phi-3-mini-4k-instruct", "microsoft/Phi-3-medium-4k-instruct",
    "openai-community/gpt2", "openai-community/gpt2-medium", "openai-community/gpt2-large",
    "openai-community/gpt2-xl", "google-bert/bert-base-uncased", "google-bert/bert-large-uncased",
    "google-t5/t5-base", "google-t5/t5-large", "google-t5/t5-3b",
    "Qwen/Qwen2.5-Coder-7B", "Qwen/Qwen2.5-Coder-14B", "Qwen/Qwen2.5-Coder-32B",
    "meta-llama/Llama-3.3-70B-Instruct",
    "Qwen/Qwen3-0.6B", "Qwen/Qwen3-1.7B", "Qwen/Qwen3-4B", "Qwen/Qwen3-8B", "Qwen/Qwen3-14B",
    "Qwen/Qwen3-32B", "Qwen/Qwen3-Coder-30B-A3B-Instruct", "google/gemma-3-1b-pt",
    "microsoft/Phi-3.5-mini-instruct", "microsoft/phi-4", "mistralai/Mistral-Nemo-Base-2407",
    "mistralai/Mistral-Small-24B-Base-2501", "allenai/OLMo-2-1124-7B", "allenai/OLMo-2-1124-13B",
    "HuggingFaceTB/SmolLM2-135M", "HuggingFaceTB/SmolLM2-360M", "HuggingFaceTB/SmolLM2-1.7B",
}  # fmt: skip


def test_registry_holds_every_required_model() -> None:
    ids = [m.id for m in list_models()]
    assert set(ids) == REQUIRED_IDS, f"unexpected registry: {sorted(set(ids) ^ REQUIRED_IDS)}"
    assert len(ids) == len(set(ids)), "ids are unique"


@pytest.mark.parametrize("arch", list_models(), ids=lambda a: a.id)
def test_every_entry_cites_its_config(arch: object) -> None:
    source = arch.source  # type: ignore[attr-defined]
    expected = f"https://huggingface.co/{arch.id}/blob/main/config.json"  # type: ignore[attr-defined]
    assert source == expected, "dimensions come from the model's own config.json"
    assert not arch.estimated, "built-in dimensions are published, not estimated"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("query", "expected_id"),
    [
        ("llama 3 70b", "meta-llama/Llama-3.1-70B"),  # Llama 3 70B: same dimensions, aliased
        ("Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B"),
        ("meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.1-70B"),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B"),
        ("LLAMA_3_70B", "meta-llama/Llama-3.1-70B"),
        ("Meta-Llama-3-8B-Instruct", "meta-llama/Llama-3.1-8B"),
        ("Llama 3.1 8B", "meta-llama/Llama-3.1-8B"),
        ("llama-2-7b-chat-hf", "meta-llama/Llama-2-7b-hf"),
        ("Llama-3.2-1B-Instruct", "meta-llama/Llama-3.2-1B"),
        ("mistral 7b", "mistralai/Mistral-7B-v0.1"),
        ("Mistral-7B-Instruct-v0.1", "mistralai/Mistral-7B-v0.1"),
        ("mixtral-8x7b-instruct-v0.1", "mistralai/Mixtral-8x7B-v0.1"),
        ("Mixtral 8x22B", "mistralai/Mixtral-8x22B-v0.1"),
        ("qwen2.5 7b instruct", "Qwen/Qwen2.5-7B"),
        ("Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-0.5B"),
        ("gemma-2-9b-it", "google/gemma-2-9b"),
        ("Gemma 2 27B", "google/gemma-2-27b"),
        ("phi-3-mini-128k-instruct", "microsoft/Phi-3-mini-4k-instruct"),
        ("Phi-3 medium", "microsoft/Phi-3-medium-4k-instruct"),
        ("gpt2", "openai-community/gpt2"),
        ("GPT-2 XL", "openai-community/gpt2-xl"),
        ("bert-base-uncased", "google-bert/bert-base-uncased"),
        ("BERT large", "google-bert/bert-large-uncased"),
        ("t5-3b", "google-t5/t5-3b"),
        ("T5 base", "google-t5/t5-base"),
        # names people type for the families added for issue 11
        ("qwen3 8b", "Qwen/Qwen3-8B"),
        ("Qwen/Qwen3-8B-Base", "Qwen/Qwen3-8B"),
        ("Qwen3-0.6B", "Qwen/Qwen3-0.6B"),
        ("qwen 3 32b", "Qwen/Qwen3-32B"),
        ("Qwen3-Coder-30B-A3B-Instruct", "Qwen/Qwen3-Coder-30B-A3B-Instruct"),
        ("qwen3 coder", "Qwen/Qwen3-Coder-30B-A3B-Instruct"),
        ("qwen3 30b", "Qwen/Qwen3-30B-A3B"),
        ("gemma-3-1b-it", "google/gemma-3-1b-pt"),
        ("gemma 3 1b", "google/gemma-3-1b-pt"),
        ("phi4", "microsoft/phi-4"),
        ("microsoft/phi-4", "microsoft/phi-4"),
        ("Phi-3.5-mini-instruct", "microsoft/Phi-3.5-mini-instruct"),
        ("phi 3.5 mini", "microsoft/Phi-3.5-mini-instruct"),
        ("mistral nemo", "mistralai/Mistral-Nemo-Base-2407"),
        ("Mistral-Nemo-Instruct-2407", "mistralai/Mistral-Nemo-Base-2407"),
        ("mistral small 24b", "mistralai/Mistral-Small-24B-Base-2501"),
        ("Mistral-Small-24B-Instruct-2501", "mistralai/Mistral-Small-24B-Base-2501"),
        ("olmo2 7b", "allenai/OLMo-2-1124-7B"),
        ("allenai/OLMo-2-1124-13B-Instruct", "allenai/OLMo-2-1124-13B"),
        ("smollm2 1.7b", "HuggingFaceTB/SmolLM2-1.7B"),
        ("SmolLM2-360M-Instruct", "HuggingFaceTB/SmolLM2-360M"),
        ("smollm2 135m", "HuggingFaceTB/SmolLM2-135M"),
        ("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "meta-llama/Llama-3.1-8B"),
        ("DeepSeek-R1-Distill-Llama-70B", "meta-llama/Llama-3.3-70B-Instruct"),
        ("Llama-3.2-3B-Instruct", "meta-llama/Llama-3.2-3B"),
        ("llama 3.2 1b instruct", "meta-llama/Llama-3.2-1B"),
    ],
)
def test_lookup_is_forgiving(query: str, expected_id: str) -> None:
    assert lookup_model(query).id == expected_id, f"{query!r} should find {expected_id}"


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "llama3170b"),
        ("gemma-2-9b-it", "gemma29b"),
        ("  Qwen2.5_7B  ", "qwen257b"),
        ("bert-base-uncased", "bertbaseuncased"),  # "base" is a size here, not a variant
    ],
)
def test_normalize_name(name: str, key: str) -> None:
    assert normalize_name(name) == key, f"matching key of {name!r}"


def test_model_names_list_every_name_each_lookup_answers_to() -> None:
    names = model_names()
    ids = {arch.id for arch in list_models()}
    assert set(names.values()) == ids, "every entry is named, and only entries"
    assert names["llama3170b"] == "meta-llama/Llama-3.1-70B", "an id's key"
    for key, model_id in names.items():
        assert lookup_model(key).id == model_id, f"{key!r} looks up its own entry"


def test_unknown_name_lists_closest_models() -> None:
    with pytest.raises(
        UnknownNameError, match=r"unknown model 'llama 4 70b'; closest known: "
    ) as e:
        lookup_model("llama 4 70b")
    assert "meta-llama/Llama-3.1-70B" in e.value.suggestions, "the near name is suggested"
    assert len(e.value.suggestions) <= 5, "a short list"


def test_unknown_name_far_from_everything() -> None:
    with pytest.raises(UnknownNameError, match="closest known: none close"):
        lookup_model("zzzzzzzz")


def test_resolve_model_by_name_count_and_config(tmp_path: Path) -> None:
    assert resolve_model("llama 3 8b").id == "meta-llama/Llama-3.1-8B", "a registry name"
    estimated = resolve_model("7B")
    assert estimated.estimated, "a bare count gives estimated dimensions"
    config = tmp_path / "my-model" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps(to_hf_config(lookup_model("gemma-2-2b"))), encoding="utf-8")
    assert resolve_model(str(config)).total_params() == 2_614_341_888, "a config.json path"
    assert resolve_model(str(config.parent)).total_params() == 2_614_341_888, "its folder"


def test_resolve_model_missing_json_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"an existing config\.json file"):
        resolve_model(str(tmp_path / "nope.json"))


def test_resolve_model_empty() -> None:
    with pytest.raises(InvalidInputError, match=r"a model name, a config\.json path or a count"):
        resolve_model("   ")


def test_registry_import_is_light() -> None:
    """tools/ must stay importable without torch/transformers and defer YAML until first use."""
    code = (
        "import sys, tools.architectures.registry; "
        "print(sorted(m for m in ('torch', 'transformers', 'yaml') if m in sys.modules))"
    )
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert out.stdout.strip() == "[]", "no heavy module imported by tools.architectures.registry"
