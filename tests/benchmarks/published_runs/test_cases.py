"""The published-run loader: both shared case files load, and a case's words become stacks and
mechanisms by the documented rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.published_runs.cases import PublishedCase, load_cases, stack_of, write_configs
from benchmarks.published_runs.memory import mechanisms_from_text


def case(**fields: object) -> PublishedCase:
    return PublishedCase.model_validate({"id": "x", "source": {}, "model": {}, **fields})


@pytest.mark.parametrize(
    ("stack", "repo", "expected"),
    [
        ("litgpt", "Lightning-AI/litgpt", "litgpt"),
        ("torchtune", "pytorch/torchtune", "torchtune"),
        ("torchtitan", "pytorch/torchtitan", "torchtitan"),
        ("HF Trainer + TRL SFTTrainer + PEFT", "huggingface/peft", "hf"),
        ("Accelerate + plain PyTorch loop", "huggingface/peft", "hf"),
        (None, "unslothai/unsloth", "unsloth"),
        ("Megatron-LM", "NVIDIA/Megatron-LM", "megatron"),
    ],
)
def test_stack_of(stack: str | None, repo: str, expected: str) -> None:
    assert stack_of(case(stack=stack, source={"repo": repo})) == expected


def test_mechanisms_from_words() -> None:
    text = (
        "optimizer: bitsandbytes PagedAdamW8bit, optimizer_in_bwd=True\n"
        "loss=torchtune.modules.loss.CEWithChunkedOutputLoss enable_activation_offloading=True\n"
        "bnb NF4 (no double quant); transformers==4.38.2; bitsandbytes==0.42.0\n"
        "incl. the 1343 MiB CUDA context measured on that V100"
    )
    found = mechanisms_from_text(text, ["torch.compile"])
    assert found == {
        "loss": "chunked",
        "activation_offload": True,
        "optimizer_in_backward": True,
        "compile": True,
        "qlora_double_quant": False,
        "cuda_context_gib": 1343 / 1024,
        "qlora_keeps_input": True,
        "stack_version": "4.45",
    }
    assert mechanisms_from_text("optimizer_in_bwd=False; no compile", []) == {}, "off is off"
    assert mechanisms_from_text("transformers 4.40", [])["stack_version"] == "4.45", "its release"
    assert mechanisms_from_text("bitsandbytes 0.45.0", [])["qlora_keeps_input"] is False


def test_both_shared_files_load(shared_dir: Path) -> None:
    memory = load_cases(shared_dir / "calibration" / "gpu_memory_published.json")
    time = load_cases(shared_dir / "calibration" / "training_throughput_published.json")
    assert len(memory.cases) >= 40 and len(time.cases) >= 20, "both files"
    assert all(c.source.get("repo") for c in memory.cases + time.cases), "every case is sourced"
    assert memory.cases[0].extra("metric_class") in ("allocated", "reserved", "device")
    assert time.cases[0].extra("expected"), "file-specific fields stay reachable"


def test_write_configs(tmp_path: Path) -> None:
    cases = [case(model={"config_key": "tiny", "config": {"model_type": "llama"}})] * 2
    written = write_configs(cases, tmp_path)
    assert written == {"tiny": tmp_path / "tiny" / "config.json"}, "one file per key"
    assert written["tiny"].read_text(encoding="utf-8") == '{"model_type": "llama"}'
