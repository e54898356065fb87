"""Multi-node GPU fabric per cloud instance type (``gpu/data/fabric.yaml``, sourced per row).

The fabric is how NCCL reaches GPUs on other nodes without falling back to TCP sockets: EFA on
AWS (the ``vpc.amazonaws.com/efa`` extended resource of the EFA device plugin), InfiniBand on
Azure ND-series VMs, GPUDirect-TCPX on GKE A3 High. ``generate`` requests it for multi-node
training and ``lint`` checks that such training asks for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import yaml

from gpuplane.gpu.catalog import DATA_DIR

EFA_RESOURCE = "vpc.amazonaws.com/efa"


@dataclass(frozen=True, slots=True)
class InstanceFabric:
    """The fabric one instance type carries."""

    instance_type: str
    fabric: str
    interfaces: int
    device_rdma: bool
    source: str


@lru_cache(maxsize=1)
def fabrics() -> dict[str, InstanceFabric]:
    data = yaml.load((DATA_DIR / "fabric.yaml").read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    source = str(data["source"])
    return {
        str(name): InstanceFabric(str(name), str(fabric), int(n), bool(rdma), source)
        for name, fabric, n, rdma in data["rows"]
    }


def instance_fabric(instance_type: str) -> InstanceFabric | None:
    """The fabric of ``instance_type``, or None when it has none gpuplane knows."""
    return fabrics().get(instance_type)
