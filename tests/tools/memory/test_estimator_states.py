"""Model states (weights, gradients, optimizer) against the ZeRO paper, DeepSpeed's estimators,
bitsandbytes and the QLoRA paper, with exact byte arithmetic."""

from __future__ import annotations

from fractions import Fraction
from math import ceil

import pytest

from tests.tools.memory.test_estimator_models import gpt2_small, llama31_8b
from tools.architectures.architecture import ModelArch
from tools.memory.states.inventory import (
    adapter_tensors,
    largest_module_params,
    param_tensors,
    physical_linears,
    resolve_targets,
)
from tools.memory.states.model_states import (
    ModelStates,
    StatesConfig,
    compute_model_states,
    nf4_bytes,
    shard_model_states,
)


def states(model: ModelArch, **overrides: object) -> ModelStates:
    settings: dict[str, object] = dict(
        method="full",
        precision="bf16-mixed",
        optimizer="adamw",
        lora_rank=16,
        targets=(),
        qlora_double_quant=True,
        zero_stage=0,
        sharding="deepspeed",
        data_parallel=1,
        tensor_parallel=1,
        offload_optimizer=False,
    )
    settings |= overrides
    if settings["method"] in ("lora", "qlora") and not settings["targets"]:
        settings["targets"] = resolve_targets(model, "all-linear")
    return compute_model_states(model, StatesConfig(**settings))  # type: ignore[arg-type]


def model_states_total(s: ModelStates) -> int:
    return s.weights + s.gradients + s.optimizer


# --- ZeRO paper (Rajbhandari et al. 2019, arXiv:1910.02054), Table 1 ----------------------------
# Per-device model-state memory, in GB, for a 7.5B-parameter model with K = 12, as printed.
PSI = 7_500_000_000
ZERO_TABLE_1 = {  # Nd: (P_os, P_os+g, P_os+g+p), as printed
    1: ("120", "120", "120"),
    4: ("52.5", "41.3", "30"),
    16: ("35.6", "21.6", "7.5"),
    64: ("31.4", "16.6", "1.88"),
    256: ("30.4", "15.4", "0.47"),
    1024: ("30.1", "15.1", "0.12"),
}


def zero_paper_bytes(stage: int, nd: int, psi: int = PSI, k: int = 12) -> Fraction:
    """Table 1's formulas: baseline (2+2+K)Ψ, P_os (2+2+K/Nd)Ψ, P_os+g (2+(2+K)/Nd)Ψ,
    P_os+g+p (2+2+K)Ψ/Nd."""
    return {
        0: Fraction((2 + 2 + k) * psi),
        1: Fraction(4 * psi) + Fraction(k * psi, nd),
        2: Fraction(2 * psi) + Fraction((2 + k) * psi, nd),
        3: Fraction((2 + 2 + k) * psi, nd),
    }[stage]


@pytest.mark.parametrize("nd", sorted(ZERO_TABLE_1))
@pytest.mark.parametrize("stage", [1, 2, 3])
def test_zero_table_1(stage: int, nd: int) -> None:
    w, g, o = shard_model_states(2 * PSI, 2 * PSI, 12 * PSI, stage, nd)
    exact = zero_paper_bytes(stage, nd)
    assert w + g + o - exact < 3, f"stage {stage}, Nd={nd}: {w + g + o} B vs exact {exact} B"
    assert w + g + o >= exact, f"stage {stage}, Nd={nd}: per-GPU bytes are rounded up"
    printed = ZERO_TABLE_1[nd][stage - 1]
    decimals = len(printed.partition(".")[2])
    half_unit = Fraction(1, 2 * 10**decimals)
    ours_gb = exact / 10**9
    assert abs(ours_gb - Fraction(printed)) <= half_unit, (
        f"stage {stage}, Nd={nd}: {float(ours_gb)} GB does not round to the printed {printed}"
    )


def test_zero_baseline_is_120_gb() -> None:
    w, g, o = shard_model_states(2 * PSI, 2 * PSI, 12 * PSI, 0, 64)
    assert w + g + o == 120 * 10**9, "ZeRO Table 1 baseline: (2+2+12) x 7.5B = 120 GB per GPU"


@pytest.mark.parametrize("nd", [1, 4, 16, 64, 1024])
@pytest.mark.parametrize("stage", [0, 1, 2])
def test_mixed_adamw_model_follows_zero_paper(stage: int, nd: int) -> None:
    model = llama31_8b()
    psi = model.total_params()  # divisible by 1024: every division below is exact
    s = states(model, zero_stage=stage, data_parallel=nd)
    expected = zero_paper_bytes(stage, nd, psi)
    assert model_states_total(s) == expected, f"Llama 3.1 8B, stage {stage}, Nd={nd}"
    assert s.optimizer * nd ** (stage >= 1) == 12 * psi, "K = 12: fp32 master + m + v"


