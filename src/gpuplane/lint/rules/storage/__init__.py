"""Rules of category ``storage``: volumes and model caches of GPU workloads."""
