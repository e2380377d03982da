"""`gpu-advisor rank`: JSON equals what rank() computes, table output, flags, errors, imports."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

import assistant.cli.catalog as catalog_cli
from assistant.cli import build_parser, main
from assistant.cli.job_args import job_spec
from assistant.cli.rank import GROUPS, request_assumptions
from tests.fakes.catalogs import instance
from tests.tools.ranking.test_rank import N1, ONE_GPU_SPOT, QLORA_CATALOG, _qlora_request
from tools.catalog.files import write_catalog_yaml
from tools.catalog.instances import Catalog
from tools.job import Money
from tools.ranking import RankingAssumptions, rank

QLORA_ARGS = [
    "rank", "--model", "meta-llama/Llama-2-7b-hf", "--method", "qlora", "--batch", "4",
    "--seq-len", "2048", "--checkpointing", "full", "--optimizer", "adamw", "--samples", "50k",
    "--epochs", "2",
]  # fmt: skip
RANKED_KEYS = {
    "provider", "instance_type", "gpu", "gpu_count", "vram_per_gpu_bytes", "need_per_gpu_bytes",
    "plan", "pricing", "price_per_hour", "hours", "total_cost", "reasons",
}  # fmt: skip


@pytest.fixture
def catalog_file(tmp_path: Path) -> Path:
    return write_catalog_yaml(Catalog(QLORA_CATALOG), tmp_path / "test.yaml")


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0, f"{argv} should succeed"
    return json.loads(capsys.readouterr().out)


def test_json_is_what_rank_computes(
    capsys: pytest.CaptureFixture[str], catalog_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    monkeypatch.setattr(catalog_cli, "cli_now", lambda: now)
    out = run_json(capsys, *QLORA_ARGS, "--catalog", str(catalog_file), "--spot", "--top", "0")
    assert list(out)[:3] == ["job", "ranked", "excluded"], "top-level keys"
    imported = [item.model_copy(update={"origin": "import"}) for item in QLORA_CATALOG]
    request = _qlora_request(spot="allowed")
    request.assumptions = RankingAssumptions()  # the CLI states no assumption: the defaults
    expected = rank(request, imported, now=now, stale_price_days=120)
    assert [r["price_age"] for r in out["ranked"]] == ["imported price, 319 days old"] * 3
    assert [r["stale"] for r in out["ranked"]] == [True] * 3, "as_of 2026-01-15: stale"
    assert out["prices"][0]["text"] == (
        "testcloud: 3 rows, imported price, 319 days old; 3 stale (older than 120 days)"
    )
    expected = expected.model_dump(mode="json")
    assumed, notices = out.pop("assumed"), out.pop("notices")
    assert out == expected, "the CLI prints exactly the ranking of the same request"
    assert [a["field"] for a in assumed] == ["precision", "lora_rank", "objective"], "defaults"
    assert notices == [], "everything applied"
    for row in out["ranked"]:
        assert set(row) >= RANKED_KEYS, f"{row['instance_id']} lacks {RANKED_KEYS - set(row)}"
    # the spot H100 first, at its cost under the default time model (tests/tools/ranking has
    # the hand-worked figures with the time model pinned)
    assert out["ranked"][0]["instance_id"] == "testcloud/h100-1x", "the spot H100 first"
    assert out["ranked"][0]["total_cost"] == pytest.approx(9.00), "its expected spot cost"


def test_budget_exclusion_in_json(capsys: pytest.CaptureFixture[str], catalog_file: Path) -> None:
    out = run_json(capsys, *QLORA_ARGS, "--catalog", str(catalog_file), "--budget", "15")
    assert [r["instance_id"] for r in out["ranked"]] == ["testcloud/rtx4090-1x"], "within $15"
    assert {e["instance_id"]: e["reason"] for e in out["excluded"]} == {
        "testcloud/h100-1x": "over budget: $22.25 > $15.00",
        "testcloud/l4-1x": "over budget: $69.17 > $15.00",
    }, "excluded with reasons"


def test_table_output(capsys: pytest.CaptureFixture[str], catalog_file: Path) -> None:
    assert main([*QLORA_ARGS, "--catalog", str(catalog_file), "--top", "2"]) == 0, "table"
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("meta-llama/Llama-2-7b-hf: qlora, bf16-mixed, 204.8M tokens"), out
    assert lines[3].split()[:2] == ["1", "testcloud/rtx4090-1x"], "cheapest total first"
    assert lines[4].split()[:2] == ["2", "testcloud/h100-1x"], "then the H100"
    assert "2 shown of 3 qualifying; 3 considered; 0 excluded" in out, "summary line"
    assert "Why #1 (testcloud/rtx4090-1x):" in out and "Assumptions:" in out, "sections"


def test_saved_imports_are_merged_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    from assistant.settings import Settings

    saved = Settings().data_dir / "catalogs" / "yaml-test.yaml"  # tests' data dir is tmp_path
    write_catalog_yaml(Catalog([instance("only-here", "L4", 1, 0.01)]), saved)
    out = run_json(capsys, *QLORA_ARGS, "--providers", "testcloud")
    assert [r["instance_id"] for r in out["ranked"]] == ["testcloud/only-here"], "import used"
    assert all(e["kind"] == "provider" for e in out["excluded"]), "built-in rows filtered out"


def test_flags_map_to_the_job() -> None:
    args = build_parser().parse_args([
        *QLORA_ARGS, "--spot", "required", "--providers", "aws, gcp", "--providers", "lambda",
        "--max-price-per-hour", "30", "--deadline-hours", "12", "--objective", "time",
        "--min-gpus", "2", "--max-gpus", "16", "--interconnect", "nvlink", "--margin", "0.2",
        "--mfu", "0.3", "--preemption-rate", "0.1", "--storage-gbps", "2",
        "--restart-minutes", "6", "--top", "3", "--regions", "eu", "--gpu", "H100,A100",
        "--max-vram-gib", "80", "--budget", "150 EUR",
    ])  # fmt: skip
    spec = job_spec(args, GROUPS)
    assert spec.filled() == {
        "model": "meta-llama/Llama-2-7b-hf", "method": "qlora", "optimizer": "adamw",
        "micro_batch_size": 4, "seq_len": 2048, "gradient_checkpointing": "full",
        "samples": 50_000, "epochs": 2.0, "max_price_per_hour": Money(amount=30),
        "budget": Money(amount=150, currency="EUR"), "deadline_hours": 12.0, "spot": "required",
        "providers": ["aws", "gcp", "lambda"], "regions": ["eu"], "gpus": ["H100", "A100"],
        "max_vram_gib": 80.0, "min_gpus": 2, "max_gpus": 16, "interconnect": "nvlink",
        "objective": "time",
    }, "every flag is a field of the job"  # fmt: skip
    assert request_assumptions(args) == {
        "memory_margin": 0.2,
        "throughput": {"mfu_override": 0.3},
        "spot": {"preemption_rate_per_hour": 0.1, "storage_bandwidth_bytes_per_s": 2e9,
                 "restart_hours": 0.1},
    }, "assumption overrides"  # fmt: skip


def test_engine_flags_reach_the_job(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = build_parser().parse_args(
        [*QLORA_ARGS, "--engine", "deepspeed", "--optimizer-impl", "fused", "--grad-accum", "2"]
    )
    spec = job_spec(args, GROUPS)
    assert (spec.engine, spec.optimizer_impl) == ("deepspeed", "fused"), "engine"
    assert spec.gradient_accumulation_steps == 2, "gradient accumulation"
    assert job_spec(build_parser().parse_args(QLORA_ARGS), GROUPS).engine is None, "open: auto"
    # A DeepSpeed job on one GPU checkpoints its 16-bit model and the fp32 master with AdamW's
    # moments: 2 + 12 = 14 B per parameter (plain PyTorch: 12).
    path = write_catalog_yaml(Catalog(ONE_GPU_SPOT), tmp_path / "one.yaml")
    full_1b = ["rank", "--model", "meta-llama/Llama-3.2-1B", "--method", "full",
               "--checkpointing", "none", "--tokens", "1e9", "--spot", "required",
               "--catalog", str(path)]  # fmt: skip
    assert run_json(capsys, *full_1b)["ranked"][0]["checkpoint_bytes"] == 12 * N1, "PyTorch"
    deepspeed = run_json(capsys, *full_1b, "--engine", "deepspeed")["ranked"][0]
    assert deepspeed["checkpoint_bytes"] == 14 * N1, "DeepSpeed"


@pytest.mark.parametrize(
    ("flags", "policy"),
    [([], None), (["--spot"], "allowed"), (["--no-spot"], "never"),
     (["--spot", "required"], "required"), (["--spot", "never"], "never")],
)  # fmt: skip
def test_spot_flags(flags: list[str], policy: str | None) -> None:
    args = build_parser().parse_args([*QLORA_ARGS, *flags])
    assert job_spec(args, GROUPS).spot == policy, f"{flags}"


def test_token_counts_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args([*QLORA_ARGS[:-4], "--tokens", "1.5B"])
    spec = job_spec(args, GROUPS)
    assert (spec.tokens, spec.samples, spec.epochs) == (1.5e9, None, None), "1.5B tokens"
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args([*QLORA_ARGS[:-4], "--tokens", "lots"])
    assert exc.value.code == 2, "argparse rejects a bad count"
    assert "'lots' is not a count such as 2e8, 200M or 1.5B" in capsys.readouterr().err


def test_open_data_is_assumed_and_said(
    capsys: pytest.CaptureFixture[str], catalog_file: Path
) -> None:
    out = run_json(capsys, "rank", "--model", "meta-llama/Llama-2-7b-hf", "--catalog",
                   str(catalog_file))  # fmt: skip
    assumed = {a["field"]: a["value"] for a in out["assumed"]}
    assert assumed["method"] == "lora" and assumed["tokens"] == 100_000_000, assumed
    assert assumed["gradient_checkpointing"] == "full" and assumed["spot"] == "never", assumed
    assert out["job"]["tokens"] == 1e8, "the 100M default is what was ranked"


def test_unknown_provider_is_one_clear_error(
    capsys: pytest.CaptureFixture[str], catalog_file: Path
) -> None:
    code = main([*QLORA_ARGS, "--catalog", str(catalog_file), "--providers", "nosuch"])
    assert code == 2, "domain errors exit 2"
    assert capsys.readouterr().err.startswith("error: unknown provider 'nosuch'"), "message"


def test_rank_command_imports_nothing_heavy() -> None:
    """Building the parser must stay light: the ranking, estimator and catalog load in the
    handler; no torch, LangChain, Gradio or Chroma anywhere on the path."""
    code = (
        "import sys, assistant.cli.rank;"
        "heavy = {'torch', 'transformers', 'langchain', 'langchain_core', 'gradio', 'chromadb',"
        " 'numpy'};"
        "print(sorted((heavy | {'tools.ranking.rank', 'tools.memory.estimator',"
        " 'tools.catalog.instances'})"
        " & set(sys.modules)));"
        "import tools.ranking.rank;"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "[]"], f"heavy modules imported: {out.stdout}"
