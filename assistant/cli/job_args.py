"""The job flags of `gpu-advisor estimate` and `gpu-advisor rank`, generated from `JobSpec`.

Every flag is a field of `tools.job.JobSpec`: its name is the field's (`--seq-len`), or the short
name 0.1 introduced (`--batch`, `--checkpointing`, `--tp`, `--zero`, `--gpus`, `--grad-accum`,
`--context-gib`); its choices come from the field's vocabulary, its help text from the field's
description and its default from `tools.job.defaults`. A field added to `JobSpec` appears here
by naming its group. Flags left out stay open, so the job resolves them with the stated defaults
(`tools.advice.resolve_job`), which the command then prints. Parser-building only: no heavy
imports.
"""

from __future__ import annotations

import argparse
import re
import types
from collections.abc import Iterable
from typing import Any, Literal, Union, get_args, get_origin

from pydantic.fields import FieldInfo

from tools.job import DEFAULTS, FIELD_GROUPS, JobSpec, Money, parse_money

__all__ = ["FLAG_NAMES", "add_job_arguments", "count", "job_spec", "spec_fields"]

# Flags whose name is not the field's own (kept from the first release's command line).
FLAG_NAMES: dict[str, str] = {
    "micro_batch_size": "--batch",
    "gradient_checkpointing": "--checkpointing",
    "tensor_parallel": "--tp",
    "zero_stage": "--zero",
    "num_gpus": "--gpus",
    "gradient_accumulation_steps": "--grad-accum",
    "cuda_context_gib": "--context-gib",
    "gpus": "--gpu",
}
_SUFFIXES = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_METAVARS = {
    "max_price_per_hour": "MONEY",
    "budget": "MONEY",
    "deadline_hours": "H",
    "providers": "P[,P]",
    "regions": "R[,R]",
    "gpus": "GPU[,GPU]",
}


def count(text: str) -> float:
    """'2e8', '200M', '1.5B' -> a number (k, M, B/G, T suffixes)."""
    match = re.fullmatch(r"\s*([0-9.]+(?:e[+-]?\d+)?)\s*([kmbgt]?)\s*", text.lower())
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count such as 2e8, 200M or 1.5B")
    return float(match.group(1)) * _SUFFIXES[match.group(2)]


def _whole_count(text: str) -> int:
    return round(count(text))


def _money(text: str) -> Money:
    try:
        return parse_money(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _zero(text: str) -> str:
    return text  # a stage or an alias; JobSpec reads it and names what is valid


def spec_fields(groups: Iterable[str]) -> list[str]:
    """The JobSpec fields of `groups` (group names, or single field names), in order."""
    names: list[str] = []
    for group in groups:
        names += FIELD_GROUPS.get(group, (group,))  # type: ignore[call-overload]
    return names


def _inner(annotation: Any) -> Any:
    """`X | None` -> X."""
    if get_origin(annotation) in (Union, types.UnionType):
        kept = [a for a in get_args(annotation) if a is not type(None)]
        return kept[0] if len(kept) == 1 else annotation
    return annotation


def _default_text(name: str) -> str:
    default = DEFAULTS.get(name)
    if default is None or default.value is None:
        return ""
    by_method = "".join(f"; {m}: {v}" for m, v in default.by_method.items())
    return f" (default {default.value}{by_method})"


def _argument(parser: argparse.ArgumentParser, name: str, info: FieldInfo) -> None:
    flag = FLAG_NAMES.get(name, "--" + name.replace("_", "-"))
    kind = _inner(info.annotation)
    help_text = (info.description or name) + _default_text(name)
    options: dict[str, Any] = {"dest": name, "default": None, "help": help_text}
    if name == "spot":
        parser.add_argument(
            flag, nargs="?", const="allowed", choices=get_args(kind), metavar="POLICY",
            help=help_text + "; a bare --spot is 'allowed'", dest=name, default=None,
        )  # fmt: skip
        parser.add_argument("--no-spot", dest=name, action="store_const", const="never",
                            help="on-demand prices only (--spot never)")  # fmt: skip
        return
    if name == "attention":  # also its aliases (flash, fa2, ...), which JobSpec reads
        options["metavar"] = "{" + ",".join(get_args(kind)) + ",flash}"
    elif get_origin(kind) is Literal:
        options["choices"] = get_args(kind)
    elif kind is bool:
        options["action"] = argparse.BooleanOptionalAction
    elif kind is Money:
        options.update(type=_money, metavar=_METAVARS.get(name, "MONEY"))
    elif get_origin(kind) is list:
        options.update(action="append", metavar=_METAVARS.get(name, "X[,X]"))
    elif name == "zero_stage":
        options["type"] = _zero
    elif name == "tokens":
        options.update(type=count, metavar="N")
    elif name == "samples":
        options.update(type=_whole_count, metavar="N")
    elif kind in (int, float):
        options["type"] = kind
    parser.add_argument(flag, **options)


def add_job_arguments(parser: argparse.ArgumentParser, groups: Iterable[str]) -> None:
    """The model (exactly one of --model/--params/--config) and a flag per field of `groups`."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="registry name, e.g. 'llama 3.1 8b' or an HF id")
    source.add_argument("--params", help="parameter count, e.g. 7e9 or 70B (Llama-shaped guess)")
    source.add_argument("--config", help="path to a Hugging Face config.json (or its folder)")
    fields = JobSpec.model_fields
    for name in spec_fields(groups):
        _argument(parser, name, fields[name])


def _split(values: list[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def job_spec(args: argparse.Namespace, groups: Iterable[str]) -> JobSpec:
    """The JobSpec the flags of `groups` describe (flags not given stay open); `--params` is
    always read as a parameter count."""
    model: Any = args.model or args.config
    if args.params is not None:
        from tools.architectures.param_guess import model_from_param_count

        model = model_from_param_count(args.params)
    values: dict[str, Any] = {"model": model}
    for name in spec_fields(groups):
        value = getattr(args, name, None)
        if value is None:
            continue
        values[name] = _split(value) if isinstance(value, list) else value
    return JobSpec.parse(values)
