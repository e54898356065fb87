"""Kubernetes semantics, GPU-agnostic: quantities, selectors, affinity, tolerations,
pod requests, workload expansion (controller -> PodSets) and ClusterState."""
