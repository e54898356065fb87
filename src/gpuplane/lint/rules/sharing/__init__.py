"""Rules of category ``sharing``: time-slicing, MPS, MIG and the NVIDIA device-plugin / mig-parted
configs. Config parsing and MIG geometry live in :mod:`gpuplane.gpu` (device_plugin, mig,
catalog); these rules only decide which objects are such configs and where to report.
"""
