"""why-pending: explanations of Pending pods on top of the scheduler core.

``explain.py`` (one pod, every Pending pod), ``model.py`` (``Explanation``, ``Cause``),
``prequeue.py`` (what stops a pod before kube-scheduler's filters: gates, other schedulers,
gangs, Kueue, quota), ``gpu_causes.py`` (GPU-aware causes and fixes from the filter verdicts).
This package calls ``gpuplane.scheduler``; the scheduler never imports it.
"""
