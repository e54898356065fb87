"""The rule registry shared by lint and diagnose (a neutral layer: it imports neither).

Rule modules declare rules with :func:`rule`; the layer above names the rule packages to load
(:func:`load`). ``gpuplane.rule_catalog`` holds the whole catalog (lint rules and the cluster
rules of diagnose) for ``gpuplane rules``, ``explain``, SARIF and the docs pages.
"""

from gpuplane.ruleset.registry import CATEGORIES, CONTEXTS, TIERS, CheckFn, RuleMeta, find, load, rule

__all__ = ["CATEGORIES", "CONTEXTS", "TIERS", "CheckFn", "RuleMeta", "find", "load", "rule"]
