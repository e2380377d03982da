"""The `gpu-advisor` command line.

Each sub-command lives in its own module with a light `register(subparsers)` function; heavy
imports (torch, transformers, chromadb, gradio) happen only inside the handler that needs them, so
`estimate`, `models` and `rank` start fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from pydantic import ValidationError

from tools.errors import AdvisorError

# Modules under assistant.cli that provide `register(subparsers) -> None`. A module that does not
# exist yet is skipped, so sub-commands can land one issue at a time.
SUBCOMMAND_MODULES = ("estimate", "models", "catalog", "rank", "kb", "ask", "serve")

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpu-advisor",
        description="Which cloud GPU should I rent to train or fine-tune this model?",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(f"assistant.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"assistant.cli.{name}":
                continue
            raise
        module.register(subparsers)
    return parser


def format_validation_error(exc: ValidationError) -> str:
    """One line per invalid field: the field, the value given, and what is valid."""
    lines = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "input"
        lines.append(f"{field}: got {err.get('input')!r}; {err['msg']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(handler(args) or 0)
    except AdvisorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ValidationError as exc:
        print(f"error: {format_validation_error(exc)}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
