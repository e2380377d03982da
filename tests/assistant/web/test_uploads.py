"""Uploaded config.json: size cap, JSON only, the model's name, and what a failure says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.web.uploads import (
    MAX_UPLOAD_BYTES,
    UploadError,
    model_from_upload,
    read_upload,
    upload_problem,
)
from tests.fakes.jobs import LLAMA_8B_CONFIG
from tools.errors import InvalidInputError

NNB = "\u202f"


def _write(
    tmp_path: Path, content: bytes | str | dict[str, object], name: str = "config.json"
) -> Path:
    path = tmp_path / name
    if isinstance(content, dict):
        content = json.dumps(content)
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def test_a_llama_config_reads_as_its_architecture(tmp_path: Path) -> None:
    arch = model_from_upload(_write(tmp_path, LLAMA_8B_CONFIG, "upload.json"))
    assert arch.total_params() == 8_030_261_248, "Llama 3.1 8B's exact count"
    assert (arch.id, arch.name, arch.source) == ("my-llama", "my-llama", "uploaded config.json")


def test_the_name_falls_back_to_the_architecture_then_to_your_config(tmp_path: Path) -> None:
    bare = {k: v for k, v in LLAMA_8B_CONFIG.items() if k != "_name_or_path"}
    named = model_from_upload(_write(tmp_path, {**bare, "architectures": ["LlamaForCausalLM"]}))
    assert named.name == "LlamaForCausalLM"
    assert model_from_upload(_write(tmp_path, bare), "fr").name == "votre config"
    assert model_from_upload(_write(tmp_path, bare)).name == "your config"


@pytest.mark.parametrize(
    ("content", "name", "kind", "fr"),
    [
        (
            b"{not json",
            "config.json",
            "not_json",
            "config.json n'a pas été utilisé : ce n'est pas du JSON valide (1:2).",
        ),
        (
            b"\xff\xfe",
            "config.json",
            "not_utf8",
            "config.json n'a pas été utilisé : ce n'est pas du texte UTF-8.",
        ),
        (
            b"[1, 2, 3]",
            "config.json",
            "not_object",
            "config.json n'a pas été utilisé : il contient un tableau JSON, pas un objet.",
        ),
        (
            b'{"model_type": "llama"}',
            "config.json",
            "not_config",
            "config.json n'a pas été utilisé : il ne décrit pas un modèle (hidden_size, "
            "num_hidden_layers, num_attention_heads, intermediate_size, vocab_size).",
        ),
        (
            b"{}",
            "notes.txt",
            "wrong_type",
            "notes.txt n'a pas été utilisé : ce n'est pas un fichier .json.",
        ),
    ],
)
def test_each_refusal_says_what_was_wrong_and_what_is_valid(
    tmp_path: Path, content: bytes, name: str, kind: str, fr: str
) -> None:
    path = _write(tmp_path, content, name)
    with pytest.raises(UploadError) as caught:
        model_from_upload(path)
    assert caught.value.kind == kind and isinstance(caught.value, InvalidInputError)
    text = upload_problem(caught.value, name, "fr")
    assert text.startswith(fr), text
    assert text.endswith(
        "Téléversez le config.json d'un modèle : un objet JSON avec model_type, hidden_size, "
        f"num_hidden_layers et les autres dimensions, 1{NNB}000{NNB}000 octets au plus. "
        "Rien d'autre n'a changé."
    )


def test_over_one_megabyte_is_refused_before_parsing(tmp_path: Path) -> None:
    path = _write(tmp_path, b" " * MAX_UPLOAD_BYTES + b"{}", "big.json")
    with pytest.raises(UploadError, match=r"at most 1,000,000 bytes") as caught:
        read_upload(path)
    assert upload_problem(caught.value, "big.json", "en").startswith(
        "big.json was not used: it has 1,000,002 bytes, over the limit. Upload a model's "
        "config.json"
    )


@pytest.mark.parametrize(
    "content",
    [
        "[" * 100_000 + "]" * 100_000,  # nested past the parser's depth (was a RecursionError)
        '{"model_type": "llama", "hidden_size": ' + "9" * 5000 + "}",  # was a ValueError
    ],
)
def test_a_bomb_of_a_file_is_refused_in_one_line(tmp_path: Path, content: str) -> None:
    path = _write(tmp_path, content)
    with pytest.raises(UploadError) as caught:
        model_from_upload(path, "fr")
    assert caught.value.kind == "too_complex"
    line = upload_problem(caught.value, "config.json", "fr")
    assert line.startswith("config.json") and "trop imbriqué" in line and "\n" not in line
    assert str(tmp_path) not in line and str(tmp_path) not in str(caught.value), "no server path"


@pytest.mark.parametrize(
    ("setting", "literal"),
    [
        ("hidden_size", "NaN"),
        ("rope_theta", "Infinity"),  # a key the estimate never reads is refused too
        ("intermediate_size", "-Infinity"),
        ("vocab_size", "1e999"),  # a float too large becomes infinity when read
        ("rope_scaling.factor", "NaN"),  # nested keys are named by their path
    ],
)
def test_nan_and_infinity_are_refused_naming_the_key(
    tmp_path: Path, setting: str, literal: str
) -> None:
    key = setting.split(".")[-1]
    text = json.dumps({**LLAMA_8B_CONFIG, "rope_theta": 500000.0, "rope_scaling": {"factor": 8.0}})
    written = {"rope_theta": "500000.0", "factor": "8.0"}.get(key, str(LLAMA_8B_CONFIG.get(key)))
    path = _write(tmp_path, text.replace(f'"{key}": {written}', f'"{key}": {literal}', 1))
    assert literal in path.read_text()
    with pytest.raises(UploadError) as caught:
        model_from_upload(path)
    assert caught.value.kind == "not_finite"
    assert upload_problem(caught.value, "config.json", "en").startswith(
        f"config.json was not used: {setting} is {literal}, and every value must be a finite"
        " number. Upload a model's config.json:"
    )
    french = upload_problem(caught.value, "config.json", "fr")
    assert f"{setting} vaut {literal}, alors que chaque valeur doit être un nombre fini" in french


def test_finite_floats_and_large_integers_still_read(tmp_path: Path) -> None:
    config = {**LLAMA_8B_CONFIG, "rope_theta": 500000.0, "rms_norm_eps": 1e-05}
    assert model_from_upload(_write(tmp_path, config)).total_params() == 8_030_261_248
