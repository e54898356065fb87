"""Render a platform blueprint into validated GPU-platform configuration.

Entry points: :func:`gpuplane.generate.engine.generate` (blueprint -> validated bundle),
:func:`gpuplane.generate.output.write_bundle` (bundle -> folder),
:func:`gpuplane.generate.blueprint.load_blueprint` / ``json_schema``.
"""
