"""`gpu-advisor models`: list the built-in architectures, or show one model's dimensions.

    gpu-advisor models [--json]
    gpu-advisor models show NAME [--json]    NAME: registry name, config.json path, or "7B"

The registry is imported inside the handlers so that building the parser stays light.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tools.architectures.architecture import ModelArch


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "models", help="list built-in model architectures or show one model's dimensions"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(handler=list_handler, settings_free=True)
    commands = parser.add_subparsers(dest="models_command", metavar="show")
    show = commands.add_parser("show", help="dimensions and parameter counts of one model")
    show.add_argument(
        "name", nargs="+", help="model name (e.g. 'llama 3 70b'), config.json path, or count '7B'"
    )
    # SUPPRESS keeps `models --json show NAME` working: the sub-parser only sets json when given.
    show.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON instead of text"
    )
    show.set_defaults(handler=show_handler, settings_free=True)


def _billions(n: int) -> str:
    return f"{n / 1e9:.2f}"


def summary(arch: ModelArch) -> dict[str, Any]:
    """The fields `models` lists for each architecture; counts in parameters."""
    return {
        "id": arch.id,
        "name": arch.name,
        "family": arch.family,
        "arch": arch.arch,
        "total_params": arch.total_params(),
        "active_params": arch.active_params(),
    }


def list_handler(args: argparse.Namespace) -> int:
    from tools.architectures.registry import list_models

    rows = [summary(arch) for arch in list_models()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    header = f"{'ID':<36} {'NAME':<20} {'ARCH':<16} {'PARAMS (B)':>10} {'ACTIVE (B)':>10}"
    print(header)
    for row in rows:
        print(
            f"{row['id']:<36} {row['name']:<20} {row['arch']:<16} "
            f"{_billions(row['total_params']):>10} {_billions(row['active_params']):>10}"
        )
    return 0


def details(arch: ModelArch) -> dict[str, Any]:
    """Every dimension plus computed counts, the breakdown and the linear modules."""
    return {
        **arch.model_dump(mode="json"),
        "total_params": arch.total_params(),
        "active_params": arch.active_params(),
        "breakdown": arch.param_breakdown().model_dump(),
        "linear_modules": [m.model_dump() for m in arch.linear_modules()],
    }


_DIMENSIONS = (
    ("hidden size", "hidden_size"),
    ("layers", "num_layers"),
    ("decoder layers", "num_decoder_layers"),
    ("attention heads", "num_heads"),
    ("key/value heads", "num_kv_heads"),
    ("head dim", "head_dim"),
    ("intermediate size", "intermediate_size"),
    ("vocabulary", "vocab_size"),
    ("context (tokens)", "max_position_embeddings"),
    ("tied embeddings", "tied_embeddings"),
    ("gated MLP", "gated_mlp"),
    ("experts", "num_experts"),
    ("experts per token", "experts_per_token"),
    ("q/k/v bias", "qkv_bias"),
    ("norm", "norm"),
)


def _show_text(arch: ModelArch) -> None:
    print(f"{arch.name} ({arch.id})")
    print(f"  {'family':<20} {arch.family}, {arch.arch}")
    for label, field in _DIMENSIONS:
        value = getattr(arch, field)
        if field == "num_decoder_layers" and not value:
            continue
        print(f"  {label:<20} {value}")
    total, active = arch.total_params(), arch.active_params()
    print(f"  {'total parameters':<20} {total:,} ({_billions(total)} B)")
    print(f"  {'active per token':<20} {active:,} ({_billions(active)} B)")
    for name, count in arch.param_breakdown().model_dump().items():
        if name != "total":
            print(f"    {name:<18} {count:,}")
    print(f"  {'source':<20} {arch.source}")
    for assumption in arch.assumptions:
        print(f"  assumption: {assumption}")


def show_handler(args: argparse.Namespace) -> int:
    from tools.architectures.registry import resolve_model

    arch = resolve_model(" ".join(args.name))
    if args.json:
        print(json.dumps(details(arch), indent=2))
    else:
        _show_text(arch)
    return 0
