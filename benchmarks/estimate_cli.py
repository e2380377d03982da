"""Benchmark: `gpu-advisor estimate` against `accelerate estimate-memory`, and our figures beside
published ones (ZeRO Table 1, QLoRA's 780 GB / 48 GB, DeepSpeed's and Accelerate's estimators).

    python -m benchmarks.estimate_cli [--runs 11] [--accelerate PATH] [--json FILE]

Everything runs offline on a local config.json (Llama 3.1 8B's published dimensions) written to a
temporary folder. `accelerate estimate-memory` cannot run on it (see `accelerate_cli_attempt`),
so the timed Accelerate process does what that command does after its Hub lookup: build the
model from the config on the meta device and apply `calculate_maximum_sizes` and
`estimate_training_usage`. Results are printed as Markdown for benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
LLAMA_31_8B = {  # meta-llama/Llama-3.1-8B config.json (rope scaling omitted: no memory effect)
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
    "rms_norm_eps": 1e-5,
    "rope_theta": 500000.0,
    "hidden_act": "silu",
    "torch_dtype": "bfloat16",
}
# LLaMA-65B (Touvron et al. 2023, Table 2), the model of the QLoRA paper's headline.
LLAMA_65B = {
    "id": "huggyllama/llama-65b", "name": "LLaMA 65B", "hidden_size": 8192, "num_layers": 80,
    "num_heads": 64, "num_kv_heads": 64, "head_dim": 128, "intermediate_size": 22016,
    "vocab_size": 32000, "max_position_embeddings": 2048,
}  # fmt: skip
# What `accelerate estimate-memory` computes once it has a config (accelerate/commands/
# estimate.py: create_empty_model, gather_data), minus the Hub lookup; prints JSON.
ACCELERATE_SCRIPT = """
import json, sys
from accelerate import init_empty_weights
from accelerate.commands.estimate import estimate_training_usage
from accelerate.utils import calculate_maximum_sizes
from transformers import AutoConfig, AutoModel
config = AutoConfig.from_pretrained(sys.argv[1])
with init_empty_weights():
    model = AutoModel.from_config(config)
total, largest = calculate_maximum_sizes(model)
print(json.dumps({"total_fp32": total, "largest_layer": largest[0],
                  "training_float32": max(estimate_training_usage(total, "float32").values()),
                  "training_float16": max(estimate_training_usage(total, "float16").values())}))
"""


def timed_runs(cmd: list[str], runs: int) -> dict[str, Any]:
    """Wall and CPU seconds (user + system) of `runs` whole-process runs, and the last stdout."""
    walls, cpus, out = [], [], ""
    # as installed: bytecode cached (a shell with PYTHONDONTWRITEBYTECODE would otherwise have
    # every run compile each module again, 0.1 s of the command's start); one untimed run
    # writes the cache first
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | OFFLINE
    subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        out = done.stdout
    return {
        "wall_median": statistics.median(walls),
        "wall_min": min(walls),
        "cpu_median": statistics.median(cpus),
        "stdout": out,
    }


def accelerate_cli_attempt(accelerate: str, config_dir: Path) -> dict[str, Any]:
    """Run the real command on the local config and on the Hub id, offline; keep the errors."""
    attempts = {}
    for target in (str(config_dir), "meta-llama/Llama-3.1-8B"):
        done = subprocess.run(
            [accelerate, "estimate-memory", target, "--library_name", "transformers"],
            capture_output=True,
            text=True,
            env=os.environ | OFFLINE,
        )
        last = (done.stderr.strip().splitlines() or [""])[-1]
        attempts[target] = {"exit_code": done.returncode, "last_line": last[:240]}
    return attempts


def in_process_speed() -> dict[str, float]:
    """Median CPU microseconds per estimate() call (input already validated) for three setups;
    CPU time, not wall time, because the benchmark machine's cores are shared."""
    sys.path.insert(0, str(ROOT))
    from tools.architectures.registry import lookup_model
    from tools.memory import EstimateInput, estimate

    setups: dict[str, dict[str, Any]] = {
        "full, Llama 3.1 8B": dict(
            model=lookup_model("llama 3.1 8b"), method="full", gradient_checkpointing="none"
        ),
        "qlora, Mixtral 8x7B, ZeRO-3": dict(
            model=lookup_model("mixtral 8x7b"),
            method="qlora",
            zero_stage=3,
            num_gpus=8,
            optimizer="adamw",
            gradient_checkpointing="none",
        ),
        "lora, Llama 3.1 70B, TP 8, full recompute": dict(
            model=lookup_model("llama 3.1 70b"),
            method="lora",
            tensor_parallel=8,
            gradient_checkpointing="full",
        ),
    }
    out = {}
    for name, settings in setups.items():
        inp = EstimateInput(**settings)
        per_call = timeit.repeat(
            partial(estimate, inp), number=200, repeat=7, timer=time.process_time
        )
        out[name] = statistics.median(per_call) / 200 * 1e6
    return out


