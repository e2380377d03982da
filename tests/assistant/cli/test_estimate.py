"""`gpu-advisor estimate`: JSON and table output, model sources, one clear error, light imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.cli import main
from tests.fakes.jobs import LLAMA_8B_CONFIG, bare_input
from tools.architectures.registry import lookup_model
from tools.memory import EstimateInput, estimate

# meta-llama/Llama-3.1-8B config.json as the reader sees it: the shared upload fixture, with its
# architecture list and untied embeddings, without the upload's name.
LLAMA_CONFIG = {
    **{k: v for k, v in LLAMA_8B_CONFIG.items() if k != "_name_or_path"},
    "architectures": ["LlamaForCausalLM"],
    "tie_word_embeddings": False,
}


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    """The estimate's JSON, without the defaults it lists under "assumed"."""
    assert main(["estimate", *argv, "--json"]) == 0, f"estimate {argv} should succeed"
    out = json.loads(capsys.readouterr().out)
    assert isinstance(out.pop("assumed"), list), "the defaults used are listed"
    return out


BARE_FLAGS = ("--method", "full", "--checkpointing", "none")  # tests.fakes.jobs.BARE


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
    assert out["peak_moment"] == direct.peak_moment == "loss backward", "the peak moment"
    assert [m["name"] for m in out["moments"]] == [
        "forward",
        "loss backward",
        "recompute",
        "embedding backward",
        "optimizer step",
    ], "LoRA with full recomputation (the default): no lm_head gradient, a recompute moment"
    assert out["uncertainty"] == direct.uncertainty, "the calibration band"
    # auto resolves to plain PyTorch without ZeRO, and PyTorch's CUDA default step is foreach
    assert (out["engine"], out["optimizer_impl"]) == ("pytorch", "foreach"), "resolved setup"


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
        "--engine",
        "deepspeed",
        "--optimizer-impl",
        "for-loop",
        "--grad-accum",
        "2",
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
            engine="deepspeed",
            optimizer_impl="for-loop",
            gradient_accumulation_steps=2,
        )
    )
    setup = {"engine": out["engine"], "optimizer_impl": out["optimizer_impl"]}
    assert setup == {"engine": "deepspeed", "optimizer_impl": "for-loop"}, "as given"
    assert out == json.loads(expected.model_dump_json()), "every flag maps onto EstimateInput"
    assert out["total_gpus"] == 16, "8 data-parallel x 2 tensor-parallel"


def test_engine_flag_sets_the_bytes_per_parameter(capsys: pytest.CaptureFixture[str]) -> None:
    # Full bf16-mixed AdamW on one GPU: PyTorch autocast keeps fp32 weights and gradients and
    # two fp32 moments (4 + 4 + 8 B); DeepSpeed a 16-bit model and gradients, and the fp32 master
    # with the moments in the optimizer (2 + 2 + 12 B), stepping fused by default.
    auto = run_json(capsys, "--model", "llama 3.1 8b", *BARE_FLAGS)
    deepspeed = run_json(capsys, "--model", "llama 3.1 8b", *BARE_FLAGS, "--engine", "deepspeed")
    assert auto["bytes_per_param"] == {"weights": 4.0, "gradients": 4.0, "optimizer": 8.0}, "auto"
    assert deepspeed["bytes_per_param"] == {"weights": 2.0, "gradients": 2.0, "optimizer": 12.0}
    assert (deepspeed["engine"], deepspeed["optimizer_impl"]) == ("deepspeed", "fused"), "setup"
    fused = run_json(capsys, "--model", "llama 3.1 8b", *BARE_FLAGS, "--optimizer-impl", "fused")
    # foreach builds sqrt(v) for every parameter at the step: one 4-byte state more, 4 N bytes
    steps = {m["name"]: m["total"] for m in auto["moments"]}
    fused_steps = {m["name"]: m["total"] for m in fused["moments"]}
    assert steps["optimizer step"] - fused_steps["optimizer step"] == 4 * 8_030_261_248, "4 N"
    accumulating = run_json(capsys, "--model", "llama 3.1 8b", *BARE_FLAGS, "--grad-accum", "4")
    forward = {m["name"]: m for m in accumulating["moments"]}["forward"]
    assert forward["gradients"] == 4 * 8_030_261_248, "accumulated fp32 gradients stay resident"


