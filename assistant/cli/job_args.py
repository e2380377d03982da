"""The training-job flags `gpu-advisor estimate` and `gpu-advisor rank` share.

Both describe one job the same way (model, method, precision, optimizer, LoRA, batch, sequence,
recomputation, tensor parallelism, engine); `estimate` adds the parallel plan (ZeRO stage, GPU
count, offload), which `rank` chooses per instance. Parser-building only: no heavy imports.
"""

from __future__ import annotations

import argparse
from typing import Any, get_args

from tools.memory.constants import Method, Optimizer, Precision

ENGINES = ("auto", "pytorch", "deepspeed")
OPTIMIZER_IMPLS = ("auto", "foreach", "for-loop", "fused")
ENGINE_HELP = (
    "pytorch: torch.autocast over fp32 weights (Hugging Face Trainer without DeepSpeed); "
    "deepspeed: 16-bit weights, fp32 master in the optimizer; auto (default): deepspeed under "
    "ZeRO >= 1 or offload, else pytorch"
)


def add_job_arguments(parser: argparse.ArgumentParser, engine_help: str = ENGINE_HELP) -> None:
    """The model (exactly one of --model/--params/--config) and how one GPU trains it."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="registry name, e.g. 'llama 3.1 8b' or an HF id")
    source.add_argument("--params", help="parameter count, e.g. 7e9 or 70B (Llama-shaped guess)")
    source.add_argument("--config", help="path to a Hugging Face config.json (or its folder)")
    parser.add_argument("--method", choices=get_args(Method), default="full")
    parser.add_argument("--precision", choices=get_args(Precision), default="bf16-mixed")
    parser.add_argument("--optimizer", choices=get_args(Optimizer), default="adamw")
    parser.add_argument("--lora-rank", type=int, help="LoRA rank r (default 16)")
    parser.add_argument("--lora-alpha", type=float, help="LoRA alpha (default 2 x rank)")
    parser.add_argument(
        "--lora-targets", help="all-linear (default), attention, mlp, or module names a,b,c"
    )
    parser.add_argument("--lora-dropout", type=float, help="LoRA dropout probability (default 0)")
    parser.add_argument("--batch", type=int, default=1, help="micro-batch: sequences per GPU")
    parser.add_argument("--seq-len", type=int, default=2048, help="tokens per sequence")
    parser.add_argument(
        "--checkpointing",
        choices=("none", "selective", "full"),
        default="none",
        help="activation recomputation",
    )
    parser.add_argument(
        "--attention", default="sdpa", help="sdpa (fused kernels, also flash) or eager"
    )
    parser.add_argument("--tp", type=int, default=1, help="tensor-parallel degree")
    parser.add_argument("--sequence-parallel", action="store_true", help="with --tp > 1")
    parser.add_argument("--context-gib", type=float, help="CUDA context + framework (default 1)")
    parser.add_argument("--fragmentation", type=float, help="allocator margin (default 0.10)")
    parser.add_argument("--engine", choices=ENGINES, help=engine_help)
    parser.add_argument(
        "--optimizer-impl",
        choices=OPTIMIZER_IMPLS,
        help="optimizer step: foreach (PyTorch's CUDA default, one extra state copy at the "
        "step), for-loop, fused (e.g. adamw_torch_fused, DeepSpeed); auto (default): fused "
        "under deepspeed, else foreach",
    )
    parser.add_argument(
        "--grad-accum",
        type=int,
        help="micro-batches per optimizer step (default 1); above 1 the gradients stay "
        "resident through forward and backward",
    )


def job_settings(args: argparse.Namespace) -> dict[str, Any]:
    """EstimateInput keyword arguments from `add_job_arguments` flags (unset ones left out, so
    they keep the estimator's defaults)."""
    settings: dict[str, Any] = {
        "model": args.model or args.params or args.config,
        "method": args.method,
        "precision": args.precision,
        "optimizer": args.optimizer,
        "micro_batch_size": args.batch,
        "seq_len": args.seq_len,
        "gradient_checkpointing": args.checkpointing,
        "attention": args.attention,
        "tensor_parallel": args.tp,
        "sequence_parallel": args.sequence_parallel,
    }
    optional = {
        "lora_rank": args.lora_rank,
        "lora_alpha": args.lora_alpha,
        "lora_targets": args.lora_targets,
        "lora_dropout": args.lora_dropout,
        "fragmentation": args.fragmentation,
        "cuda_context_bytes": None if args.context_gib is None else int(args.context_gib * 2**30),
        "engine": args.engine,
        "optimizer_impl": args.optimizer_impl,
        "gradient_accumulation_steps": args.grad_accum,
    }
    return settings | {k: v for k, v in optional.items() if v is not None}
