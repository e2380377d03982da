"""Uploaded config.json: size cap, JSON only, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.web.uploads import MAX_UPLOAD_BYTES, model_from_upload, read_upload
from tools.errors import InvalidInputError

LLAMA_8B = {
    "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
    "vocab_size": 128256, "max_position_embeddings": 131072, "_name_or_path": "my-llama",
}  # fmt: skip


def test_a_llama_config_reads_as_its_architecture(tmp_path: Path) -> None:
    path = tmp_path / "upload.json"
    path.write_text(json.dumps(LLAMA_8B), encoding="utf-8")
    arch = model_from_upload(path)
    assert arch.total_params() == 8_030_261_248, "Llama 3.1 8B's exact count"
    assert (arch.name, arch.source) == ("my-llama", "uploaded config.json")


def test_over_one_megabyte_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b" " * MAX_UPLOAD_BYTES + b"{}")
    with pytest.raises(InvalidInputError, match=r"at most 1,000,000 bytes"):
        read_upload(path)


@pytest.mark.parametrize(
    ("content", "valid"),
    [
        (b"{not json", "a UTF-8 JSON file"),
        (b"\xff\xfe", "a UTF-8 JSON file"),
        (b"[1, 2]", "a JSON object"),
    ],
)
def test_non_json_and_non_objects_are_refused(tmp_path: Path, content: bytes, valid: str) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(content)
    with pytest.raises(InvalidInputError, match=valid):
        model_from_upload(path)


def test_a_json_object_without_dimensions_names_what_is_missing(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama"}', encoding="utf-8")
    with pytest.raises(InvalidInputError, match="hidden_size"):
        model_from_upload(path)
