"""Cluster diagnosis: GPU inventory (capacity, allocation, MIG/sharing layout, node problems).

``gpuplane inventory`` renders :func:`gpuplane.diagnose.inventory.build_inventory`;
``gpuplane diagnose`` embeds the same document under its ``inventory`` key.
"""
