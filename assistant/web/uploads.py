"""Uploaded model config.json files: at most 1 MB, parsed as JSON, read as an architecture.

Only plain JSON is read (never code); the size is checked on the bytes actually read, not on a
reported size. Every failure is an `InvalidInputError` saying what was wrong and what is valid.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from tools.architectures.architecture import ModelArch
from tools.architectures.hf_config import model_from_hf_config
from tools.errors import InvalidInputError

MAX_UPLOAD_BYTES = 1_000_000  # 1 MB; real config.json files are a few kilobytes
_FIELD = "config.json"


def read_upload(path: Path, max_bytes: int = MAX_UPLOAD_BYTES) -> dict[str, Any]:
    """The JSON object in the uploaded file at `path`."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InvalidInputError(_FIELD, path.name, "a readable uploaded file") from exc
    if len(raw) > max_bytes:
        raise InvalidInputError(
            _FIELD,
            f"{path.name} (over {max_bytes:,} bytes)",
            f"a file of at most {max_bytes:,} bytes",
        )
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInputError(_FIELD, path.name, f"a UTF-8 JSON file ({exc})") from None
    if not isinstance(data, dict):
        raise InvalidInputError(_FIELD, path.name, 'a JSON object such as {"model_type": ...}')
    return data


def model_from_upload(path: Path, max_bytes: int = MAX_UPLOAD_BYTES) -> ModelArch:
    """The architecture an uploaded Hugging Face config.json describes."""
    data = read_upload(path, max_bytes)
    with tempfile.TemporaryDirectory(prefix="gpu-advisor-config-") as folder:
        # A clean copy: the upload's own name and location never reach the model's id or source.
        name = str(data.get("_name_or_path") or "uploaded-model")
        copy = Path(folder) / "config.json"
        copy.write_text(json.dumps({**data, "_name_or_path": name}), encoding="utf-8")
        arch = model_from_hf_config(copy)
    return arch.model_copy(update={"source": "uploaded config.json"})