def test_offload_reports_cpu_ram(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(
        capsys, "--params", "7e9", *BARE_FLAGS, "--zero", "2", "--gpus", "4", "--offload-optimizer"
    )
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
    assert "engine pytorch, optimizer step foreach" in text, "the resolved setup"


def test_table_shows_the_peak_moment_band_and_own_activations(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Full fine-tuning of Llama 3.1 8B on one GPU peaks at the optimizer step, where no
    # activation is live: the table still shows their size, apart from the total.
    assert main(["estimate", "--model", "llama 3.1 8b", *BARE_FLAGS]) == 0
    lines = capsys.readouterr().out.splitlines()
    result = estimate(bare_input(model=lookup_model("llama 3.1 8b")))
    assert result.peak_moment == "optimizer step" and result.per_gpu.activations == 0, "setup"
    assert (
        f"Peak per GPU: {result.total_with_band()} at the optimizer step, the largest of the"
        " step's 5 moments"
    ) in lines, "the total with its calibration band and the peak moment"
    own = result.activations.total
    assert f"  activations* {own / 2**30:>10.2f} {own / 1e9:>10.2f}" in lines, "own size"
    why = "    weight copies, loss buffers); not in the total: none are live at the optimizer step"
    assert why in lines, "why they are not in the total"
    peak = next(m for m in result.moments if m.name == "optimizer step")
    assert f"  optimizer step       {peak.total / 2**30:>8.2f}  <- peak" in lines, "peak marked"
    assert sum("<- peak" in line for line in lines) == 1, "one peak"
    # LoRA peaks inside the backward pass with its activations live: no separate row
    lora = ["estimate", "--model", "llama 3.1 8b", "--method", "lora", "--checkpointing", "none"]
    assert main(lora) == 0
    text = capsys.readouterr().out
    assert "activations*" not in text, "the peak already holds every activation"
    assert "at the loss backward, the largest of the step's 4 moments" in text, "LoRA peak"


def test_open_fields_are_assumed_and_listed(capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's example: QLoRA of Llama 3.1 70B says what it assumed, and is the job the chat
    resolves (full recomputation, paged 8-bit AdamW: 44.8 GiB, not 120 GiB)."""
    assert main(["estimate", "--model", "llama 3.1 70b", "--method", "qlora"]) == 0
    text = capsys.readouterr().out
    assert "Assumed (defaults for what was not given):" in text, text
    assert "  - gradient_checkpointing = full: full activation recomputation" in text
    assert "  - optimizer = paged-adamw-8bit: " in text and "  - seq_len = 2048: " in text
    assert "Peak per GPU: 44.8 GiB" in text, "the unified defaults"
    assert "method = " not in text, "the method was given"
    assert main(["estimate", "--model", "llama 3.1 70b", "--method", "qlora", "--json"]) == 0
    assumed = {a["field"]: a["value"] for a in json.loads(capsys.readouterr().out)["assumed"]}
    assert assumed["optimizer"] == "paged-adamw-8bit" and assumed["micro_batch_size"] == 1


def test_device_is_not_a_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """`device` models CPU kernels for the calibration; the CLI estimates GPUs only."""
    with pytest.raises(SystemExit) as exc:
        main(["estimate", "--model", "llama 3.1 8b", "--device", "cpu"])
    assert exc.value.code == 2, "argparse rejects --device"
    assert "unrecognized arguments: --device cpu" in capsys.readouterr().err, "named"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--model", "llama 3.1 8b", "--method", "qlora", "--precision", "fp32"],
            "error: precision: got 'fp32'; valid: bf16-mixed, fp16-mixed or bf16 with method qlora",
        ),
        (["--model", "llama 3.1 8b", "--offload-optimizer"], "error: offload_optimizer: got True"),
        (["--model", "llama 3.1 8b", "--seq-len", "0"], "error: seq_len: got 0; valid: an integer"),
        (["--model", "llama 3.1 8b", "--zero", "7"], "error: zero_stage: got 7; valid: 0, 1, 2"),
        (["--model", "llama 3.1 8b", "--zero", "zero-9"], "error: zero_stage: got 'zero-9'"),
        (
            ["--model", "llama 3.1 8b", "--grad-accum", "0"],
            "error: gradient_accumulation_steps: got 0; valid: an integer from 1 to",
        ),
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


ROOT = Path(__file__).resolve().parents[3]
# What `gpu-advisor estimate` must not load for a language model: the ranking, the catalog, the
# image models and their estimator, the ranking side of `tools.advice`, the configuration, the
# chat's, the app's and the knowledge base's stacks. It needs the job model, the architectures
# and the estimator only.
NOT_ON_THE_ESTIMATE_PATH = (
    "tools.ranking", "tools.catalog", "tools.advice.resolved", "tools.advice.request",
    "tools.advice.images", "tools.advice.image_rank", "tools.architectures.diffusion",
    "tools.architectures.vision", "tools.memory.images.jobs", "assistant.settings",
    "pydantic_settings", "knowledge", "torch", "transformers", "langchain", "langchain_core",
    "gradio", "chromadb", "numpy", "sentence_transformers", "rapidfuzz",
)  # fmt: skip
# Runs the command in a fresh interpreter; prints its exit code, its total and every module
# it loaded.
_PROBE = """
import contextlib, io, json, sys
from assistant.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["estimate", *sys.argv[1:], "--json"])
total = json.loads(out.getvalue())["per_gpu"]["total"]
print(json.dumps({"code": code, "total": total, "modules": sorted(sys.modules)}))
"""


def loaded_by_estimate(*argv: str) -> tuple[int, set[str]]:
    """(the per-GPU total, the modules loaded) of `gpu-advisor estimate ARGV --json` run alone
    in a new interpreter on this checkout."""
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True,
                          text=True, cwd=ROOT, check=True)  # fmt: skip
    report = json.loads(done.stdout)
    assert report["code"] == 0, done.stderr
    return report["total"], set(report["modules"])


def _within(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules for p in prefixes if m == p or m.startswith(p + "."))


@pytest.mark.parametrize(
    "source", [("--model", "llama 3.1 8b"), ("--config", "CONFIG"), ("--params", "7e9")]
)
def test_estimate_path_imports_nothing_heavy(source: tuple[str, str], tmp_path: Path) -> None:
    """The estimate command starts fast: for a registry name, a config.json or a count it loads
    no ranking, catalog, image model, settings, torch, LangChain, Gradio or Chroma (import time
    is most of its run; `python -X importtime` shows each module's share)."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps(LLAMA_CONFIG), encoding="utf-8")
    argv = [str(config) if arg == "CONFIG" else arg for arg in source]
    total, modules = loaded_by_estimate(*argv, "--method", "qlora")
    assert total > 4 * 2**30, "a real estimate: QLoRA on 7-8B parameters"
    assert {"tools.memory.estimator", "tools.job.spec"} <= modules
    assert _within(modules, NOT_ON_THE_ESTIMATE_PATH) == [], "loaded by estimate"


@pytest.mark.parametrize("model", ["sdxl", "llava-1.5-7b"])
def test_an_image_model_estimate_loads_the_image_estimator_only(model: str) -> None:
    """The probe sees what a command loads: an image model's estimate loads its classes and the
    image estimator, imported for that job only, and still no ranking or catalog."""
    total, modules = loaded_by_estimate("--model", model, "--method", "lora")
    assert total > 2**30
    assert {"tools.architectures.diffusion", "tools.memory.images.jobs"} <= modules
    assert _within(modules, ("tools.ranking", "tools.catalog", "tools.advice.request")) == []


def test_estimate_command_never_loads_the_settings(tmp_path: Path) -> None:
    """`estimate` reads no configuration, so it redacts the environment's keys without building
    `Settings` (pydantic-settings and the knowledge configuration are a third of its start-up);
    a key in the environment is still redacted from its errors."""
    key = "sk-test-0123456789abcdefghij"
    code = (
        "import sys; from assistant.cli import main;"
        f"code = main(['estimate', '--model', {key!r}]);"
        "print(sorted({'assistant.settings', 'pydantic_settings'} & set(sys.modules)))"
    )
    env = {**os.environ, "OPENAI_API_KEY": key}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout
    assert key not in out.stderr and "error:" in out.stderr, out.stderr
