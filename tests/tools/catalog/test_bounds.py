"""Catalog input bounding: every poison measured on main now fails fast with one clear line.

Measured before: prices 1e308 / inf / 1e-300, gpu_count 1e32 and as_of 2099 were accepted; a
formula cell was stored; a 593-byte billion-laughs YAML gave a 312 MB error message or a
MemoryError; YAML nested 100k deep raised RecursionError; a symlink to /dev/zero ran out of
memory after 15 s. Each case below asserts the error text and a time bound.
"""

from __future__ import annotations

import os
import time
import tracemalloc
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

from tools.catalog.bounds import MAX_YAML_ALIASES, MAX_YAML_DEPTH, check_regular_file
from tools.catalog.files import CatalogFileError, read_catalog_file
from tools.catalog.store import import_catalog, load_catalog, save_import
from tools.errors import shorten

TODAY = date(2026, 11, 30)
HEADER = "provider,instance_type,gpu,gpu_count,price_per_hour,interconnect,source,as_of\n"
GOOD = "aws,x1,L4,1,0.80,pcie,mine,2026-11-01\n"


def fails_fast(call: Callable[[], object], pattern: str, seconds: float = 2.0) -> str:
    """Run `call`, expect CatalogFileError matching `pattern` within `seconds`; the message."""
    start = time.monotonic()
    with pytest.raises(CatalogFileError, match=pattern) as info:
        call()
    assert time.monotonic() - start < seconds, f"took {time.monotonic() - start:.1f} s"
    message = str(info.value)
    assert "\n" not in message and len(message) < 600, f"one short line: {message[:200]}"
    return message


@pytest.mark.parametrize(
    ("cells", "pattern"),
    [
        ("aws,x,L4,1,1e308,pcie,s,2026-11-01",
         r"field price_per_hour: got '1e308'; valid: USD per hour for the whole instance,"
         r" between \$0.01 and \$100 per GPU-hour"),
        ("aws,x,L4,1,inf,pcie,s,2026-11-01",
         r"field price_per_hour: got 'inf'; valid: Input should be a finite number"),
        ("aws,x,L4,1,1e-300,pcie,s,2026-11-01",
         r"field price_per_hour: got '1e-300'; .*\(this is \$1e-300 per GPU-hour\)"),
        ("aws,x,L4,1e32,1,pcie,s,2026-11-01", r"field gpu_count: got '1e32'"),
        ("aws,x,L4,2048,100,pcie,s,2026-11-01",
         r"field gpu_count: got '2048'; valid: Input should be less than or equal to 1024"),
        ("aws,=cmd|' /C calc'!A0,L4,1,1,pcie,s,2026-11-01",
         r"field instance_type: got \"=cmd\|' /C calc'!A0\"; valid: text that does not start"
         r" with = \+ - @"),
        ("aws,x,L4,1,1,pcie,@SUM(A1),2026-11-01", r"field source: got '@SUM\(A1\)'"),
        ("aws,x,L4,1,1,pcie,s,2099-01-01",
         r"field as_of: got '2099-01-01'; valid: a date no later than"),
    ],
    ids=["1e308", "inf", "1e-300", "gpus-1e32", "gpus-2048", "formula", "formula-at", "as-of-2099"],
)  # fmt: skip
def test_poisoned_cells_are_rejected(tmp_path: Path, cells: str, pattern: str) -> None:
    path = tmp_path / "poison.csv"
    path.write_text(HEADER + cells + "\n")
    fails_fast(lambda: import_catalog(path, "csv", TODAY), "poison.csv row 1: " + pattern)


def test_billion_laughs_yaml_is_refused_quickly(tmp_path: Path) -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        lines.append(f"{name}: &{name} [{','.join(['*' + prev] * 9)}]")
    lines.append("instances: [*i]")
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size < 700
    tracemalloc.start()
    message = fails_fast(
        lambda: import_catalog(path, "yaml", TODAY),
        rf"laughs.yaml: got 'unparseable YAML'; valid: valid YAML \(more than"
        rf" {MAX_YAML_ALIASES} aliases",
        seconds=1.0,
    )
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 20 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    assert len(message) < 300


def test_yaml_nested_100k_deep_is_refused_without_recursion(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("instances: " + "[" * 100_000 + "]" * 100_000 + "\n")
    fails_fast(
        lambda: import_catalog(path, "yaml", TODAY),
        rf"deep.yaml: got 'unparseable YAML'; valid: valid YAML \(nesting deeper than"
        rf" {MAX_YAML_DEPTH} levels",
    )  # fmt: skip


def test_symlink_to_dev_zero_and_a_fifo_are_refused_before_reading(tmp_path: Path) -> None:
    zero = tmp_path / "zero.csv"
    zero.symlink_to("/dev/zero")
    fails_fast(
        lambda: import_catalog(zero, "csv", TODAY),
        r"valid: a regular file \(this is a character device\)",
        1.0,
    )
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    fails_fast(
        lambda: import_catalog(fifo, "yaml", TODAY),
        r"valid: a regular file \(this is a named pipe\)",
        1.0,
    )
    folder = tmp_path / "dir.csv"
    folder.mkdir()
    fails_fast(
        lambda: read_catalog_file(folder), r"valid: a regular file \(this is a folder\)", 1.0
    )


def test_size_is_checked_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as handle:
        handle.truncate(17 * 2**20)  # sparse: 17 MiB of size, nothing to read
    fails_fast(
        lambda: import_catalog(big, "yaml", TODAY),
        r"valid: a file of at most 16 MiB \(this one is 17.0 MiB\)",
        seconds=0.5,
    )
    assert check_regular_file(tmp_path / "big.yaml", 32 * 2**20) == 17 * 2**20


def test_quoted_values_are_bounded() -> None:
    shared: list[object] = ["lol"] * 9
    for _ in range(40):
        shared = [shared] * 9  # 9^40 leaves if expanded
    start = time.monotonic()
    text = shorten(shared)
    assert time.monotonic() - start < 0.1 and len(text) <= 120 and text.endswith("…")
    assert shorten("x" * 10_000_000) == "'" + "x" * 118 + "…"
    assert shorten(10**5000) == "a huge number"
    assert shorten(["a", "b"]) == "['a', 'b']"


def test_a_large_legitimate_csv_streams_with_bounded_memory(tmp_path: Path) -> None:
    rows = 20_000
    path = tmp_path / "many.csv"
    with path.open("w") as handle:
        handle.write(HEADER)
        for i in range(rows):
            handle.write(f"aws,t{i},L4,1,{0.5 + i % 100 / 100:.2f},pcie,mine,2026-11-01\n")
    size = path.stat().st_size
    tracemalloc.start()
    start = time.process_time()
    result = import_catalog(path, "csv", TODAY)
    elapsed = time.process_time() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(result.catalog) == rows
    assert elapsed < 10.0, f"{elapsed:.1f} s of CPU for {rows:,} rows"
    per_row = peak / rows
    assert per_row < 6_000, f"{per_row:.0f} bytes per row at peak ({size / rows:.0f} B of text)"
    data = tmp_path / "data"
    saved = save_import(result.catalog, data, "csv-many")
    assert saved.suffix == ".csv"
    start = time.process_time()
    merged = load_catalog(data)
    assert len(merged) == rows + 140 and time.process_time() - start < 10.0
