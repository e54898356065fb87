"""``generate`` as a service: a blueprint (a file, or text through the same bounded side-input
parser) rendered and validated, then written into one folder (never applied anywhere).

A refused blueprint is a :class:`BlueprintRefused` (an :class:`~gpuplane.app.outcome.AppError`
with every problem); generated objects failing schema validation stay in
``result.schema_errors`` for the front end to refuse (the CLI exits 1 for them). Writing
follows ``generate -o``'s rules (:func:`gpuplane.generate.output.write_bundle`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuplane.app.inputs import INLINE_NAME
from gpuplane.app.outcome import AppError, plural

if TYPE_CHECKING:
    from gpuplane.generate.engine import GenerateResult


class BlueprintRefused(AppError):
    """The blueprint cannot be rendered: ``problems`` each name a field (or, with ``unreadable``,
    the one problem is the file itself and already names it); ``name`` is the blueprint's."""

    def __init__(self, name: str, problems: list[str], *, unreadable: bool) -> None:
        self.name, self.problems, self.unreadable = name, problems, unreadable
        super().__init__(
            problems[0]
            if unreadable
            else f"{name}: blueprint refused ({plural(len(problems), 'problem')}); nothing written"
        )


@dataclass(frozen=True, slots=True)
class GenerateRequest:
    """One of ``blueprint_path`` or ``blueprint_text``; ``crds_dir``: upstream CRDs to validate
    custom resources against."""

    blueprint_path: str | None = None
    blueprint_text: str | None = None
    crds_dir: str | None = None


def render(request: GenerateRequest) -> GenerateResult:
    """Read, check and render the blueprint; validate every generated object."""
    # deferred for start-up time
    from gpuplane.generate.blueprint import (
        BlueprintError,
        BlueprintReadError,
        load_blueprint,
        parse_blueprint,
    )
    from gpuplane.generate.engine import generate

    name = request.blueprint_path or INLINE_NAME
    try:
        if request.blueprint_path is not None:
            blueprint = load_blueprint(request.blueprint_path)
        else:
            from gpuplane.sources.side_input import SideInputError, parse_document  # start-up time

            try:
                data = parse_document(request.blueprint_text or "", INLINE_NAME)
            except SideInputError as exc:
                raise BlueprintReadError([str(exc)]) from None
            blueprint = parse_blueprint(data)
        return generate(blueprint, request.crds_dir)
    except BlueprintError as exc:
        raise BlueprintRefused(name, exc.problems, unreadable=isinstance(exc, BlueprintReadError)) from None


def write(result: GenerateResult, out: str, option: str, *, force: bool = False) -> list[str]:
    """The bundle written under ``out`` (the relative paths); a refusal or a failed write is one
    line naming ``option`` (``-o``, ``output_dir``)."""
    from gpuplane.generate.output import OutputRefused, write_bundle  # deferred for start-up time

    try:
        return write_bundle(result.bundle, out, force=force)
    except OutputRefused as exc:
        raise AppError(f"{option} {exc}") from None
    except OSError as exc:
        raise AppError(f"{option} {out}: cannot write: {exc.strerror or exc}") from None


def bundle_document(result: GenerateResult, out: str | None, *, include_contents: bool) -> dict[str, Any]:
    """What was generated as one JSON document: the files (with their text when asked, or when
    nothing was written), the objects per stage, the Helm releases and the design decisions."""
    from gpuplane.generate.output import bundle_files  # deferred for start-up time

    files = []
    for rel, text in bundle_files(result.bundle).items():
        entry: dict[str, Any] = {"path": rel, "bytes": len(text.encode("utf-8"))}
        if include_contents or out is None:
            entry["content"] = text
        files.append(entry)
    objects = [
        {
            "stage": key,
            "apiVersion": obj.get("apiVersion"),
            "kind": obj.get("kind"),
            "namespace": (obj.get("metadata") or {}).get("namespace"),
            "name": (obj.get("metadata") or {}).get("name"),
        }
        for key, stage in result.bundle.stages.items()
        for obj in stage.objects
    ]
    return {
        "output_dir": os.path.abspath(out) if out is not None else None,
        "files": files,
        "objects": objects,
        "helm_releases": [
            {
                "release": r.release,
                "chart": r.chart,
                "repo": r.repo,
                "version": r.version,
                "namespace": r.namespace,
            }
            for r in result.bundle.releases
        ],
        "decisions": [d.to_json() for d in result.bundle.decisions],
        "unchecked_kinds": list(result.unchecked_kinds),
    }
