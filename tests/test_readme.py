"""The README's command examples stay true.

Every `gpu-advisor ...` line in a fenced `bash` block must parse. A block marked
`<!-- readme-check: run -->` holds one command that is run in-process; the `text` block after it
is its abridged output: its lines, in runs separated by `...` lines, must appear in the real
output exactly (trailing spaces aside), each run contiguous and the runs in order. A block marked
`<!-- readme-check: parse -->` needs the built knowledge index (minutes to build), so its commands
are only parsed. Every `gpu-advisor` block under "## Quick tour" carries one of the two marks.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest

import assistant.cli.catalog as catalog_cli
from assistant.cli import build_parser, main

README = Path(__file__).resolve().parents[1] / "README.md"
TOUR = "Quick tour"
MARK = re.compile(r"^<!-- readme-check: (run|parse) -->$")
FENCE = re.compile(r"^```(\w*)\s*$")
CAPTURED = re.compile(r"captured on (\d{4}-\d{2}-\d{2})")
ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
ELISION = "..."


@dataclass(frozen=True)
class Block:
    """A fenced block: its language, its lines, the README line it starts on, its section."""

    lang: str
    lines: tuple[str, ...]
    line_no: int
    section: str
    mark: str | None


@dataclass(frozen=True)
class Example:
    """One `gpu-advisor` command of a bash block, with the output shown for a `run` example."""

    argv: tuple[str, ...]
    line_no: int
    section: str
    mark: str | None
    expected: tuple[str, ...] | None

    @property
    def label(self) -> str:
        return f"README:{self.line_no} {' '.join(self.argv[:2])}"


def read_blocks(text: str) -> list[Block]:
    """Fenced blocks in order, each with the `##` section it is in and the mark just above it."""
    blocks: list[Block] = []
    lines = text.splitlines()
    section, i = "", 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:].strip()
        fence = FENCE.match(line)
        if fence is None:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        mark = MARK.match(lines[i - 1]) if i > 0 else None
        blocks.append(
            Block(
                lang=fence.group(1),
                lines=tuple(lines[i + 1 : end]),
                line_no=i + 2,
                section=section,
                mark=mark.group(1) if mark else None,
            )
        )
        i = end + 1
    return blocks


def commands(block: Block) -> list[tuple[int, list[str]]]:
    """(README line, argv after `gpu-advisor`) for each gpu-advisor command of a bash block.

    Backslash continuations are joined; `# comments`, leading `VAR=value` assignments and a path
    before `gpu-advisor` (e.g. `.venv/bin/`) are dropped."""
    found, pending, start = [], "", 0
    for offset, raw in enumerate(block.lines):
        if not pending:
            start = block.line_no + offset
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        words = shlex.split(pending + raw, comments=True)
        pending = ""
        while words and ENV_ASSIGNMENT.match(words[0]):
            words.pop(0)
        if words and Path(words[0]).name == "gpu-advisor":
            found.append((start, words[1:]))
    return found


def examples(text: str) -> list[Example]:
    blocks = read_blocks(text)
    found = []
    for index, block in enumerate(blocks):
        if block.lang != "bash":
            continue
        after = blocks[index + 1] if index + 1 < len(blocks) else None
        shown = after.lines if after is not None and after.lang == "text" else None
        for line_no, argv in commands(block):
            expected = shown if block.mark == "run" else None
            found.append(Example(tuple(argv), line_no, block.section, block.mark, expected))
    return found


def chunks(expected: tuple[str, ...]) -> list[list[str]]:
    """The shown output split at `...` lines, trailing spaces and edge blank lines removed."""
    runs: list[list[str]] = [[]]
    for line in expected:
        if line.strip() == ELISION:
            runs.append([])
        else:
            runs[-1].append(line.rstrip())
    trimmed = []
    for run in runs:
        while run and not run[0]:
            run.pop(0)
        while run and not run[-1]:
            run.pop()
        if run:
            trimmed.append(run)
    return trimmed


def find_run(lines: list[str], run: list[str], start: int) -> int:
    """Index in `lines`, at or after `start`, where `run` appears contiguously; -1 if nowhere."""
    for i in range(start, len(lines) - len(run) + 1):
        if lines[i : i + len(run)] == run:
            return i
    return -1


README_TEXT = README.read_text(encoding="utf-8")
EXAMPLES = examples(README_TEXT)
RUN_EXAMPLES = [e for e in EXAMPLES if e.mark == "run"]


class _CapturedDate(date):
    """`date` whose today() is the day the README's outputs were captured (STALE flags)."""

    captured: date = date.min

    @classmethod
    def today(cls) -> _CapturedDate:
        c = cls.captured
        return cls(c.year, c.month, c.day)


