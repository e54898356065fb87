"""The lint engine: rules registered with metadata and docs, run over PodSets.

Entry points: :func:`gpuplane.lint.engine.run_lint` (used by the CLI, diagnose and
MCP), :func:`gpuplane.rule_catalog.all_rules` / ``get_rule`` for the catalog; the rules
themselves live in :mod:`gpuplane.lint.rules` (one package per category, one module per theme).
"""