def published_figures() -> list[tuple[str, str, str]]:
    """(what, published, ours) rows, all computed here by the estimator, each with the engine
    the published figure assumes: ZeRO's and DeepSpeed's accounting is DeepSpeed's (16-bit
    weights and gradients, fp32 master in the optimizer); the QLoRA paper trains with the
    Hugging Face Trainer without DeepSpeed (plain PyTorch)."""
    sys.path.insert(0, str(ROOT))
    from tools.architectures.registry import lookup_model
    from tools.memory import EstimateInput, estimate
    from tools.memory.states.model_states import shard_model_states

    rows = []
    psi = 7_500_000_000
    for nd, printed in ((64, ("31.4", "16.6", "1.88")), (1024, ("30.1", "15.1", "0.12"))):
        for stage in (1, 2, 3):
            w, g, o = shard_model_states(2 * psi, 2 * psi, 12 * psi, stage, nd)
            rows.append(
                (
                    f"ZeRO Table 1, 7.5B, K=12, Nd={nd}, stage {stage} (GB)",
                    printed[stage - 1],
                    f"{(w + g + o) / 1e9:.4g}",
                )
            )

    def total(model: Any, **settings: Any) -> int:
        return estimate(EstimateInput(model=model, **settings)).per_gpu.total

    m65 = lookup_model("llama 2 70b").model_copy(update=LLAMA_65B)
    full = total(m65, method="full", engine="deepspeed", gradient_checkpointing="full", seq_len=512)
    autocast = total(
        m65, method="full", engine="pytorch", gradient_checkpointing="full", seq_len=512
    )
    qlora_args = dict(
        method="qlora",
        lora_rank=64,
        lora_dropout=0.1,
        optimizer="paged-adamw-8bit",
        gradient_checkpointing="full",
        seq_len=512,
    )
    rows.append(
        (
            "QLoRA paper: 16-bit full fine-tuning of LLaMA-65B, DeepSpeed engine (GB)",
            "> 780",
            f"{full / 1e9:.0f} (model states {16 * m65.total_params() / 1e9:.0f})",
        )
    )
    rows.append(
        (
            "  same under plain PyTorch autocast, fp32 weights, foreach AdamW (GB)",
            "-",
            f"{autocast / 1e9:.0f}",
        )
    )
    rows.append(
        (
            "QLoRA paper: QLoRA of LLaMA-65B, bf16 adapters as in its script, PyTorch (GB)",
            "< 48",
            f"{total(m65, precision='bf16', engine='pytorch', **qlora_args) / 1e9:.1f}",
        )
    )
    rows.append(
        (
            "  same with PEFT's default fp32 adapters under bf16 autocast (GB)",
            "-",
            f"{total(m65, precision='bf16-mixed', engine='pytorch', **qlora_args) / 1e9:.1f}",
        )
    )
    rows += deepspeed_rows(lookup_model("llama 3.1 8b"))
    return rows


