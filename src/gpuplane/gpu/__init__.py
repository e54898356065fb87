"""Accelerator semantics: GPU resource names, device-plugin / GPU Operator / mig-parted
configuration, and the hardware catalog (data files under ``gpu/data/``).

Modules, one job each:

- ``resources``: what an extended-resource name means (full GPU, MIG profile, shared replica, HAMi).
- ``catalog``: GPU models, MIG geometry, cloud instance types, cold-start figures, loaded once.
- ``device_plugin``: NVIDIA k8s-device-plugin ``version: v1`` config, validated like upstream.
- ``clusterpolicy``: GPU Operator ClusterPolicy and chart values, reduced to what engines need.
- ``mig``: mig-parted configs and the exact "does this layout fit one GPU" check.

Nothing here is imported by ``gpuplane.cli`` at start-up, so engine modules may import
PyYAML at module level.
"""
