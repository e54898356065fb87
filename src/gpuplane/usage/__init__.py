"""``gpuplane usage``: what the GPUs really do, joined with the pods that hold them.

Layers, bottom up (each module has one job):

- :mod:`.metrics`: the DCGM exporter's metric and label names, the PromQL queries, the step
  chosen from the window, and :class:`~.metrics.SeriesSet` (every source's common form: series
  aligned on one time grid);
- :mod:`.prometheus` (a Prometheus server over its HTTP API, read-only) and :mod:`.files`
  (offline files: a saved API response, or OpenMetrics / text exposition samples);
- :mod:`.join`: series -> GPU devices -> pods -> workloads, node pools and prices, from the
  cluster state;
- :mod:`.compute`: GPU-hours, activity, memory and idle stretches, vectorised with numpy;
- :mod:`.findings`: ``gpu-allocated-idle``, ``gpu-underused``, ``gpu-memory-oversized``,
  ``gpu-data-starved`` with the change that fixes each (from ``advise``) and its saving;
- :mod:`.engine`: :func:`~.engine.run_usage`, the one entry point of the CLI and MCP.
"""
