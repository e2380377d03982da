"""`gpu-advisor rank --json` on the four image-model jobs of issue 16: golden figures.

The catalog is `tests.fakes.catalogs.image_catalog` (exact prices, per-second billing), so the
figures move only when the estimator, the FLOP counts or the time model do; each golden value
was read from a run of this command and is checked with a tight tolerance.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assistant.cli import main
from tests.fakes.catalogs import image_catalog
from tools.catalog.files import write_catalog_yaml

JOBS: dict[str, list[str]] = {
    "sdxl": ["--model", "sdxl", "--method", "lora", "--dreambooth", "--resolution", "1024"],
    "flux": ["--model", "flux.1-dev", "--method", "lora"],
    "llava": ["--model", "llava-1.5-7b", "--method", "lora", "--samples", "20000"],
    "qwen": ["--model", "qwen2-vl-7b", "--method", "full", "--samples", "20000"],
}
# job: (images, training FLOPs, first instance, its plan, need per GPU bytes, hours, total USD)
GOLDEN: dict[str, tuple[float, float, str, str, int, float, float]] = {
    "sdxl": (500, 1.2961157480448e16, "testcloud/rtx4090-1x", "single", 8_427_402_045,
             0.2823, 0.1130),
    "flux": (500, 1.17631651941632e17, "testcloud/l40s-1x", "single", 38_141_167_353,
             0.4888, 0.4889),
    "llava": (20_000, 2.2370245985075197e18, "testcloud/rtx4090-1x", "single", 17_621_626_957,
              7.8264, 3.1307),
    "qwen": (20_000, 2.67255946412032e18, "testcloud/h100-8x", "zero2", 37_214_350_644,
             0.5908, 14.1800),
}  # fmt: skip


@pytest.fixture(scope="module")
def catalog_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_catalog_yaml(image_catalog(), tmp_path_factory.mktemp("cat") / "images.yaml")


def _rank(capsys: pytest.CaptureFixture[str], catalog: Path, *args: str) -> dict[str, Any]:
    assert main(["rank", *args, "--catalog", str(catalog), "--top", "0", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", list(JOBS))
def test_golden_rank_of_the_image_jobs(
    name: str, capsys: pytest.CaptureFixture[str], catalog_file: Path
) -> None:
    images, flops, first, plan, need, hours, cost = GOLDEN[name]
    out = _rank(capsys, catalog_file, *JOBS[name])
    job, best = out["job"], out["ranked"][0]
    assert job["images"] == images
    assert job["training_flops"] == pytest.approx(flops, rel=1e-6)
    assert (best["instance_id"], best["plan"]) == (first, plan)
    assert best["need_per_gpu_bytes"] == pytest.approx(need, rel=1e-6)
    assert best["hours"] == pytest.approx(hours, abs=1e-3)
    assert best["total_cost"] == pytest.approx(cost, abs=1e-3)
    assert any(line.startswith("work: ") for line in job["assumptions"]), "the run's size"
    assert any(line.startswith("plans: ") for line in job["assumptions"]), "which plans"
    assert out["considered"] == len(out["ranked"]) + len(out["excluded"]) == 7


def test_exclusions_say_why(capsys: pytest.CaptureFixture[str], catalog_file: Path) -> None:
    """FLUX.1 LoRA does not fit 24 GB, with DDP or without (DDP replicates the job); a
    multi-GPU full fine-tune of Qwen2-VL is kept off PCIe-only nodes."""
    flux = {e["instance_id"]: e for e in _rank(capsys, catalog_file, *JOBS["flux"])["excluded"]}
    assert set(flux) == {"testcloud/l4-1x", "testcloud/l4-2x", "testcloud/rtx4090-1x"}
    assert flux["testcloud/l4-2x"]["reason"] == (
        "needs 39.1 GiB per GPU (DDP on 2 GPUs, 35.5 GiB + 10% margin), has 24.0 GiB"
    )
    qwen = {e["instance_id"]: e for e in _rank(capsys, catalog_file, *JOBS["qwen"])["excluded"]}
    assert qwen["testcloud/a100-80-2x-pcie"]["kind"] == "interconnect"
    assert qwen["testcloud/a100-80-1x"]["kind"] == "memory"


def test_the_table_names_images_and_samples(
    capsys: pytest.CaptureFixture[str], catalog_file: Path
) -> None:
    assert main(["rank", *JOBS["sdxl"], "--catalog", str(catalog_file)]) == 0
    assert ": lora, bf16-mixed, 500 images, 1.3e+16 FLOPs" in capsys.readouterr().out
    assert main(["rank", *JOBS["llava"], "--catalog", str(catalog_file)]) == 0
    assert "20,000 samples, 52.5M tokens" in capsys.readouterr().out
