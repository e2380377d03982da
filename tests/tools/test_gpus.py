"""GPU datasheet table: exact figures, forgiving names, and table-wide invariants."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools.errors import UnknownNameError
from tools.gpus import gpu_ids, list_gpus, lookup_gpu, matching_gpu_ids, normalize_name

# id: (vram GiB, bandwidth GB/s, dense BF16, dense FP16, dense TF32, dense FP8, form, NVLink GB/s)
# Figures from the vendor datasheets/whitepapers named in tools/data/gpus.yaml.
DATASHEET = {
    "H100-SXM": (80, 3350, 989.4, 989.4, 494.7, 1978.9, "SXM", 900),
    "H100-PCIe": (80, 2000, 756.5, 756.5, 378, 1513, "PCIe", 600),
    "H200": (141, 4800, 989.4, 989.4, 494.7, 1978.9, "SXM", 900),
    "B200": (180, 8000, 2250, 2250, 1125, 4500, "SXM", 1800),
    "GH200": (96, 4000, 989.4, 989.4, 494.7, 1978.9, "superchip", 900),
    "A100-40GB-SXM": (40, 1555, 312, 312, 156, None, "SXM", 600),
    "A100-80GB-SXM": (80, 2039, 312, 312, 156, None, "SXM", 600),
    "A100-40GB-PCIe": (40, 1555, 312, 312, 156, None, "PCIe", 600),
    "A100-80GB-PCIe": (80, 1935, 312, 312, 156, None, "PCIe", 600),
    "L40S": (48, 864, 362.05, 362.05, 183, 733, "PCIe", None),
    "L4": (24, 300, 121, 121, 60, 242.5, "PCIe", None),
    "A10": (24, 600, 125, 125, 62.5, None, "PCIe", None),
    "A10G": (24, 600, 70, 70, 35, None, "PCIe", None),
    "RTXA6000": (48, 768, 154.8, 154.8, 77.4, None, "PCIe", 112.5),
    "RTX6000-Ada": (48, 960, 364.2, 364.2, 182.1, 728.5, "PCIe", None),
    "RTX4090": (24, 1008, 165.2, 165.2, 82.6, 330.3, "consumer", None),
    "RTX3090": (24, 936, 71, 71, 35.6, None, "consumer", 112.5),
    "V100-16GB-SXM": (16, 900, None, 125, None, None, "SXM", 300),
    "V100-32GB-SXM": (32, 900, None, 125, None, None, "SXM", 300),
    "V100-16GB-PCIe": (16, 900, None, 112, None, None, "PCIe", None),
    "T4": (16, 320, None, 65, None, None, "PCIe", None),
    "MI300X": (192, 5300, 1307.4, 1307.4, 653.7, 2614.9, "OAM", 896),
    "B300": (288, 8000, 2250, 2250, 1125, 4500, "SXM", 1800),
    "GB200": (186, 8000, 2500, 2500, 1250, 5000, "superchip", 1800),
    "RTXPRO6000": (96, 1792, 503.8, 503.8, 251.9, 1007.6, "PCIe", None),
    "MI325X": (256, 6000, 1307.4, 1307.4, 653.7, 2614.9, "OAM", 896),
    "MI355X": (288, 8000, 2500, 2500, None, 5000, "OAM", None),
    "Gaudi3": (128, 3670, 1835, None, None, 1835, "OAM", 1200),
}


@pytest.mark.parametrize("gpu_id", sorted(DATASHEET))
def test_datasheet_figures(gpu_id: str) -> None:
    vram, bandwidth, bf16, fp16, tf32, fp8, form, nvlink = DATASHEET[gpu_id]
    spec = lookup_gpu(gpu_id)
    got = (
        spec.vram_gib,
        spec.memory_bandwidth_gbs,
        spec.bf16_tflops,
        spec.fp16_tflops,
        spec.tf32_tflops,
        spec.fp8_tflops,
        spec.form_factor,
        spec.nvlink_gbs,
    )
    assert got == (vram, bandwidth, bf16, fp16, tf32, fp8, form, nvlink), f"{gpu_id} figures"


@pytest.mark.parametrize(
    ("name", "gpu_id"),
    [
        ("h100", "H100-SXM"),
        ("H100 80GB HBM3", "H100-SXM"),
        ("H100-80GB", "H100-SXM"),
        ("H100-MEGA", "H100-SXM"),
        ("NVIDIA-H100-80GB-HBM3", "H100-SXM"),
        ("H100-80G-PCIe", "H100-PCIe"),
        ("h100 nvl", "H100-NVL"),
        ("A100", "A100-40GB-SXM"),
        ("A100-80GB", "A100-80GB-SXM"),
        ("a100 80gb pcie", "A100-80GB-PCIe"),
        ("A100-80G-PCIe-NVLink", "A100-80GB-PCIe"),
        ("V100-32GB", "V100-32GB-SXM"),
        ("RTX6000-Ada", "RTX6000-Ada"),
        ("RTX 6000 Ada Generation", "RTX6000-Ada"),
        ("A6000", "RTXA6000"),
        ("RTX-A4000", "RTXA4000"),
        ("GeForce RTX 4090", "RTX4090"),
        ("4090", "RTX4090"),
        ("Instinct MI300X", "MI300X"),
        ("a10g", "A10G"),
    ],
)
def test_aliases_resolve(name: str, gpu_id: str) -> None:
    assert lookup_gpu(name).id == gpu_id, f"{name!r} should resolve to {gpu_id}"


def test_required_gpus_present() -> None:
    required = {
        "H200", "H100-SXM", "H100-PCIe", "GH200", "B200", "A100-40GB-SXM", "A100-80GB-SXM",
        "A100-40GB-PCIe", "A100-80GB-PCIe", "L40S", "L4", "A10G", "A10", "RTXA6000", "RTX6000-Ada",
        "RTX4090", "RTX3090", "V100-16GB-SXM", "V100-32GB-SXM", "T4", "MI300X",
    }  # fmt: skip
    assert required <= set(gpu_ids()), f"missing: {sorted(required - set(gpu_ids()))}"


def test_unknown_gpu_lists_closest() -> None:
    with pytest.raises(UnknownNameError, match=r"unknown GPU 'H200x'; closest known: H200"):
        lookup_gpu("H200x")


def test_unknown_gpu_error_keeps_suggestions() -> None:
    with pytest.raises(UnknownNameError) as info:
        lookup_gpu("A100 120GB")
    assert info.value.suggestions[:2] == ["A100-80GB-SXM", "A100-40GB-SXM"], "closest A100s first"


H100_ALL = {"H100-SXM", "H100-PCIe", "H100-NVL"}
A100_ALL = {"A100-40GB-SXM", "A100-80GB-SXM", "A100-40GB-PCIe", "A100-80GB-PCIe"}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("H100", H100_ALL),
        ("h100", H100_ALL),
        ("A100", A100_ALL),
        ("V100", {"V100-16GB-SXM", "V100-32GB-SXM", "V100-16GB-PCIe"}),
        ("A100-80GB", {"A100-80GB-SXM", "A100-80GB-PCIe"}),
        ("A100 40GB", {"A100-40GB-SXM", "A100-40GB-PCIe"}),
        ("a100 80g", {"A100-80GB-SXM", "A100-80GB-PCIe"}),
        ("H100-80GB", {"H100-SXM", "H100-PCIe"}),
        ("V100 16GB", {"V100-16GB-SXM", "V100-16GB-PCIe"}),
        ("V100-32GB", {"V100-32GB-SXM"}),
        ("H100 PCIe", {"H100-PCIe"}),
        ("H100 SXM", {"H100-SXM"}),
        ("H100 NVL", {"H100-NVL"}),
        ("H100-SXM", {"H100-SXM"}),
        ("A100 40GB SXM", {"A100-40GB-SXM"}),
        ("A100-80GB-PCIe", {"A100-80GB-PCIe"}),
        ("A100 80GB PCIe", {"A100-80GB-PCIe"}),
        ("A10", {"A10"}),
        ("A10G", {"A10G"}),
        ("H200", {"H200"}),
        ("L40", {"L40"}),
        ("RTX 6000 Ada", {"RTX6000-Ada"}),
        ("4090", {"RTX4090"}),
    ],
)
def test_matching_gpu_ids(name: str, expected: set[str]) -> None:
    assert matching_gpu_ids(name) == frozenset(expected), f"{name!r} should match {expected}"


@pytest.mark.parametrize("name", ["H200x", "A100 120GB", "H100 48GB"])
def test_matching_unknown_name_raises_with_closest(name: str) -> None:
    with pytest.raises(UnknownNameError, match=rf"unknown GPU '{name}'; closest known: \w"):
        matching_gpu_ids(name)


def test_matching_leaves_lookup_alone() -> None:
    assert lookup_gpu("H100").id == "H100-SXM", "lookup still picks one GPU for specs/ranking"
    assert lookup_gpu("A100-80GB").id == "A100-80GB-SXM", "lookup still picks one GPU"


def test_every_known_name_matches_its_own_gpu() -> None:
    for spec in list_gpus():
        for name in (spec.id, spec.name, *spec.aliases):
            matched = matching_gpu_ids(name)
            assert lookup_gpu(name).id in matched, f"{name!r} loses the GPU it names"
            family = {gid.split("-")[0] for gid in matched}
            assert len(family) == 1, f"{name!r} matches across families: {sorted(matched)}"


def test_every_gpu_is_sourced_and_consistent() -> None:
    for spec in list_gpus():
        assert spec.sources, f"{spec.id} has no source"
        assert (spec.fp8_tflops is not None) == spec.fp8, f"{spec.id}: fp8 flag vs fp8_tflops"
        assert (spec.bf16_tflops is not None) == spec.bf16, f"{spec.id}: bf16 flag vs bf16_tflops"
        assert spec.best_tflops is not None, f"{spec.id} has no 16-bit tensor figure"


def test_dense_fp8_is_twice_dense_16bit_where_both_exist() -> None:
    # Hopper/Ada/Blackwell/CDNA3/CDNA4 tensor cores run FP8 at twice the 16-bit rate (dense); the
    # L40S datasheet rounds its figures (362.05 vs 733), hence 3%. Gaudi 3's matrix engines run
    # FP8 at the BF16 rate (Intel: 1,835 TFLOPS each).
    assert lookup_gpu("Gaudi3").fp8_tflops == lookup_gpu("Gaudi3").bf16_tflops == 1835
    for spec in list_gpus():
        if spec.vendor == "Intel":
            continue
        if spec.fp8_tflops is not None and spec.bf16_tflops is not None:
            ratio = spec.fp8_tflops / spec.bf16_tflops
            assert ratio == pytest.approx(2.0, rel=0.03), f"{spec.id}: FP8/BF16 = {ratio:.3f}"


def test_ids_are_unique() -> None:
    ids = gpu_ids()
    assert len(ids) == len(set(ids)), "duplicate GPU ids"


@given(
    gpu_id=st.sampled_from(sorted(DATASHEET)),
    upper=st.booleans(),
    sep=st.sampled_from(["", " ", "-", "_", "  "]),
)
def test_lookup_ignores_case_and_separators(gpu_id: str, upper: bool, sep: str) -> None:
    spec = lookup_gpu(gpu_id)
    parts = [p for p in gpu_id.replace("_", "-").split("-") if p]
    name = sep.join(parts)
    name = name.upper() if upper else name.lower()
    assert lookup_gpu(name).id == spec.id, f"{name!r} should resolve to {spec.id}"
    assert normalize_name(name) == normalize_name(gpu_id)