def deepspeed_rows(model: Any) -> list[tuple[str, str, str]]:
    """DeepSpeed's zero2/zero3 estimators (restated from stage_1_and_2.py / stage3.py) beside
    our model states under the DeepSpeed engine, Llama 3.1 8B on 8 GPUs of one node,
    additional_buffer_factor 1.5. Ours are the weights, gradients and optimizer state live at
    the optimizer step, the one moment that holds all three (the peak, inside the backward
    pass, has no gradients yet)."""
    from tools.memory import EstimateInput, estimate
    from tools.memory.states.inventory import largest_module_params

    psi, largest, gpus, gib = model.total_params(), largest_module_params(model), 8, 2**30
    ds = {
        "ZeRO-2": (2 * psi + int(18 * psi / gpus), psi * 4 * gpus * 1.5),
        "ZeRO-2 + offload": (2 * psi, psi * max(4 * gpus, 16) * 1.5),
        "ZeRO-3": (4 * largest + int(18 * psi / gpus), largest * 4 * gpus * 1.5),
        "ZeRO-3 + offload optimizer": (4 * largest + int(2 * psi / gpus), psi * 16 * 1.5),
    }
    rows = []
    for name, (gpu, cpu) in ds.items():
        stage = 2 if name.startswith("ZeRO-2") else 3
        r = estimate(
            EstimateInput(
                model=model,
                method="full",
                gradient_checkpointing="none",
                engine="deepspeed",
                zero_stage=stage,
                num_gpus=gpus,
                offload_optimizer="offload" in name,
            )
        )
        step = next(m for m in r.moments if m.name == "optimizer step")
        ours = step.weights + step.gradients + step.optimizer
        rows.append(
            (
                f"DeepSpeed {name}, Llama 3.1 8B, 8 GPUs: GPU / CPU per node (GiB)",
                f"{gpu / gib:.2f} / {cpu / gib:.2f}",
                f"{ours / gib:.2f} / {r.cpu_offload_bytes * gpus / gib:.2f}",
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--accelerate", default=str(VENV_BIN / "accelerate"))
    parser.add_argument("--accelerate-python", default=sys.executable)
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    args = parser.parse_args(argv)

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        config_dir = Path(tmp)
        (config_dir / "config.json").write_text(json.dumps(LLAMA_31_8B), encoding="utf-8")
        ours = timed_runs(
            [
                str(VENV_BIN / "gpu-advisor"),
                "estimate",
                "--config",
                str(config_dir / "config.json"),
                "--method",
                "full",
                "--checkpointing",
                "none",
                "--json",
            ],
            args.runs,
        )
        theirs = timed_runs(
            [args.accelerate_python, "-c", ACCELERATE_SCRIPT, str(config_dir)],
            max(3, args.runs // 2),
        )
        attempts = accelerate_cli_attempt(args.accelerate, config_dir)
        # The same config without `torch_dtype`: transformers then builds the meta model in fp32.
        no_dtype = {k: v for k, v in LLAMA_31_8B.items() if k != "torch_dtype"}
        (config_dir / "config.json").write_text(json.dumps(no_dtype), encoding="utf-8")
        fp32_built = timed_runs(
            [args.accelerate_python, "-c", ACCELERATE_SCRIPT, str(config_dir)], 1
        )
    ours_json, theirs_json = json.loads(ours.pop("stdout")), json.loads(theirs.pop("stdout"))
    results = {
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "ours": ours,
        "accelerate_function_process": theirs,
        "accelerate_cli": attempts,
        "median_wall_ratio": theirs["wall_median"] / ours["wall_median"],
        "median_cpu_ratio": theirs["cpu_median"] / ours["cpu_median"],
        "accelerate_figures": theirs_json,
        "accelerate_figures_without_torch_dtype": json.loads(fp32_built["stdout"]),
        "our_total_bytes": ours_json["per_gpu"]["total"],
        "our_model_states_bytes": sum(
            ours_json["model_states"][f"unsharded_{k}"]
            for k in ("weights", "gradients", "optimizer")
        ),
        "our_setup": {
            "engine": ours_json["engine"],
            "optimizer_impl": ours_json["optimizer_impl"],
            "peak_moment": ours_json["peak_moment"],
            "step_temporaries": ours_json["model_states"]["optimizer_step_temporaries"],
            "activations": ours_json["activations"]["total"],
        },
        "estimate_call_us": in_process_speed(),
        "published": published_figures(),
    }
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(markdown(results))
    return 0


def markdown(r: dict[str, Any]) -> str:
    gib = 2**30
    acc, setup = r["accelerate_figures"], r["our_setup"]
    lines = [
        f"Load average before/after: {r['load_average_before'][0]:.1f} / "
        f"{r['load_average_after'][0]:.1f} (2 shared cores).",
        "",
        "| process | median wall s | min wall s | median CPU s |",
        "|---|---|---|---|",
    ]
    for name, key in (
        ("gpu-advisor estimate --config", "ours"),
        ("Accelerate, same work offline", "accelerate_function_process"),
    ):
        t = r[key]
        lines.append(
            f"| {name} | {t['wall_median']:.3f} | {t['wall_min']:.3f} | {t['cpu_median']:.3f} |"
        )
    lines += [
        "",
        f"Median ratio (Accelerate / ours): wall {r['median_wall_ratio']:.1f}x, "
        f"CPU {r['median_cpu_ratio']:.1f}x.",
        "",
        "`accelerate estimate-memory` itself, offline:",
    ]
    for target, a in r["accelerate_cli"].items():
        lines.append(f"- `{target}`: exit {a['exit_code']}, `{a['last_line']}`")
    lines += [
        "",
        f"Accelerate on this config: total {acc['total_fp32'] / gib:.2f} GiB fp32, largest "
        f"layer {acc['largest_layer'] / gib:.2f} GiB, 'Training using Adam' "
        f"{acc['training_float16'] / gib:.2f} GiB (float16/bf16), "
        f"{acc['training_float32'] / gib:.2f} GiB (float32). Ours for bf16-mixed full "
        f"fine-tuning, micro-batch 1 x 2048, engine {setup['engine']} (the default on one GPU), "
        f"{setup['optimizer_impl']} AdamW: model states "
        f"{r['our_model_states_bytes'] / gib:.2f} GiB, peak {r['our_total_bytes'] / gib:.2f} "
        f"GiB at the {setup['peak_moment']} (with the step's "
        f"{setup['step_temporaries'] / gib:.2f} GiB of temporaries; activations "
        f"{setup['activations'] / gib:.2f} GiB at their own peak).",
        f"Without `torch_dtype` in the config Accelerate reports "
        f"{r['accelerate_figures_without_torch_dtype']['total_fp32'] / gib:.2f} GiB fp32 "
        f"and {r['accelerate_figures_without_torch_dtype']['training_float16'] / gib:.2f} GiB "
        "for Adam training.",
        "",
        "| estimate() call | median CPU µs |",
        "|---|---|",
        *(f"| {k} | {v:.0f} |" for k, v in r["estimate_call_us"].items()),
        "",
        "| figure | published | ours |",
        "|---|---|---|",
        *(f"| {what} | {pub} | {ours} |" for what, pub, ours in r["published"]),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
