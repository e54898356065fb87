"""The ``cluster`` rules of spec/rules.md: what is wrong with a live cluster's GPU stack.

They register with the lint registry (``category="cluster"``,
``context="required"``), so ``gpuplane rules`` lists them and ``gpuplane
explain`` prints their pages, while ``gpuplane lint`` leaves them to
``gpuplane diagnose`` (``lint.engine.select_rules`` skips the category).

Each rule reads the shared :class:`~gpuplane.diagnose.facts.ClusterFacts` (the
inventory and its per-node flags, the GPU-stack pods per node, the scheduler's
verdicts) and yields :class:`~gpuplane.diagnose.evidence.ClusterFinding` s
whose ``evidence`` lists the nodes, pods, labels and conditions that prove them.

"""
