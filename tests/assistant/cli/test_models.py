"""`gpu-advisor models` and `gpu-advisor models show NAME`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.cli import main
from tools.architectures.hf_config import to_hf_config
from tools.architectures.registry import list_models, lookup_model


def test_list_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0, "listing succeeds"
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "NAME", "ARCH", "PARAMS", "(B)", "ACTIVE", "(B)"], "header"
    assert len(lines) == 1 + len(list_models()), "one row per built-in model"
    row = next(line for line in lines if line.startswith("mistralai/Mixtral-8x7B-v0.1 "))
    assert row.split()[-3:] == ["decoder", "46.70", "12.88"], "MoE row: total and active in B"


def test_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--json"]) == 0, "listing succeeds"
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == [m.id for m in list_models()], "registry order"
    llama = next(r for r in rows if r["id"] == "meta-llama/Llama-3.1-8B")
    assert llama == {
        "id": "meta-llama/Llama-3.1-8B",
        "name": "Llama 3.1 8B",
        "family": "llama",
        "arch": "decoder",
        "total_params": 8_030_261_248,
        "active_params": 8_030_261_248,
    }, "exact counts, not rounded"


def test_show_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "show", "llama", "3", "70b"]) == 0, "a multi-word name works unquoted"
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "Llama 3.1 70B (meta-llama/Llama-3.1-70B)", "title line"
    assert "  key/value heads      8" in out, "GQA heads shown"
    assert "  total parameters     70,553,706,496 (70.55 B)" in out, "exact total"
    assert "decoder layers" not in out, "decoder layers only shown for encoder-decoders"


def test_show_t5_has_decoder_layers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "show", "t5-3b"]) == 0, "show succeeds"
    assert "  decoder layers       24" in capsys.readouterr().out, "T5 decoder depth shown"


@pytest.mark.parametrize(
    "argv",
    [
        ["models", "show", "Mixtral-8x7B-Instruct-v0.1", "--json"],
        ["models", "--json", "show", "Mixtral-8x7B-Instruct-v0.1"],
    ],
)
def test_show_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0, "show succeeds"
    data = json.loads(capsys.readouterr().out)
    assert data["id"] == "mistralai/Mixtral-8x7B-v0.1", "resolved id"
    assert (data["total_params"], data["active_params"]) == (46_702_792_704, 12_879_925_248), (
        "all experts for memory, two for compute"
    )
    assert data["breakdown"]["total"] == data["total_params"], "breakdown sums to the total"
    names = [m["name"] for m in data["linear_modules"]]
    assert names[-1] == "router", "the MoE router is listed"


def test_show_bare_count_states_its_assumption(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "show", "7B"]) == 0, "a bare count is accepted"
    out = capsys.readouterr().out
    assert "assumption: dimensions estimated from 7.00e+09 parameters" in out, "assumption shown"


def test_show_config_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(to_hf_config(lookup_model("qwen2.5 0.5b"))), encoding="utf-8")
    assert main(["models", "show", str(config), "--json"]) == 0, "a config.json is accepted"
    assert json.loads(capsys.readouterr().out)["total_params"] == 494_032_768, "Qwen2.5 0.5B"


def test_show_unknown_name_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "show", "llama 4 70b"]) == 2, "usage error exit code"
    captured = capsys.readouterr()
    assert captured.out == "", "nothing on stdout"
    assert captured.err.startswith("error: unknown model 'llama 4 70b'; closest known: "), "why"
    assert "meta-llama/Llama-3.1-70B" in captured.err, "the nearest name is suggested"


def test_cli_module_import_is_light() -> None:
    """Building the parser must not load the registry, YAML, torch or transformers."""
    code = (
        "import sys, assistant.cli.models; "
        "print(sorted(m for m in ('torch', 'transformers', 'yaml', 'tools.architectures.registry') "
        "if m in sys.modules))"
    )
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert out.stdout.strip() == "[]", "handlers import the registry lazily"
