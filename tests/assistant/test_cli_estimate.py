"""`gpu-advisor estimate`: JSON and table output, model sources, one clear error, light imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.cli import main
from tools.estimator import EstimateInput, estimate
from tools.model_registry import lookup_model

LLAMA_CONFIG = {  # meta-llama/Llama-3.1-8B config.json, the keys the reader uses
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
}


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["estimate", *argv, "--json"]) == 0, f"estimate {argv} should succeed"
    return json.loads(capsys.readouterr().out)


def test_json_keys_and_integer_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "--model", "llama 3.1 8b", "--method", "lora", "--lora-rank", "16")
    assert list(out["per_gpu"]) == [
        "weights",
        "gradients",
        "optimizer",
        "activations",
        "overhead",
        "total",
    ], "per_gpu keys, in order"
    assert all(isinstance(v, int) for v in out["per_gpu"].values()), "bytes are integers"
    assert out["trainable_params"] == 41_943_040, "LoRA r=16 on all linear layers of Llama 3.1 8B"
    assert out["total_params"] == 8_030_261_248, "Llama 3.1 8B"
    assert isinstance(out["assumptions"], list) and out["assumptions"], "assumptions included"
    direct = estimate(EstimateInput(model=lookup_model("llama 3.1 8b"), method="lora"))
    assert out["per_gpu"] == direct.per_gpu.model_dump(), "CLI prints what estimate() computes"


def test_every_option_reaches_the_estimator(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(
        capsys,
        "--model",
        "llama 3.1 8b",
        "--method",
        "qlora",
        "--precision",
        "bf16",
        "--optimizer",
        "paged-adamw-8bit",
        "--lora-rank",
        "64",
        "--lora-targets",
        "q_proj,v_proj",
        "--batch",
        "4",
        "--seq-len",
        "4096",
        "--checkpointing",
        "full",
        "--attention",
        "flash",
        "--zero",
        "fsdp-full-shard",
        "--gpus",
        "8",
        "--tp",
        "2",
        "--sequence-parallel",
        "--context-gib",
        "0.5",
        "--fragmentation",
        "0.05",
    )
    expected = estimate(
        EstimateInput(
            model=lookup_model("llama 3.1 8b"),
            method="qlora",
            precision="bf16",
            optimizer="paged-adamw-8bit",
            lora_rank=64,
            lora_targets=("q_proj", "v_proj"),
            micro_batch_size=4,
            seq_len=4096,
            gradient_checkpointing="full",
            attention="sdpa",
            zero_stage=3,
            sharding="fsdp",
            num_gpus=8,
            tensor_parallel=2,
            sequence_parallel=True,
            cuda_context_bytes=1 << 29,
            fragmentation=0.05,
        )
    )
    assert out == json.loads(expected.model_dump_json()), "every flag maps onto EstimateInput"
    assert out["total_gpus"] == 16, "8 data-parallel x 2 tensor-parallel"


def test_offload_reports_cpu_ram(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "--params", "7e9", "--zero", "2", "--gpus", "4", "--offload-optimizer")
    assert out["per_gpu"]["optimizer"] == 0, "optimizer state moved to the CPU"
    assert out["cpu_offload_bytes"] == 16 * out["total_params"] // 4, "master+Adam+fp32 grads"


def test_config_json_and_param_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(LLAMA_CONFIG), encoding="utf-8")
    from_config = run_json(capsys, "--config", str(config))
    from_name = run_json(capsys, "--model", "meta-llama/Llama-3.1-8B")
    assert from_config["per_gpu"] == from_name["per_gpu"], "config.json = registry entry"
    counted = run_json(capsys, "--params", "70B")
    assert counted["model_id"] == "estimated-70B", "a bare count becomes a Llama-shaped guess"


def test_table_in_gib_and_gb(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--model", "llama 3.1 8b", "--checkpointing", "full"]) == 0
    text = capsys.readouterr().out
    result = estimate(
        EstimateInput(model=lookup_model("llama 3.1 8b"), gradient_checkpointing="full")
    )
    total = result.per_gpu.total
    assert f"{total / 2**30:>10.2f} {total / 1e9:>10.2f}" in text, "total in GiB and GB"
    assert "GiB" in text and "GB" in text, "both units labelled"
    assert "Assumptions:" in text and "Full recomputation" in text, "assumptions listed"
    assert "32 x decoder layer" in text, "the activation split per layer"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--model", "llama 3.1 8b", "--method", "qlora", "--precision", "fp32"],
            "error: precision: got 'fp32'; valid: bf16-mixed, fp16-mixed or bf16 with method qlora",
        ),
        (["--model", "llama 3.1 8b", "--offload-optimizer"], "error: offload_optimizer: got True"),
        (["--model", "llama 3.1 8b", "--seq-len", "0"], "error: seq_len: got 0; valid: an integer"),
        (["--model", "llama 3.1 8b", "--zero", "7"], "error: zero_stage: got '7'"),
        (["--model", "lama 3.1 8b"], "error: unknown model 'lama 3.1 8b'; closest known: "),
        (["--config", "missing/config.json"], "error: model: got 'missing/config.json'"),
    ],
)
def test_bad_input_exits_2_with_one_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["estimate", *argv]) == 2, f"{argv} is invalid"
    captured = capsys.readouterr()
    assert captured.out == "", "nothing on stdout"
    assert captured.err.startswith(message), f"stderr: {captured.err!r}"
    assert captured.err.count("\n") == 1, "one line"


def test_model_source_is_required_and_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["estimate"], ["estimate", "--model", "x", "--params", "7e9"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2, f"argparse rejects {argv}"
    assert "--model" in capsys.readouterr().err, "usage names the model options"


def test_estimate_path_imports_nothing_heavy() -> None:
    """The estimate command must start fast: no torch, transformers, LangChain, Gradio or
    Chroma behind `assistant.cli.estimate` and `tools.estimator`."""
    code = (
        "import sys, assistant.cli.estimate, tools.estimator, tools.model_registry;"
        "heavy = {'torch', 'transformers', 'langchain', 'langchain_core', 'gradio', 'chromadb',"
        " 'numpy', 'sentence_transformers'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", f"heavy modules imported: {out.stdout}"
