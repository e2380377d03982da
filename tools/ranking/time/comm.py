"""Communication time of a parallel layout: data-, tensor- and pipeline-parallel traffic.

Collectives are NCCL rings: an all-gather or reduce-scatter of X bytes (the whole gathered or
reduced tensor) over D ranks moves (D - 1) / D x X bytes through each rank's link in D - 1 steps;
an all-reduce is both (Thakur et al. 2005; NCCL's nccl-tests "bus bandwidth" convention, which
the link efficiencies refer to). A ring that spans nodes runs one channel per NIC rail, so its
bandwidth is the smaller of the NVLink bus bandwidth and the node's whole network bandwidth
shared by the group's GPUs on that node (a data-parallel group under tensor parallelism 8 has one
GPU per node, and eight such groups share the node's NICs).

What each layout sends, per GPU (P = parameters on this GPU's tensor/pipeline slice):
- ZeRO-3/FSDP: per micro-step an all-gather of the 16-bit weights for the forward and again for
  the backward (FSDP's reshard-after-forward; DeepSpeed ZeRO-3 re-gathers too) and a
  reduce-scatter of the gradients, one collective per layer; prefetching hides them behind
  compute (`shard_overlap`), except the first layer's gather and the last reduce-scatter;
- hybrid sharding (FSDP HYBRID_SHARD, HSDP): ZeRO-3's traffic inside each shard group of
  `shard_group` ranks (a node), and once per micro-step an all-reduce of each rank's gradient
  shard across the replicas, bucketed behind the backward like DDP;
- ZeRO-2: a reduce-scatter of the gradients each micro-step (hidden behind the backward) and
  an all-gather of the updated weights each optimizer step;
- DDP: an all-reduce of the gradients each optimizer step, bucketed behind the last backward;
- tensor parallelism (Megatron-style, Shoeybi et al. 2019, section 3): two all-reduces of the
  activations per layer forward and two backward (+2 when the forward is recomputed), over
  NVLink, partly hidden (`tp_overlap`);
- pipeline parallelism: each micro-step sends its activations forward and their gradients back
  to the neighbouring stage (point-to-point, exposed);
- expert parallelism (mixture of experts over `expert` ranks): each MoE layer dispatches every
  token's hidden state to its experts and combines the results, an all-to-all each way in the
  forward and again in the backward, (ep - 1) / ep of the bytes leaving the GPU; Megatron Core's
  all-to-all dispatcher runs them on the compute stream, so they are exposed (Lepikhin et al.
  2020, GShard, section 2.2; megatron/core/transformer/moe/token_dispatcher.py);
- context parallelism (ring attention over `context` ranks): each attention layer passes its K
  and V chunk around the ring, cp - 1 hops forward and their gradients back, overlapped with
  the attention kernels of the chunks already held (Liu et al. 2023, Ring Attention, section
  3; torchtitan and Transformer Engine overlap the P2P with compute).
Units: bytes, seconds, bytes per second.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.enums import Interconnect, Network
from tools.gpus import GPUSpec
from tools.ranking.time.assumptions import LinkAssumptions

ACTIVATION_BYTES = 2.0  # 16-bit activations on the wire
WEIGHT_BYTES = 2.0  # 16-bit weights gathered
NF4_BYTES = 0.5 + 4.0 / 64  # QLoRA's frozen weights travel as NF4 plus their absmax (FSDP-QLoRA)
GBIT = 1e9 / 8.0  # bytes per second in one Gbit/s
BUCKET_BYTES = 25 * 2**20  # PyTorch DDP's default bucket_cap_mb = 25
GIGA = 1e9


@dataclass(frozen=True, slots=True)
class ClusterShape:
    """What the time model needs to know about a cluster's links."""

    gpus_per_node: int
    nodes: int
    interconnect: Interconnect
    network: Network
    network_gbps: float | None = None  # inter-node Gbit/s per node; None: the fabric's default

    @property
    def gpu_count(self) -> int:
        return self.gpus_per_node * self.nodes


