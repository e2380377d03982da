"""The `gpu-advisor` command line.

Each sub-command lives in its own module with a light `register(subparsers)` function; heavy
imports (torch, transformers, chromadb, gradio) happen only inside the handler that needs them, so
`estimate`, `models` and `rank` start fast.

Everything `main` prints about a failure is one line with credentials removed
(`tools.redaction`): input errors exit 2; an unusable environment (a folder that cannot be
written, a Chroma server that is down or slow) exits 1. While a command runs, every log record
of the process is redacted too. A bug still shows its traceback, redacted, and exits 1.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence

from pydantic import ValidationError

from tools.errors import AdvisorError, NotWritableError, write_failure
from tools.redaction import env_secrets, install_log_redaction, redact

# Modules under assistant.cli that provide `register(subparsers) -> None`. A module that does not
# exist yet is skipped, so sub-commands can land one issue at a time.
SUBCOMMAND_MODULES = ("estimate", "models", "catalog", "rank", "kb", "ask", "serve")

EXIT_USAGE = 2
EXIT_ENVIRONMENT = 1  # the command was fine; a folder, a server or the code failed it


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


def format_validation_error(exc: ValidationError, secrets: Sequence[str] = ()) -> str:
    """One line per invalid field: the field, the value given, and what is valid."""
    lines = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "input"
        lines.append(redact(f"{field}: got {err.get('input')!r}; {err['msg']}", secrets))
    return "\n".join(lines)


def configured_secrets() -> list[str]:
    """The secrets of the configuration (`Settings.secrets()`), or of the environment alone
    when the settings do not validate (the command then reports that itself)."""
    from assistant.settings import Settings

    try:
        return Settings().secrets()
    except ValidationError:
        return env_secrets()


def _print_error(message: str, secrets: Sequence[str]) -> None:
    print(f"error: {redact(message, secrets)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    # a command that never reads the configuration (estimate, models) can only meet the
    # environment's keys; it skips loading the settings (a third of `estimate`'s start-up)
    secrets = env_secrets() if getattr(args, "settings_free", False) else configured_secrets()
    uninstall = install_log_redaction(secrets)
    try:
        return int(handler(args) or 0)
    except AdvisorError as exc:
        _print_error(str(exc), secrets)
        return EXIT_ENVIRONMENT if _environmental(exc) else EXIT_USAGE
    except ValidationError as exc:
        print(f"error: {format_validation_error(exc, secrets)}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        cause = write_failure(exc)
        if cause is not None:
            _print_error(f"cannot write {exc.filename or 'a file'} ({cause})", secrets)
        else:
            print(redact(traceback.format_exc(), secrets), file=sys.stderr, end="")
        return EXIT_ENVIRONMENT
    except Exception:
        print(redact(traceback.format_exc(), secrets), file=sys.stderr, end="")
        return EXIT_ENVIRONMENT
    finally:
        uninstall()


def _environmental(exc: AdvisorError) -> bool:
    """Whether an error is about the environment (a folder, a server), not the command."""
    from knowledge.errors import StoreUnavailableError

    return isinstance(exc, NotWritableError | StoreUnavailableError)


if __name__ == "__main__":
    raise SystemExit(main())
