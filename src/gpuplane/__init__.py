"""gpuplane: a Kubernetes specialist for AI workloads.

The package is laid out the way data flows (see docs/architecture.md):
sources -> k8s model -> engines (lint, scheduler, diagnose, ...) -> reports.
Importing the package must stay cheap: the CLI's start-up time depends on it.
"""

__version__ = "0.1.0"