@dataclass(frozen=True, slots=True)
class Layout:
    """A parallel plan: data x tensor x pipeline degrees, ZeRO stage, optimizer offload."""

    data: int
    tensor: int = 1
    pipeline: int = 1
    zero_stage: int = 0
    offload: bool = False  # the optimizer state and its step on the CPU (ZeRO-Offload)
    offload_params: bool = False  # the weights in CPU RAM, fetched per layer (FSDP CPUOffload)
    shard_group: int = 0  # ZeRO-3 ranks that share one copy (hybrid sharding); 0: all of them
    expert: int = 1  # expert-parallel ranks (within the data ranks) a MoE layer's experts span
    context: int = 1  # context-parallel ranks (within the data ranks) a sequence is split over

    @property
    def gpu_count(self) -> int:
        return self.data * self.tensor * self.pipeline

    @property
    def shard_ranks(self) -> int:
        """Ranks each ZeRO-3 shard spans: the shard group under hybrid sharding, else all."""
        if self.shard_group and self.shard_group < self.data:
            return self.shard_group
        return self.data


@dataclass(frozen=True, slots=True)
class Links:
    """Bus bandwidths of one cluster, bytes per second, and the per-step latency."""

    intra: float
    node_network: float
    gpus_per_node: int
    latency: float
    fabric: str

    def group(self, ranks: int, per_node: int) -> float:
        """Bandwidth of a ring of `ranks` GPUs of which `per_node` sit on each node."""
        if ranks <= per_node or self.node_network == 0:
            return self.intra
        return min(self.intra, self.node_network * per_node / self.gpus_per_node)


def cluster_links(gpu: GPUSpec, shape: ClusterShape, links: LinkAssumptions) -> Links:
    """The bus bandwidths of `shape` built from `gpu` (NVLink figure) and the fabric."""
    if shape.interconnect in ("nvswitch", "nvlink") and gpu.nvlink_gbs is not None:
        intra = gpu.nvlink_gbs / 2.0 * links.nvlink_efficiency * GIGA
    else:
        intra = links.pcie_gbs * GIGA
    fabric = _fabric(shape, links)
    network = 0.0
    if shape.nodes > 1:
        gbps = shape.network_gbps or links.default_network_gbps[shape.network]
        network = gbps * GBIT * links.fabric_efficiency[fabric]
    return Links(intra, network, shape.gpus_per_node, links.step_latency_s, fabric)


def _fabric(shape: ClusterShape, links: LinkAssumptions) -> str:
    if shape.network != "ethernet":
        return shape.network
    fast = shape.network_gbps is not None and shape.network_gbps >= links.fast_ethernet_gbps
    return "efa" if fast else "ethernet"


def ring_seconds(
    total_bytes: float, ranks: int, bandwidth: float, latency: float, pieces: float = 1.0
) -> float:
    """All-gathers or reduce-scatters of `total_bytes` in all over `ranks`, issued as `pieces`
    collectives (per layer under FSDP, per bucket under DDP); an all-reduce is two of them."""
    if ranks <= 1:
        return 0.0
    return (ranks - 1) / ranks * total_bytes / bandwidth + (ranks - 1) * latency * pieces


@dataclass(frozen=True, slots=True)
class Traffic:
    """What a layout moves per GPU, in bytes (whole tensors, before the ring's (D-1)/D)."""

    weights: float  # 16-bit (or NF4) weights of this GPU's slice, gathered under ZeRO-3
    gradients: float  # gradient bytes of this GPU's trainable slice
    updated_weights: float  # 16-bit trainable weights re-gathered after a ZeRO-2 step
    activations: float  # one micro-batch's activations of one layer, b x s x h x 2 B
    layers: int  # layers on this GPU (the pipeline stage's)
    tp_all_reduces: int  # per layer per micro-step
    moe_dispatch: float = 0.0  # bytes one MoE layer's dispatch sends (tokens x k x h x 2 B)
    moe_layers: int = 0  # MoE layers on this GPU
    kv_chunk: float = 0.0  # bytes of one attention layer's local K and V (context parallel)


@dataclass(frozen=True, slots=True)
class CommTimes:
    """Communication seconds per GPU: exposed per micro-step and per optimizer step, and the
    raw totals (before overlap), for the explanation."""

    micro_exposed: float
    step_exposed: float
    micro_total: float
    step_total: float


