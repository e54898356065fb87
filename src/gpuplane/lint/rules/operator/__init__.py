"""Rules of category ``operator``: the NVIDIA GPU Operator's ClusterPolicy."""
