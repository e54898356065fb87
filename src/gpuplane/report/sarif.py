"""SARIF 2.1.0 output of ``gpuplane lint`` for GitHub code scanning and other SARIF viewers.

Shape follows the OASIS SARIF 2.1.0 spec (sarifLog -> runs[].tool.driver.rules[] /
results[]) and GitHub's documented subset ("SARIF support for code scanning"):
every rule carries ``shortDescription``, ``fullDescription``, ``help`` (text and
Markdown) and ``defaultConfiguration.level``; every result a ``ruleId``,
``ruleIndex``, ``level``, ``message`` and one physical location with a 1-based
``startLine``, plus ``partialFingerprints`` so re-runs de-duplicate alerts.

Findings an annotation silenced (``gpuplane.io/ignore``, ``ignore-rule.gpuplane.io/<id>``) are
results too, each with ``suppressions: [{"kind": "inSource", "justification": <reason>}]`` (SARIF 2.1.0 §3.27.23 ``result.suppressions``, §3.35 the
``suppression`` object: ``kind`` ``inSource`` for a suppression written in the analysed file), so
a viewer shows them as suppressed instead of losing them.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from typing import Any

from gpuplane import __version__
from gpuplane.lint.finding import Finding
from gpuplane.ruleset import RuleMeta

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
INFORMATION_URI = "https://github.com/gpuplane/gpuplane"
# GitHub maps these to "Error", "Warning", "Note" (SARIF levels).
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
# GitHub security-severity is only for security queries; use tags for filtering instead.


def _first_paragraph(markdown: str) -> str:
    """The first prose paragraph of a docs page (for fullDescription)."""
    lines: list[str] = []
    for raw in markdown.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            if lines:
                break
            continue
        if not line:
            if lines:
                break
            continue
        lines.append(line)
    return " ".join(lines)


def _rule_descriptor(meta: RuleMeta) -> dict[str, Any]:
    return {
        "id": meta.id,
        "name": "".join(part.capitalize() for part in meta.id.split("-")),
        "shortDescription": {"text": meta.summary},
        "fullDescription": {"text": _first_paragraph(meta.docs) or meta.summary},
        "help": {"text": meta.docs, "markdown": meta.docs},
        "helpUri": f"{INFORMATION_URI}/blob/main/docs/rules/{meta.id}.md",
        "defaultConfiguration": {"level": _LEVEL[meta.severity]},
        # SARIF tags are a set (uniqueItems): "gpu" rules must not repeat the tag.
        "properties": {
            "tags": list(dict.fromkeys(["kubernetes", "gpu", meta.category])),
            "category": meta.category,
        },
    }


def _uri(path: str) -> str:
    """A relative, forward-slash URI (GitHub resolves it against the repository root)."""
    if not path or path.startswith("<"):
        return "stdin"
    rel = os.path.relpath(path) if os.path.isabs(path) else path
    if rel.startswith(".."):
        rel = os.path.abspath(path)
    rel = rel.replace(os.sep, "/")
    rel = rel[2:] if rel.startswith("./") else rel
    # artifactLocation.uri is a URI reference: spaces and the like are percent-encoded.
    from urllib.parse import quote  # deferred for start-up time: only SARIF output needs it

    if rel.startswith("/"):
        return "file://" + quote(rel, safe="/")
    return quote(rel, safe="/")


def _fingerprint(f: Finding) -> str:
    ref = f.object.ref()
    key = "|".join(
        [f.rule, _uri(f.object.path), str(ref["kind"]), str(ref["namespace"]), str(ref["name"]), f.field]
    )
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _result(f: Finding, index: int) -> dict[str, Any]:
    return {
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": _LEVEL.get(f.severity, "warning"),
        "message": {"text": f"{f.message}\nFix: {f.fix}"},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(f.object.path)},
                    "region": {"startLine": max(1, f.line)},
                },
                "logicalLocations": [
                    {
                        "name": f.object.name or f.object.kind,
                        "fullyQualifiedName": "/".join(
                            p for p in (f.object.kind, f.object.namespace or "", f.object.name) if p
                        )
                        + (f"#{f.field}" if f.path else ""),
                        "kind": "object",
                    }
                ],
            }
        ],
        "partialFingerprints": {"gpuplaneFinding/v1": _fingerprint(f)},
        "properties": {"fixable": bool(f.patch), "fix": f.fix},
    }


def _suppression(reason: str) -> dict[str, str]:
    entry = {"kind": "inSource"}  # the official 2.1.0 schema's suppression has no "status"
    if reason:
        entry["justification"] = reason
    return entry


def build(
    findings: list[Finding], rules: list[RuleMeta], suppressed: Iterable[tuple[Finding, str]] = ()
) -> dict[str, Any]:
    """The SARIF log (one run) for ``findings``; ``rules`` are the rules that ran; ``suppressed``
    the (finding, reason) pairs an annotation silenced, written as suppressed results."""
    index = {meta.id: i for i, meta in enumerate(rules)}
    descriptors = [_rule_descriptor(meta) for meta in rules]
    results = []
    for f, reason in [*((f, None) for f in findings), *suppressed]:
        if f.rule not in index:  # finding of a rule outside the list: describe it too
            index[f.rule] = len(descriptors)
            descriptors.append({"id": f.rule, "shortDescription": {"text": f.rule}})
        result = _result(f, index[f.rule])
        if reason is not None:
            result["suppressions"] = [_suppression(reason)]
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gpuplane",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": descriptors,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
