"""Glue between `EstimateInput` and the rule modules, and the detail parts of the result."""

from __future__ import annotations

from math import ceil

from tools.memory import constants as c
from tools.memory.activations import ActivationConfig, Activations
from tools.memory.inputs import LORA_METHODS, EstimateInput
from tools.memory.peak import StepInputs
from tools.memory.results import ActivationsDetail, BytesPerParam, LayerActivations
from tools.memory.states.inventory import PhysicalLinear, linear_modules
from tools.memory.states.model_states import ModelStates, StatesConfig, megatron_main_grads


def states_config(inp: EstimateInput, targets: tuple[PhysicalLinear, ...]) -> StatesConfig:
    return StatesConfig(
        method=inp.method,
        precision=inp.precision,
        optimizer=inp.optimizer,
        lora_rank=inp.lora_rank,
        targets=targets,
        qlora_double_quant=inp.mechanisms.qlora_double_quant,
        zero_stage=inp.zero_stage,
        sharding=inp.sharding,
        data_parallel=inp.num_gpus,
        tensor_parallel=inp.tensor_parallel,
        offload_optimizer=inp.offload_optimizer,
        engine=inp.effective_engine,
        optimizer_impl=inp.effective_optimizer_impl,
        optimizer_in_backward=inp.mechanisms.optimizer_in_backward,
        frozen_fp32=inp.method in LORA_METHODS and inp.mechanisms.frozen_base_dtype == "fp32",
        offload_params=inp.offload_params,
        stack=inp.stack,
        qlora_lm_head=inp.method == "qlora" and inp.mechanisms.qlora_lm_head,
    )


def activation_config(inp: EstimateInput, targets: tuple[PhysicalLinear, ...]) -> ActivationConfig:
    mech = inp.mechanisms
    return ActivationConfig(
        model=inp.stack_model,
        full=inp.method in ("pretrain", "full"),
        precision=inp.precision,
        targets=targets,
        lora_rank=inp.lora_rank,
        lora_dropout=inp.lora_dropout > 0,
        micro_batch=inp.micro_batch_size,
        seq_len=inp.seq_len,
        recompute=inp.gradient_checkpointing,
        attention=inp.attention,
        dropout=inp.effective_dropout,
        tensor_parallel=inp.tensor_parallel,
        sequence_parallel=inp.sequence_parallel,
        engine=inp.effective_engine,
        device=inp.device,
        loss=mech.loss,
        compiled_loss=mech.compiled_loss,
        selective=mech.selective_checkpointing,
        activation_offload=mech.activation_offload,
        qlora_keeps_input=mech.qlora_keeps_input,
        qlora_lm_head=mech.qlora_lm_head,
        repeat_kv=mech.repeat_kv,
        fused_rmsnorm=mech.fused_rmsnorm,
        qlora=inp.method == "qlora",
        fp32_base=inp.method in LORA_METHODS and inp.mechanisms.frozen_base_dtype == "fp32",
        fused_lora=mech.fused_lora and inp.method in LORA_METHODS and inp.lora_dropout == 0,
        offload_stash=mech.offload_stash,
        upcast_logits=mech.upcasts_logits,
        loop_keeps_output=mech.loop_keeps_output,
    )


def step_inputs(inp: EstimateInput, states: ModelStates, acts: Activations) -> StepInputs:
    """The model states and the vocabulary-sized gradients the step's moments are built from."""
    m, full = inp.model, inp.method in ("pretrain", "full")
    vocab_grad = ceil(m.vocab_size / inp.tensor_parallel) * m.hidden_size
    grad = states.grad_element_bytes * vocab_grad if full else 0
    in_backward = inp.mechanisms.optimizer_in_backward  # one gradient alive at a time
    return StepInputs(
        weights=states.weights - states.dequant_buffer,
        gradients=min(states.gradients, states.largest_gradient)
        if in_backward
        else states.gradients,
        optimizer=states.optimizer,
        optimizer_temporaries=states.step_temporaries,
        full=full,
        accumulating=inp.gradient_accumulation_steps > 1
        or megatron_main_grads(states_config(inp, ())),
        recompute=inp.gradient_checkpointing,
        lm_head_grad=grad,
        embedding_grad=min(grad, states.gradients),
        tied=m.tied_embeddings,
        grad_copy_bytes=c.BF16 if acts.weight_copies else 0,
        dequant_buffer=states.dequant_buffer,
        lm_head_dequant=states.lm_head_dequant,
        down_grad=_down_grad(inp, states.grad_element_bytes) if full else 0,
    )


def _down_grad(inp: EstimateInput, grad_bytes: int) -> int:
    """Bytes of one layer's down-projection weight gradient(s) on one GPU (all experts)."""
    m = inp.model
    layers = m.num_layers + m.num_decoder_layers
    down = sum(
        mod.d_in * mod.d_out * mod.count for mod in linear_modules(m) if mod.name == "down_proj"
    )
    return ceil(grad_bytes * down / layers / inp.tensor_parallel)


def bytes_per_param(inp: EstimateInput, states: ModelStates) -> BytesPerParam:
    trainable = max(states.trainable_params, 1)
    return BytesPerParam(
        weights=states.unsharded_weights * inp.tensor_parallel / states.total_params,
        gradients=states.unsharded_gradients * inp.tensor_parallel / trainable,
        optimizer=states.unsharded_optimizer * inp.tensor_parallel / trainable,
    )


def activations_detail(acts: Activations) -> ActivationsDetail:
    return ActivationsDetail(
        layers=[
            LayerActivations(
                name=g.name,
                count=g.count,
                per_layer=g.tensors,
                per_layer_total=g.full_each,
                stored_per_layer=g.stored_each,
            )
            for g in acts.layers
        ],
        head=acts.head,
        logits_peak=acts.logits_peak,
        recompute_working_set=acts.recompute_working_set,
        logits_forward=acts.logits_forward,
        autocast_weight_copies=acts.weight_copies,
        logits_head=acts.logits_head,
        logits_held=acts.logits_held,
        logits_kept=acts.logits_kept,
        graph_held=acts.graph_held,
        offloaded=acts.offloaded,
        total=acts.total,
    )
