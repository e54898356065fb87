"""Rules of category ``distributed``: gangs, schedulers, indexed Jobs, Kubeflow jobs, shared memory."""
