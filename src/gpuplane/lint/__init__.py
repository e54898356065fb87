"""The lint engine: rules registered with metadata and docs, run over PodSets.

Entry points: :func:`gpuplane.lint.engine.run_lint` (used by the CLI, diagnose and
MCP), :func:`gpuplane.lint.registry.all_rules` / ``get_rule`` for the catalog.
"""
