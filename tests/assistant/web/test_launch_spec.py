"""SkyPilot task YAML and JSON from a ranked option."""

from __future__ import annotations

import json

import yaml

from assistant.web.launch_spec import (
    SKYPILOT_DEFAULT_DISK_GB,
    LaunchSpec,
    build_launch_spec,
    disk_size_gb,
    to_json,
    to_skypilot_yaml,
)
from tests.fakes.artifacts import make_option, make_summary
from tests.fakes.catalogs import make_instance


def test_single_node_spec_names_infra_region_accelerators_spot_and_disk() -> None:
    option = make_option(pricing="spot", price_per_hour=0.9, total_cost=4.71, hours=5.24)
    spec = build_launch_spec(option, make_summary(), make_instance())
    assert to_skypilot_yaml(spec) == (
        "# meta-llama/Llama-3.1-8B, lora, single GPU on 1 x L40S\n"
        "# expected: 5.24 h, $4.71 at $0.90/h (spot)\n"
        "# price: https://aws.amazon.com/ec2/pricing/on-demand/, as of 2025-06-01\n"
        "name: meta-llama-llama-3-1-8b-lora\n"
        "resources:\n"
        "  infra: aws/us-east-1\n"
        "  instance_type: g6e.xlarge\n"
        "  accelerators: L40S:1\n"
        "  use_spot: true\n"
        "  disk_size: 256\n"
    )


def test_multi_node_spec_sets_num_nodes_and_accelerators_per_node() -> None:
    option = make_option(
        instance_id="aws/p5.48xlarge", instance_type="p5.48xlarge", gpu="H100-SXM",
        gpus_per_node=8, nodes=2, gpu_count=16, regions=["us-east-1", "us-west-2"],
    )  # fmt: skip
    spec = build_launch_spec(option, make_summary())
    task = yaml.safe_load(to_skypilot_yaml(spec))
    assert task["num_nodes"] == 2, "two nodes"
    assert task["resources"] == {
        "infra": "aws", "instance_type": "p5.48xlarge", "accelerators": "H100:8",
        "use_spot": False, "disk_size": 256,
    }, "several regions: no region pinned; SkyPilot's name for H100-SXM"  # fmt: skip


def test_a_provider_skypilot_cannot_launch_gets_no_infra_and_says_so() -> None:
    option = make_option(instance_id="tensordock/x", provider="tensordock", instance_type="x")
    text = to_skypilot_yaml(build_launch_spec(option, make_summary()))
    assert "infra" not in yaml.safe_load(text)["resources"]
    assert "# SkyPilot cannot launch tensordock: create the instance with its own tools" in text


def test_disk_holds_weights_two_checkpoints_and_data_rounded_up() -> None:
    assert disk_size_gb(make_summary()) == SKYPILOT_DEFAULT_DISK_GB, "an 8B LoRA fits the default"
    big = make_summary(total_params=70_000_000_000, checkpoint_bytes=1_120_000_000_000, tokens=2e9)
    # 140 GB weights + 2 x 1120 GB checkpoints + 8 GB tokens + 50 GB = 2438 GB -> 2450
    assert disk_size_gb(big) == 2450


def test_json_round_trips_to_the_same_spec() -> None:
    spec = build_launch_spec(make_option(), make_summary(), make_instance())
    data = json.loads(to_json(spec))
    assert LaunchSpec.model_validate(data) == spec
    assert data["accelerators"] == "L40S:1" and data["expected_total_usd"] == 9.75
    assert data["price_as_of"] == "2025-06-01" and data["num_nodes"] == 1