@pytest.mark.parametrize("nd", [4, 64, 1024])
def test_zero3_adds_the_gathered_module(nd: int) -> None:
    """Documented difference to Table 1: ZeRO-3 computes with one module gathered whole, 16-bit
    weight + gradient of the largest module, which is DeepSpeed's `4 * largest_layer_params`."""
    model = llama31_8b()
    s = states(model, zero_stage=3, data_parallel=nd)
    largest = largest_module_params(model)
    assert largest == 128_256 * 4096, "largest module of Llama 3.1 8B: the 128256 x 4096 embedding"
    gathered = model_states_total(s) - zero_paper_bytes(3, nd, model.total_params())
    assert gathered == 4 * largest, f"Nd={nd}: gathered bytes {gathered} != 4 x {largest}"


# --- DeepSpeed's estimators, restated -----------------------------------------------------------
# deepspeedai/DeepSpeed: deepspeed/runtime/zero/stage_1_and_2.py, estimate_zero2_model_states_
# mem_needs, and deepspeed/runtime/zero/stage3.py, estimate_zero3_model_states_mem_needs. Both
# return (cpu_mem, gpu_mem[, largest_layer_memory]); restated here on one node.
def ds_zero2(total_params: int, gpus: int, cpu_offload: bool, buffer: float = 1.5) -> tuple:
    if cpu_offload:
        gpu_mem = 2 * total_params
        cpu_mem = total_params * max(4 * gpus, 16) * buffer
    else:  # 2 = 16-bit params; 18 = 16-bit grads 2 + fp32 grads 4 + fp32 params 4 + Adam 8
        gpu_mem = 2 * total_params + int(18 * total_params / gpus)
        cpu_mem = total_params * 4 * gpus * buffer
    return int(cpu_mem), int(gpu_mem)


def ds_zero3(
    total_params: int, largest: int, gpus: int, cpu_offload: bool, buffer: float = 1.5
) -> tuple:
    """offload_param=False, zero_init=True, one node."""
    largest_layer_memory = 4 * largest
    if cpu_offload:
        gpu_mem = largest_layer_memory + int(2 * total_params / gpus)
        cpu_mem = total_params * 16 * buffer
    else:
        gpu_mem = largest_layer_memory + int(18 * total_params / gpus)
        cpu_mem = largest * 4 * gpus * buffer
    return int(cpu_mem), int(gpu_mem), largest_layer_memory


@pytest.mark.parametrize("gpus", [1, 8, 64, 512])
def test_deepspeed_zero2_without_offload_differs_by_fp32_gradients(gpus: int) -> None:
    """DeepSpeed counts 18 bytes per parameter sharded, the paper 14: the 4-byte fp32 gradient
    partition DeepSpeed's optimizer builds, which the paper's accounting leaves out."""
    model = llama31_8b()
    psi = model.total_params()
    _, ds_gpu = ds_zero2(psi, gpus, cpu_offload=False)
    ours = model_states_total(states(model, zero_stage=2, data_parallel=gpus))
    assert ds_gpu - ours == 4 * psi // gpus, f"{gpus} GPUs: DeepSpeed {ds_gpu} B, ours {ours} B"


@pytest.mark.parametrize("gpus", [1, 2, 4, 8])
def test_deepspeed_zero2_with_offload(gpus: int) -> None:
    model = llama31_8b()
    psi = model.total_params()
    ds_cpu, ds_gpu = ds_zero2(psi, gpus, cpu_offload=True)
    s = states(model, zero_stage=2, data_parallel=gpus, offload_optimizer=True)
    assert model_states_total(s) == ds_gpu, f"{gpus} GPUs: only 16-bit weights stay on the GPU"
    node_cpu = s.cpu_offload * gpus
    assert node_cpu == 16 * psi, "CPU: fp32 master 4 + Adam 8 + fp32 gradients 4 per parameter"
    if 4 * gpus <= 16:
        assert ds_cpu == int(node_cpu * 1.5), "DeepSpeed = ours x additional_buffer_factor 1.5"
    else:  # DeepSpeed's max(4 * gpus, 16): each process's fp32 load-time copy, not modelled here
        assert ds_cpu == int(psi * 4 * gpus * 1.5), f"{gpus} GPUs: DeepSpeed's load-time term"


