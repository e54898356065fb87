"""Decision support engines behind ``gpuplane advise``.

Modules, one job each:

- ``mig_configs``: every valid GPU-instance mix one GPU of a model can carry (from the catalog).
- ``packing``: an exact solver for "fewest bins of given patterns covering a demand vector"
  (LP bound + branch and bound + dynamic programming), knowing nothing about GPUs.
- ``mig_planner``: ``advise mig``: demand parsing, mixed fleets, per-GPU layouts, mig-parted output.
- ``sharing``: ``advise sharing``: none / time-slicing / MPS / MIG / DRA per workload, with configs.
- ``capacity``: ``advise capacity``: nodes per GPU model, monthly cost, cold-start headroom.
- ``prices``: the on-demand price table (``data/prices.yaml``, overridable).
"""