def communication(
    traffic: Traffic,
    layout: Layout,
    links: Links,
    compute_micro_s: float,
    overlap: LinkAssumptions,
    attention_micro_s: float = 0.0,
) -> CommTimes:
    """Per-GPU communication seconds of `layout` (see the module docstring); compute_micro_s is
    one micro-step's compute, which overlapped traffic hides behind (a context-parallel ring
    hides behind the attention part of it, `attention_micro_s`)."""
    dp, tp, pp = layout.data, layout.tensor, layout.pipeline
    dp_bw = links.group(dp, max(1, min(dp, links.gpus_per_node // tp)))
    lat = links.latency
    micro_total = step_total = micro_exposed = step_exposed = 0.0
    layers = max(traffic.layers, 1)
    buckets = max(1.0, traffic.gradients / BUCKET_BYTES)
    if dp > 1 and layout.zero_stage >= 3:
        shard = layout.shard_ranks
        shard_bw = links.group(shard, max(1, min(shard, links.gpus_per_node // tp)))
        gather = ring_seconds(traffic.weights, shard, shard_bw, lat, layers)
        scatter = ring_seconds(traffic.gradients, shard, shard_bw, lat, layers)
        micro_total = 2 * gather + scatter
        edges = (gather + scatter) / layers  # the first gather and the last reduce-scatter
        hidden = overlap.shard_overlap * compute_micro_s
        micro_exposed = max(0.0, micro_total - hidden) + edges
        replicas = dp // shard
        if replicas > 1:  # hybrid sharding: each shard's gradients all-reduced across replicas
            per_node = max(1, links.gpus_per_node // (tp * shard))
            rep_bw = links.group(replicas, per_node)
            sync = 2 * ring_seconds(traffic.gradients / shard, replicas, rep_bw, lat, buckets)
            backward = compute_micro_s * 2.0 / 3.0
            micro_total += sync
            micro_exposed += max(0.0, sync - overlap.grad_sync_overlap * backward)
    elif dp > 1 and layout.zero_stage == 2:
        micro_total = ring_seconds(traffic.gradients, dp, dp_bw, lat, buckets)
        backward = compute_micro_s * 2.0 / 3.0
        micro_exposed = max(0.0, micro_total - overlap.grad_sync_overlap * backward)
        step_total = ring_seconds(traffic.updated_weights, dp, dp_bw, lat, buckets)
        step_exposed = step_total
    elif dp > 1:
        step_total = 2 * ring_seconds(traffic.gradients, dp, dp_bw, lat, buckets)
        backward = compute_micro_s * 2.0 / 3.0
        step_exposed = max(0.0, step_total - overlap.grad_sync_overlap * backward)
    if tp > 1:
        per_reduce = 2 * ring_seconds(traffic.activations, tp, links.intra, lat)
        tp_s = per_reduce * traffic.tp_all_reduces * traffic.layers
        micro_total += tp_s
        micro_exposed += tp_s * (1.0 - overlap.tp_overlap)
    ep, cp = layout.expert, layout.context
    if ep > 1 and traffic.moe_layers:
        ep_bw = links.group(ep, max(1, min(ep, links.gpus_per_node // tp)))
        a2a = 4 * ((ep - 1) / ep * traffic.moe_dispatch / ep_bw + (ep - 1) * lat)
        micro_total += a2a * traffic.moe_layers
        micro_exposed += a2a * traffic.moe_layers
    if cp > 1 and traffic.kv_chunk:
        cp_bw = links.group(cp, max(1, min(cp, links.gpus_per_node // tp)))
        ring = 3 * (cp - 1) * (traffic.kv_chunk / cp_bw + lat) * traffic.layers
        micro_total += ring
        micro_exposed += max(0.0, ring - attention_micro_s)
    if pp > 1:
        # stages are the slowest-varying rank (Megatron's order): neighbours sit tp x dp apart
        spans = links.node_network > 0 and tp * dp >= links.gpus_per_node
        p2p_bw = links.node_network / links.gpus_per_node if spans else links.intra
        p2p = 2 * (traffic.activations / max(p2p_bw, 1.0) + lat)
        micro_total += p2p
        micro_exposed += p2p
    return CommTimes(micro_exposed, step_exposed, micro_total, step_total)