@pytest.mark.parametrize("gpus", [8, 64, 512])
def test_deepspeed_zero3(gpus: int) -> None:
    model = llama31_8b()
    psi, largest = model.total_params(), largest_module_params(model)
    _, ds_gpu, _ = ds_zero3(psi, largest, gpus, cpu_offload=False)
    ours = model_states_total(states(model, zero_stage=3, data_parallel=gpus))
    assert ds_gpu - ours == 2 * psi // gpus, f"{gpus} GPUs: DeepSpeed's 18 vs the paper's 16"
    ds_cpu, ds_gpu, _ = ds_zero3(psi, largest, gpus, cpu_offload=True)
    offloaded = states(model, zero_stage=3, data_parallel=gpus, offload_optimizer=True)
    assert model_states_total(offloaded) == ds_gpu, f"{gpus} GPUs, offload: identical accounting"
    assert ds_cpu == int(offloaded.cpu_offload * gpus * 1.5), "CPU: 16 bytes/param x 1.5 buffer"


# --- bytes per parameter by precision and optimizer ---------------------------------------------
BYTES_PER_PARAM = [  # precision, optimizer, (weights, gradients, optimizer incl. master)
    ("bf16-mixed", "adamw", (2, 2, 12)),
    ("fp16-mixed", "adamw", (2, 2, 12)),
    ("fp32", "adamw", (4, 4, 8)),
    ("bf16", "adamw", (2, 2, 4)),
    ("bf16-mixed", "sgd", (2, 2, 4)),
    ("fp32", "sgd", (4, 4, 0)),
    ("bf16-mixed", "sgd-momentum", (2, 2, 8)),
    ("bf16", "sgd-momentum", (2, 2, 2)),
    ("bf16-mixed", "lion", (2, 2, 8)),
    ("bf16", "lion", (2, 2, 2)),
    ("fp32", "lion", (4, 4, 4)),
    ("bf16-mixed", "adamw-8bit", (2, 2, Fraction(4) + 2 + Fraction(8, 256))),
    ("bf16", "paged-adamw-8bit", (2, 2, 2 + Fraction(8, 256))),
]


@pytest.mark.parametrize(("precision", "optimizer", "per_param"), BYTES_PER_PARAM)
def test_bytes_per_parameter(precision: str, optimizer: str, per_param: tuple) -> None:
    """Llama 3.1 8B: every tensor has >= 4096 elements and a multiple of 256, so 8-bit Adam is
    exactly 2 + 8/256 bytes per parameter."""
    model = llama31_8b()
    psi = model.total_params()
    s = states(model, precision=precision, optimizer=optimizer)
    got = (s.weights, s.gradients, s.optimizer)
    expected = tuple(per_param_i * psi for per_param_i in per_param)
    assert got == expected, f"{precision} + {optimizer}: {got} != {expected}"


def test_eight_bit_keeps_32_bit_state_for_small_tensors() -> None:
    """bitsandbytes: tensors under min_8bit_size = 4096 elements (GPT-2's 768-wide norms and
    biases) keep two fp32 states; larger ones two uint8 states + fp32 absmax per 256."""
    model = gpt2_small()
    expected = 0
    for t in param_tensors(model):
        if t.numel < 4096:
            expected += 8 * t.total
        else:
            expected += (2 * t.numel + 8 * ceil(t.numel / 256)) * t.count
    s = states(model, precision="bf16", optimizer="adamw-8bit")
    assert s.optimizer == expected, f"GPT-2 8-bit Adam state: {s.optimizer} != {expected}"


def test_adafactor_factors_matrices() -> None:
    model = gpt2_small()
    factored = sum(
        4 * (t.rows + t.cols) * t.count if t.cols > 1 else 4 * t.total for t in param_tensors(model)
    )
    s = states(model, precision="fp32", optimizer="adafactor")
    assert s.optimizer == factored, "Adafactor: fp32 rows + cols per matrix, full for vectors"
    mixed = states(model, optimizer="adafactor")
    assert mixed.optimizer == factored + 4 * model.total_params(), "plus fp32 master when mixed"


# --- LoRA and QLoRA -----------------------------------------------------------------------------
def test_lora_trainable_params_llama31_8b_r16() -> None:
    """PEFT reports 41,943,040 trainable parameters for r=16 on q,k,v,o,gate,up,down of
    Llama-3-8B: 32 layers x 16 x [2(4096+4096) + 2(4096+1024) + 3(4096+14336)]."""
    model = llama31_8b()
    targets = resolve_targets(model, "all-linear")
    trainable = sum(t.total for t in adapter_tensors(targets, 16))
    by_hand = 32 * 16 * (2 * (4096 + 4096) + 2 * (4096 + 1024) + 3 * (4096 + 14336))
    assert trainable == by_hand == 41_943_040, f"trainable {trainable}"
    s = states(model, method="lora", targets=targets)
    assert s.trainable_params == 41_943_040, "compute_model_states agrees"


