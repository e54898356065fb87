"""Admission layers of ``gpuplane simulate``, one module each, behind ``base.AdmissionLayer``:
``default`` (kube-scheduler alone), ``volcano``, ``coscheduling`` (gangs), ``kueue`` (quota)."""