@pytest.fixture
def readme_day(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the data dir from the autouse fixture; the catalog's `today` as the README states."""
    for name in list(os.environ):
        if name.startswith("GPU_ADVISOR_") and name != "GPU_ADVISOR_DATA_DIR":
            monkeypatch.delenv(name)
    day = CAPTURED.search(README_TEXT)
    assert day is not None, "the Quick tour should say on which date its outputs were captured"
    monkeypatch.setattr(_CapturedDate, "captured", date.fromisoformat(day.group(1)))
    monkeypatch.setattr(catalog_cli, "date", _CapturedDate)


def test_the_tour_marks_every_example() -> None:
    tour = [e for e in EXAMPLES if e.section == TOUR]
    unmarked = [e.label for e in tour if e.mark is None]
    assert not unmarked, f"Quick tour examples without a readme-check mark: {unmarked}"
    ran = {e.argv[0] for e in RUN_EXAMPLES}
    assert {"catalog", "estimate", "rank"} <= ran, f"sub-commands run from the tour: {ran}"
    parsed = {e.argv[0] for e in tour if e.mark == "parse"}
    assert {"ask", "kb"} <= parsed, f"sub-commands only parsed: {parsed}"
    assert all(e.section == TOUR for e in RUN_EXAMPLES), "run examples belong to the tour"
    missing = [e.label for e in RUN_EXAMPLES if not e.expected or not chunks(e.expected)]
    assert not missing, f"run examples without a text block of output after them: {missing}"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.label)
def test_every_command_parses(example: Example) -> None:
    try:
        args = build_parser().parse_args(list(example.argv))
    except SystemExit as exc:
        pytest.fail(f"{example.label}: gpu-advisor rejects {shlex.join(example.argv)} ({exc})")
    assert callable(getattr(args, "handler", None)), f"{example.label} names no sub-command"


@pytest.mark.parametrize("example", RUN_EXAMPLES, ids=lambda e: e.label)
def test_run_example_shows_real_output(
    example: Example, readme_day: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(list(example.argv))
    out, err = capsys.readouterr()
    assert code == 0, f"{example.label} exited {code}: {err}"
    assert err == "", f"{example.label} wrote to stderr: {err}"
    real = [line.rstrip() for line in out.splitlines()]
    position = 0
    for run in chunks(example.expected or ()):
        found = find_run(real, run, position)
        if found < 0:
            first = next((i for i, line in enumerate(real) if line == run[0]), -1)
            near = "\n".join(real[max(first, 0) : max(first, 0) + len(run) + 2])
            pytest.fail(
                f"{example.label}: these README lines are not in the output as shown "
                f"(after output line {position}):\n" + "\n".join(run) + f"\n--- real:\n{near}"
            )
        position = found + len(run)


def test_the_comparison_catches_a_changed_line() -> None:
    real = ["a", "b", "c", "d"]
    assert find_run(real, ["b", "c"], 0) == 1, "a contiguous run is found where it is"
    assert find_run(real, ["b", "d"], 0) == -1, "lines cut without '...' do not match"
    assert find_run(real, ["a"], 1) == -1, "runs must come in order"
    shown = ("x  ", "", "...", "", "y", "z", "...")
    assert chunks(shown) == [["x"], ["y", "z"]], "runs split at '...', edges trimmed"


def test_commands_are_read_like_a_shell() -> None:
    block = Block(
        lang="bash",
        lines=(
            "A=1 B='x y' .venv/bin/gpu-advisor ask --llm openai:m 'a $3/h question'  # comment",
            "gpu-advisor rank --model x \\",
            "  --tokens 1M",
            ".venv/bin/python app.py --mcp",
        ),
        line_no=10,
        section="s",
        mark=None,
    )
    assert commands(block) == [
        (10, ["ask", "--llm", "openai:m", "a $3/h question"]),
        (11, ["rank", "--model", "x", "--tokens", "1M"]),
    ], "env assignments, paths, quotes, comments and continuations are handled"


def test_every_setting_is_documented() -> None:
    """Each `Settings` field has a row in the Configuration table, by its environment name."""
    from assistant.settings import Settings

    table = README_TEXT.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"`(GPU_ADVISOR_[A-Z0-9_]+|GPUHUNT_[A-Z_]+)`", table))
    missing = []
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        names = set(getattr(alias, "choices", [])) | {f"GPU_ADVISOR_{name.upper()}"}
        if not names & documented:
            missing.append(name)
    assert missing == []
