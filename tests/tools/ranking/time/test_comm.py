"""Ring collectives, cluster bandwidths and each layout's communication, by hand."""

from __future__ import annotations

import pytest

from tools.gpus import lookup_gpu
from tools.ranking.time.assumptions import LinkAssumptions
from tools.ranking.time.comm import (
    ClusterShape,
    Layout,
    Links,
    Traffic,
    cluster_links,
    communication,
    ring_seconds,
)

H100 = lookup_gpu("H100-SXM")  # NVLink 900 GB/s both directions
# 400 GB/s inside a node, 200 GB/s per node between nodes, no latency: round numbers
LINKS = Links(intra=400e9, node_network=200e9, gpus_per_node=8, latency=0.0, fabric="test")
TRAFFIC = Traffic(weights=2e9, gradients=4e9, updated_weights=2e9, activations=1e8, layers=10,
                  tp_all_reduces=4)  # fmt: skip
FULL_OVERLAP = LinkAssumptions()


def test_ring_seconds() -> None:
    # 7/8 x 8e9 B / 400e9 B/s = 0.0175 s, + 7 steps x 2 us x 32 collectives = 0.000448 s
    assert ring_seconds(8e9, 8, 400e9, 2e-6, pieces=32) == pytest.approx(0.017948)
    assert ring_seconds(8e9, 1, 400e9, 2e-6) == 0.0, "one rank sends nothing"


@pytest.mark.parametrize(
    ("shape", "intra", "network", "fabric"),
    [
        # NVLink: 900 / 2 x 0.82 = 369 GB/s (NCCL's 370 of 450); one node has no network
        (ClusterShape(8, 1, "nvswitch", "infiniband"), 369e9, 0.0, "infiniband"),
        # 3200 Gbit/s = 400 GB/s x 0.94 on InfiniBand
        (ClusterShape(8, 2, "nvswitch", "infiniband", 3200), 369e9, 376e9, "infiniband"),
        # RDMA-capable Ethernet (AWS EFA): 400 GB/s x 0.75
        (ClusterShape(8, 2, "nvswitch", "ethernet", 3200), 369e9, 300e9, "efa"),
        # plain 100 Gbit/s Ethernet: 12.5 GB/s x 0.4; PCIe-only GPUs: 25 GB/s
        (ClusterShape(4, 2, "pcie", "ethernet", 100), 25e9, 5e9, "ethernet"),
        # unstated RoCE: the default 1600 Gbit/s x 0.85
        (ClusterShape(8, 2, "nvswitch", "roce"), 369e9, 170e9, "roce"),
    ],
)
def test_cluster_links(shape: ClusterShape, intra: float, network: float, fabric: str) -> None:
    links = cluster_links(H100, shape, LinkAssumptions())
    assert links.intra == pytest.approx(intra), "intra-node bus bandwidth"
    assert links.node_network == pytest.approx(network), "node network bandwidth"
    assert links.fabric == fabric, "fabric class"


def test_group_bandwidth() -> None:
    assert LINKS.group(8, 8) == 400e9, "inside a node: NVLink"
    assert LINKS.group(16, 8) == 200e9, "eight per node share the node's network"
    assert LINKS.group(16, 1) == 25e9, "one per node (tensor parallel 8): an eighth of it"


def test_zero3_gathers_hide_behind_compute() -> None:
    # 16 data ranks over two nodes at 200 GB/s: gather 15/16 x 2e9 / 200e9 = 0.009375 s (twice),
    # reduce-scatter 15/16 x 4e9 / 200e9 = 0.01875 s; total 0.0375 s. With 0.03 s of compute
    # 0.0075 s shows, plus the first gather and last reduce-scatter (0.028125 / 10 layers).
    got = communication(TRAFFIC, Layout(data=16, zero_stage=3), LINKS, 0.03, FULL_OVERLAP)
    assert got.micro_total == pytest.approx(0.0375), "three collectives"
    assert got.micro_exposed == pytest.approx(0.0075 + 0.0028125), "the rest is hidden"
    assert got.step_exposed == 0.0, "nothing per step"


def test_ddp_and_zero2() -> None:
    # DDP: an all-reduce (2 x 0.01875 s) per step behind the last backward (2/3 x 0.03 s)
    ddp = communication(TRAFFIC, Layout(data=16), LINKS, 0.03, FULL_OVERLAP)
    assert ddp.step_total == pytest.approx(0.0375) and ddp.micro_total == 0.0, "per step"
    assert ddp.step_exposed == pytest.approx(0.0175), "0.0375 - 0.02 s"
    # ZeRO-2: a reduce-scatter per micro-step (hidden), the weights' all-gather per step
    zero2 = communication(TRAFFIC, Layout(data=16, zero_stage=2), LINKS, 0.03, FULL_OVERLAP)
    assert zero2.micro_exposed == 0.0, "0.01875 s behind a 0.02 s backward"
    assert zero2.step_exposed == pytest.approx(0.009375), "updated weights gathered"


