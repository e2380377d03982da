"""Load the published-run case files and read what a case says about its run.

Both files in ../shared/calibration have the same outer shape, `{"about": {...}, "cases": [...]}`,
and every case carries an `id`, a `source` (repository, path, commit, quote) and a `model`; the
rest differs per file (memory cases have `gpu_advisor_flags`, `metric_class`, `measured`;
throughput cases have `gpu`, `expected`). `PublishedCase` types the common part and keeps the
rest as extra fields, so one loader serves both benchmarks:

    file = load_cases(shared_calibration() / "gpu_memory_published.json")
    for case in file.cases:
        case.id, case.text(), stack_of(case), case.extra("metric_class")

`stack_of` names the training stack a case ran on in the estimator's vocabulary (`tools.enums.
Stack`), read from the case's own words; `write_configs` writes the model configs a case embeds
(`model.config`) as `<folder>/<config_key>/config.json`, the `{configs}` of the memory flags.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tools.enums import Stack

__all__ = [
    "CaseFile",
    "PublishedCase",
    "load_cases",
    "shared_calibration",
    "stack_of",
    "write_configs",
]

ROOT = Path(__file__).resolve().parents[2]
# Free-text fields a case uses to describe its run, in the order `PublishedCase.text` joins them.
_TEXT_FIELDS = (
    "stack", "source_key", "precision", "quantization", "optimizer", "gradient_checkpointing",
    "sharding", "derived", "unmodelled_by_gpu_advisor", "notes", "derived_assumptions",
)  # fmt: skip
_SOURCE_TEXT = ("repo", "path", "quote", "measured_by", "note")
# The stack a case ran on, from the words its description uses (first match wins; the rest, the
# Hugging Face Trainer, TRL, PEFT, Accelerate and plain PyTorch loops over transformers models,
# is `hf`).
_STACK_WORDS: tuple[tuple[Stack, str], ...] = (
    ("litgpt", r"\blitgpt\b|lit-gpt|Lightning-AI/lit"),
    ("torchtune", r"\btorchtune\b"),
    ("torchtitan", r"\btorchtitan\b"),
    ("unsloth", r"\bunsloth\b"),
    ("megatron", r"\bmegatron\b|\bnemo\b"),
)


def shared_calibration() -> Path:
    """Where the published cases live: ../shared/calibration beside the repository."""
    return ROOT.parent / "shared" / "calibration"


class PublishedCase(BaseModel):
    """One published run: the fields both case files share; everything else stays as extras."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: str
    source: dict[str, Any] = Field(description="repo, path, commit, quote of the figure")
    model: dict[str, Any] = Field(description="name, params, registry/config_key, config")
    kind: str = Field("measured_peak", description="measured_peak, fit_outcome, ...")
    method: str | None = None
    stack: str | None = Field(None, description="the training stack as the source states it")

    def extra(self, name: str, default: Any = None) -> Any:
        """A file-specific field (e.g. `metric_class`, `gpu_advisor_flags`, `expected`)."""
        extras = self.model_extra or {}
        return extras.get(name, default)

    def text(self) -> str:
        """Every free-text description of the run, joined: what keyword rules read."""
        parts: list[str] = []
        for name in _TEXT_FIELDS:
            value = getattr(self, name, None) if name == "stack" else self.extra(name)
            parts += _strings(value)
        parts += _strings([self.source.get(name) for name in _SOURCE_TEXT])
        return "\n".join(parts)

    @property
    def config_key(self) -> str | None:
        key = self.model.get("config_key")
        return str(key) if key else None


class CaseFile(BaseModel):
    """A case file: its `about` block (field meanings, exclusions) and its cases."""

    model_config = ConfigDict(frozen=True)

    about: dict[str, Any]
    cases: list[PublishedCase]


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, Iterable):
        return [s for v in value for s in _strings(v)]
    return [str(value)]


def load_cases(path: Path | str) -> CaseFile:
    """Parse a case file (plain JSON, validated)."""
    return CaseFile.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))


def stack_of(case: PublishedCase) -> Stack:
    """The stack the case ran on, read from its `stack`, `source_key` and source repository."""
    words = " ".join(
        str(v) for v in (case.stack, case.extra("source_key"), case.source.get("repo")) if v
    )
    return stack_named(words)


def stack_named(words: str) -> Stack:
    """The stack profile `words` name (a stack's or its repository's name); hf by default."""
    for stack, pattern in _STACK_WORDS:
        if re.search(pattern, words, flags=re.IGNORECASE):
            return stack
    return "hf"


def write_configs(cases: Iterable[PublishedCase], folder: Path) -> dict[str, Path]:
    """Write each embedded model config to `<folder>/<config_key>/config.json`; key -> path."""
    written: dict[str, Path] = {}
    for case in cases:
        key, config = case.config_key, case.model.get("config")
        if key is None or not isinstance(config, dict) or key in written:
            continue
        target = folder / key / "config.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(config), encoding="utf-8")
        written[key] = target
    return written
