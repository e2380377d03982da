"""Setup time: what a run pays before its first step, billed like training time.

A rented machine boots (provisioning), pulls its container image and installs the training
stack (environment), downloads the model weights (not for pretraining from scratch) and stages
its share of the data, every node in parallel. Units: minutes and seconds as named; bandwidth
in Gbit/s; bytes.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

SECONDS_PER_HOUR = 3600.0
GBIT = 1e9 / 8.0


class SetupAssumptions(BaseModel):
    """The stated setup assumptions (all overridable in a ranking request)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provisioning_minutes: float = Field(
        default=5.0,
        ge=0,
        description="minutes from the request to a booted machine with its GPUs and drivers: an"
        " assumption; general-purpose VMs start in tens of seconds to minutes depending on"
        " image size and type (Ao et al. 2021, 'An Empirical Analysis of VM Startup Times in"
        " Public IaaS Clouds', arXiv:2107.03467), GPU capacity allocation and driver start add"
        " to it",
    )
    environment_minutes: float = Field(
        default=10.0,
        ge=0,
        description="minutes to pull a CUDA/PyTorch container image (PyTorch NGC images are"
        " 10-20 GB) and install the training stack: an assumption",
    )
    download_gbps: float = Field(
        default=2.0,
        gt=0,
        description="Gbit/s per node for the model weights and the data (a Hugging Face Hub or"
        " object-store download from a cloud VM: ~250 MB/s)",
    )
    weight_bytes_per_param: float = Field(
        default=2.0,
        ge=0,
        description="bytes per parameter of the downloaded checkpoint (bf16 safetensors; QLoRA"
        " quantizes them on load)",
    )
    data_bytes_per_token: float = Field(
        default=4.0,
        ge=0,
        description="bytes of raw text per training token (English BPE tokenizers average"
        " about 4 characters per token); each node stages its share",
    )


def setup_hours(
    params: float, tokens_per_epoch: float, nodes: int, pretrain: bool, a: SetupAssumptions
) -> float:
    """Hours before the first step on every node of a `nodes`-node cluster: provisioning,
    environment, `params` weights (none when pretraining from scratch) and 1/`nodes` of the
    data at `download_gbps`."""
    weights = 0.0 if pretrain else params * a.weight_bytes_per_param
    data = tokens_per_epoch * a.data_bytes_per_token / nodes
    transfer_s = (weights + data) / (a.download_gbps * GBIT)
    fixed_s = (a.provisioning_minutes + a.environment_minutes) * 60.0
    return (fixed_s + transfer_s) / SECONDS_PER_HOUR