def test_tensor_and_pipeline_parallel() -> None:
    # TP 4 in a node: per all-reduce 2 x 3/4 x 1e8 / 400e9 = 3.75e-4 s, 4 per layer x 10 layers
    tp = communication(TRAFFIC, Layout(data=2, tensor=4), LINKS, 0.03, FULL_OVERLAP)
    assert tp.micro_total == pytest.approx(0.015), "all-reduces"
    assert tp.micro_exposed == pytest.approx(0.0075), "half hidden"
    # PP 2 inside one node: activations forward and gradients back, 2 x 1e8 / 400e9
    one_node = Links(intra=400e9, node_network=0.0, gpus_per_node=8, latency=0.0, fabric="test")
    pp = communication(TRAFFIC, Layout(data=1, pipeline=2), one_node, 0.03, FULL_OVERLAP)
    assert pp.micro_exposed == pytest.approx(5e-4), "point-to-point, exposed"
    # PP across nodes with TP 8, one stage per node: each GPU's peer is on the other node, at
    # an eighth of the node's network (25 GB/s): 2 x 1e8 / 25e9 = 0.008 s; plus the TP
    # all-reduces 2 x 7/8 x 1e8 / 400e9 x 4 x 10 layers = 0.0175 s
    across = communication(TRAFFIC, Layout(data=1, tensor=8, pipeline=2), LINKS, 0.03, FULL_OVERLAP)
    assert across.micro_total == pytest.approx(0.008 + 0.0175), "p2p over the network + TP"


def test_hybrid_sharding_keeps_zero3_traffic_inside_the_node() -> None:
    """HSDP over 2 nodes of 8: the per-layer weight gathers and gradient reduce-scatters run at
    NVLink speed inside a node, and each rank's gradient shard is all-reduced with its twin on
    the other node once per micro-step; the weights never cross the network."""
    links = Links(intra=400e9, node_network=200e9, gpus_per_node=8, latency=0.0, fabric="test")
    traffic = Traffic(weights=8e9, gradients=1e9, updated_weights=0.0, activations=1e8,
                      layers=10, tp_all_reduces=4)  # fmt: skip
    full = communication(traffic, Layout(data=16, zero_stage=3), links, 0.0, FULL_OVERLAP)
    hybrid = communication(traffic, Layout(data=16, zero_stage=3, shard_group=8), links, 0.0,
                           FULL_OVERLAP)  # fmt: skip
    # full shard over 16: the ring crosses the node's 200 GB/s for everything it moves
    assert full.micro_total == pytest.approx(2 * (15 / 16 * 8e9 / 200e9) + 15 / 16 * 1e9 / 200e9)
    # hybrid: inside the node at 400 GB/s; across, 8 rings (one GPU each per node) share the
    # node's 200 GB/s: 2 x 1/2 x (1e9 / 8) B at 25 GB/s
    inside = 2 * (7 / 8 * 8e9 / 400e9) + 7 / 8 * 1e9 / 400e9
    across = 2 * (1 / 2 * 1e9 / 8 / 25e9)
    assert hybrid.micro_total == pytest.approx(inside + across)
    assert hybrid.micro_total < 0.6 * full.micro_total, "the weights stay in the node"


def test_expert_parallel_all_to_all_is_exposed() -> None:
    """Each MoE layer: dispatch and combine, forward and backward, (ep - 1) / ep of the
    dispatched bytes at the group's bandwidth, none hidden."""
    traffic = Traffic(weights=0.0, gradients=0.0, updated_weights=0.0, activations=0.0,
                      layers=10, tp_all_reduces=0, moe_dispatch=8e8, moe_layers=10)  # fmt: skip
    got = communication(traffic, Layout(data=8, expert=8), LINKS, 1.0, FULL_OVERLAP)
    per_layer = 4 * (7 / 8 * 8e8 / 400e9)
    assert got.micro_exposed == pytest.approx(10 * per_layer), "exposed"
    dense = communication(traffic, Layout(data=8), LINKS, 1.0, FULL_OVERLAP)
    assert dense.micro_total == 0.0, "no expert parallelism, no all-to-all"


def test_context_parallel_ring_hides_behind_attention() -> None:
    """Ring attention: 3 (cp - 1) hops of the local K and V per layer (forward, and K/V with
    their gradients backward), hidden behind the attention kernels as far as they last."""
    traffic = Traffic(weights=0.0, gradients=0.0, updated_weights=0.0, activations=0.0,
                      layers=10, tp_all_reduces=0, kv_chunk=4e8)  # fmt: skip
    ring = 10 * 3 * 3 * 4e8 / 400e9  # cp 4: 3 hops
    slow = communication(traffic, Layout(data=8, context=4), LINKS, 1.0, FULL_OVERLAP, 0.0)
    assert slow.micro_exposed == pytest.approx(ring), "no attention to hide behind"
    hidden = communication(traffic, Layout(data=8, context=4), LINKS, 1.0, FULL_OVERLAP, 1.0)
    assert hidden.micro_exposed == 0.0 and hidden.micro_total == pytest.approx(ring)