def test_lora_mixed_precision_states() -> None:
    """Frozen base in bf16 (2 bytes), fp32 adapters (4) with fp32 grads (4) and AdamW (8)."""
    model = llama31_8b()
    s = states(model, method="lora")
    adapters, base = 41_943_040, model.total_params()
    assert s.weights == 2 * base + 4 * adapters, "16-bit frozen base + fp32 adapters"
    assert s.gradients == 4 * adapters, "gradients only for the adapters, in fp32"
    assert s.optimizer == 8 * adapters, "AdamW m and v in fp32; the fp32 adapters are the master"


def test_fused_module_gets_one_adapter() -> None:
    """GPT-2's q, k, v are one Conv1D `c_attn` (768 -> 2304): PEFT adapts it as one module."""
    model = gpt2_small()
    modules = {m.name: m for m in physical_linears(model)}
    assert modules["c_attn"].d_out == 3 * 768, "c_attn fuses q, k and v"
    targets = resolve_targets(model, ["q_proj"])
    assert [t.name for t in targets] == ["c_attn"], "a slice selects the whole fused module"
    trainable = sum(t.total for t in adapter_tensors(targets, 8))
    assert trainable == 12 * 8 * (768 + 2304), "r(d_in + d_out) for the fused matrix"


@pytest.mark.parametrize(
    ("numel", "double_quant", "bits"),
    [
        (4096 * 4096, False, Fraction(9, 2)),  # 4 + 32/64
        (4096 * 4096, True, 4 + Fraction(8, 64) + Fraction(32, 64 * 256)),  # 4.127
    ],
)
def test_nf4_bits_per_parameter(numel: int, double_quant: bool, bits: Fraction) -> None:
    """QLoRA §3: 0.5 bits of constants per parameter, 0.127 with double quantization."""
    assert Fraction(8 * nf4_bytes(numel, double_quant), numel) == bits, f"dq={double_quant}"


def test_qlora_weights() -> None:
    model = llama31_8b()
    s = states(model, method="qlora", precision="bf16")
    linear = sum(t.total for t in param_tensors(model) if t.kind == "linear")
    other = model.total_params() - linear
    nf4 = sum(
        nf4_bytes(t.numel, True) * t.count for t in param_tensors(model) if t.kind == "linear"
    )
    adapters = 2 * 41_943_040  # bf16 adapters under pure bf16
    dequant = 2 * 4096 * 14336  # the largest linear, dequantized to 16-bit
    assert s.weights == nf4 + 2 * other + adapters + dequant, "NF4 linears + 16-bit rest"
    assert s.dequant_buffer == dequant, "one MLP matrix dequantized at a time"


# --- tensor parallelism, offload, DDP -----------------------------------------------------------
def test_tensor_parallel_splits_matrices_and_replicates_norms() -> None:
    model = llama31_8b()
    norms = model.norm_params()
    s = states(model, tensor_parallel=4)
    assert s.weights == 2 * ((model.total_params() - norms) // 4 + norms), "TP=4 weights"


def test_ddp_gradient_buckets_and_stage1_offload() -> None:
    model = llama31_8b()
    psi = model.total_params()
    assert states(model, data_parallel=8).comm_buffers == 2 * psi, "DDP copies the gradients"
    assert states(model, data_parallel=1).comm_buffers == 0, "no buckets on one GPU"
    s = states(model, zero_stage=1, data_parallel=8, offload_optimizer=True)
    assert (s.weights, s.gradients, s.optimizer) == (2 * psi, 2 * psi, 0), "stage 1 keeps grads"
    assert s.cpu_offload == 16 * psi // 8, "master + Adam + fp32 gradient partition on CPU"


def test_fsdp_gathers_blocks() -> None:
    model = llama31_8b()
    block = (model.total_params() - model.embedding_params() - 4096) // 32  # less final norm
    s = states(model, zero_stage=3, data_parallel=8, sharding="fsdp")
    # and the root unit (embedding and untied lm_head, 2 x 128,256 x 4096), which FSDP1 keeps
    # unsharded from its forward through the backward: 7/8 of it beyond this rank's shard
    root = 2 * 128_256 * 4096
    assert s.gathered_weights == 2 * 2 * block + 2 * (root - root // 8), "blocks and the root"
    assert s.gathered_gradients == 2 * block, "one block's 16-bit gradients before reduce-scatter"
