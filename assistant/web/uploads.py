"""Uploaded model config.json files: at most 1 MB, parsed as JSON, read as an architecture.

Only plain JSON is read (never code); the size is checked on the bytes actually read, not on a
reported size. Every failure is an `UploadError` (an `InvalidInputError`) that says, in a kind
and its details, what was wrong; `upload_problem` words it in the interface language together
with what is valid. The model is named by the file's `_name_or_path`, else its architecture
class (`architectures[0]`), else "your config" in the interface language.
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from pathlib import Path
from typing import Any, Literal

from assistant.web import cells
from assistant.web.ui_strings import ui_format, ui_text
from tools.architectures.architecture import ModelArch
from tools.architectures.hf_config import model_from_hf_config
from tools.errors import InvalidInputError

__all__ = ["MAX_UPLOAD_BYTES", "UploadError", "model_from_upload", "read_upload", "upload_problem"]

MAX_UPLOAD_BYTES = 1_000_000  # 1 MB; real config.json files are a few kilobytes
SOURCE = "uploaded config.json"
_FIELD = "config.json"
Problem = Literal[
    "too_big",
    "not_utf8",
    "not_json",
    "not_finite",
    "too_complex",
    "not_object",
    "not_config",
    "unreadable",
    "wrong_type",
]
_JSON_KINDS = {list: "json_array", str: "json_string", int: "json_number", float: "json_number"}
_KEY_NAME = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")
_UP_TO = re.compile(r"up to ([\d,]+)")


class _NonFinite(str):
    """A number JSON cannot hold, as the file wrote it: NaN, Infinity, -Infinity, or a number
    too large for a float (1e999). Python's parser accepts them; a config must not."""


def _non_finite_float(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


def _first_non_finite(data: Any, where: str = "") -> tuple[str, str] | None:
    """Where the first non-finite number in `data` is (`rope_scaling.factor`, `layers[2]`) and
    how the file wrote it, or None."""
    if isinstance(data, _NonFinite):
        return where, str(data)
    items: Any = data.items() if isinstance(data, dict) else ()
    if isinstance(data, list):
        items = enumerate(data)
    for key, value in items:
        inner = f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else key
        found = _first_non_finite(value, inner)
        if found is not None:
            return found
    return None


class UploadError(InvalidInputError):
    """An upload that cannot be used: which problem (`kind`) and its details (`details`)."""

    def __init__(self, kind: Problem, name: str, valid: str, **details: str | int) -> None:
        self.kind = kind
        self.details = details
        super().__init__(_FIELD, name, valid)


def read_upload(path: Path, max_bytes: int = MAX_UPLOAD_BYTES) -> dict[str, Any]:
    """The JSON object in the uploaded file at `path`."""
    if path.suffix.lower() != ".json":
        raise UploadError("wrong_type", path.name, "a .json file")
    try:
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError:
        raise UploadError("unreadable", path.name, "a readable uploaded file") from None
    if len(raw) > max_bytes:
        size = path.stat().st_size if path.exists() else len(raw)
        raise UploadError(
            "too_big",
            f"{path.name} (over {max_bytes:,} bytes)",
            f"a file of at most {max_bytes:,} bytes",
            size=size,
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UploadError("not_utf8", path.name, "a UTF-8 JSON file") from None
    try:
        data = json.loads(text, parse_constant=_NonFinite, parse_float=_non_finite_float)
    except json.JSONDecodeError as exc:
        where = f"{exc.msg}, line {exc.lineno} column {exc.colno}"
        raise UploadError(
            "not_json", path.name, f"a UTF-8 JSON file ({where})", line=exc.lineno, column=exc.colno
        ) from None
    except (RecursionError, ValueError):  # nested past the parser's depth, or a huge integer
        raise UploadError(
            "too_complex", path.name, "a config.json: shallow nesting and ordinary numbers"
        ) from None
    if not isinstance(data, dict):
        kind = _JSON_KINDS.get(float if isinstance(data, _NonFinite) else type(data), "json_other")
        raise UploadError(
            "not_object", path.name, 'a JSON object such as {"model_type": ...}', json_kind=kind
        )
    found = _first_non_finite(data)
    if found is not None:
        key, literal = found
        raise UploadError(
            "not_finite", f"{path.name}: {key} = {literal}",
            "finite numbers (NaN and Infinity are not JSON numbers)", setting=key, literal=literal,
        )  # fmt: skip
    return data


def model_name(data: dict[str, Any], lang: str) -> str:
    """What the model is called: `_name_or_path`, else the architecture class, else
    'your config' in `lang`."""
    for candidate in (data.get("_name_or_path"), *(data.get("architectures") or [])[:1]):
        if isinstance(candidate, str) and candidate.strip():
            return candidate.strip()
    return ui_text(lang, "your_config")


def model_from_upload(path: Path, lang: str = "en", max_bytes: int = MAX_UPLOAD_BYTES) -> ModelArch:
    """The architecture an uploaded Hugging Face config.json describes."""
    data = read_upload(path, max_bytes)
    name = model_name(data, lang)
    with tempfile.TemporaryDirectory(prefix="gpu-advisor-config-") as folder:
        # A clean copy: the upload's own name and location never reach the model's id or source.
        copy = Path(folder) / "config.json"
        copy.write_text(json.dumps({**data, "_name_or_path": name}), encoding="utf-8")
        try:
            arch = model_from_hf_config(copy)
        except InvalidInputError as exc:
            keys = ", ".join(dict.fromkeys(_KEY_NAME.findall(exc.valid)))
            limit = _UP_TO.search(exc.valid)
            detail = keys or f"{exc.field} = {exc.value}" + (f" > {limit[1]}" if limit else "")
            raise UploadError("not_config", path.name, exc.valid, detail=detail) from None
    return arch.model_copy(update={"id": name, "name": name, "source": SOURCE})


def _bytes(size: int, lang: str) -> str:
    return f"{cells.count(size, lang)} {ui_text(lang, 'col_bytes')}"


def upload_problem(error: UploadError, file_name: str, lang: str) -> str:
    """One line in `lang`: the file was not used, why, and what a valid upload is."""
    details: dict[str, str] = {}
    if error.kind == "too_big":
        details["size"] = _bytes(int(error.details["size"]), lang)
    elif error.kind == "not_json":
        details["detail"] = f"{error.details['line']}:{error.details['column']}"
    elif error.kind == "not_object":
        details["kind"] = ui_text(lang, str(error.details["json_kind"]))
    elif error.kind == "not_finite":
        details = {
            "setting": str(error.details["setting"]),
            "literal": str(error.details["literal"]),
        }
    elif error.kind == "not_config":
        details["detail"] = str(error.details["detail"])
    problem = ui_format(lang, f"upload_{error.kind}", **details)
    limit = _bytes(MAX_UPLOAD_BYTES, lang)
    return ui_format(lang, "upload_failed", file=file_name, problem=problem, limit=limit)
