"""Objects with unrendered template placeholders: analysed only in part."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.lint.finding import Finding, format_field
from gpuplane.lint.placeholders import MAX_LISTED, placeholder_fields
from gpuplane.lint.rules._common import obj_label
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext


@rule(
    id="manifest-unrendered-template",
    severity="info",
    category="gpu",
    summary="object with unrendered placeholders (${VAR}, {{ }}): analysed only in part, those fields skipped",
)
def manifest_unrendered_template(ctx: LintContext) -> Iterator[Finding]:
    for obj in ctx.objects:
        fields = placeholder_fields(obj)
        if not fields:
            continue
        shown = ", ".join(format_field(f) for f in fields[:MAX_LISTED])
        more = f" and {len(fields) - MAX_LISTED} more" if len(fields) > MAX_LISTED else ""
        yield ctx.report(
            obj,
            fields[0],
            f"{obj_label(obj)} holds unrendered template placeholders in {len(fields)} field(s) ({shown}{more}): "
            "it was analysed only in part, and no check judged those fields.",
            "lint the rendered output (envsubst < FILE, helm template, kustomize build) to check every field",
        )
