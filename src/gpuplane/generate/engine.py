"""``generate``: blueprint -> checks -> renderers -> validation -> bundle.

A blueprint with contradictions is refused before anything is rendered; rendered objects
that fail their schema are a generator bug and are refused too, so nothing invalid is ever
written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gpuplane.generate.blueprint import Blueprint, BlueprintError
from gpuplane.generate.checks import check_blueprint
from gpuplane.generate.plan import build_plans
from gpuplane.generate.render import (
    autoscaling,
    controllers,
    mig,
    network,
    operator,
    scheduling,
    sharing,
    storage,
    tenancy,
    workloads,
)
from gpuplane.generate.render.base import Bundle
from gpuplane.generate.validate import CrdSchemas, validate_objects

RENDERERS = (
    operator,
    controllers,
    sharing,
    mig,
    network,
    scheduling,
    tenancy,
    autoscaling,
    storage,
    workloads,
)


@dataclass(slots=True)
class GenerateResult:
    bundle: Bundle
    schema_errors: list[str] = field(default_factory=list)
    unchecked_kinds: list[str] = field(default_factory=list)


def render_blueprint(bp: Blueprint) -> Bundle:
    """Check the blueprint and render every component (raises :class:`BlueprintError`)."""
    from gpuplane.generate.render.storage import required_parameters  # deferred for start-up time

    problems, mig_layouts = check_blueprint(bp)
    for section in ("shared_datasets", "high_performance"):
        for i, vol in enumerate(getattr(bp.storage, section)):
            for key in required_parameters(vol):
                if key not in vol.parameters:
                    problems.append(
                        f"storage.{section}[{i}].parameters.{key}: required by the {vol.backend} CSI driver"
                    )
    if problems:
        raise BlueprintError(problems)
    bundle = Bundle(blueprint=bp, plans=build_plans(bp, mig_layouts))
    bundle.shared["crd_urls"] = []
    for renderer in RENDERERS:
        renderer.render(bundle)
    return bundle


def generate(bp: Blueprint, crds_dir: str | Path | None = None) -> GenerateResult:
    bundle = render_blueprint(bp)
    crds = CrdSchemas(crds_dir) if crds_dir else None
    errors, unchecked = validate_objects(bundle.all_objects(), bp.kubernetes_version, crds)
    return GenerateResult(bundle=bundle, schema_errors=errors, unchecked_kinds=unchecked)
