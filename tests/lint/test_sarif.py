"""SARIF 2.1.0 output.

The official OASIS schema could not be vendored here (no network at test time), so
the log is checked against a strict hand-written subset of the SARIF 2.1.0 schema:
the object and property names, required members and enums of the spec's
sarifLog / run / tool / toolComponent / reportingDescriptor / result / location
definitions that gpuplane emits, with ``additionalProperties: false`` so a
misspelt member fails.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from click.testing import CliRunner

from gpuplane.cli.main import cli

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "lint"

MESSAGE = {
    "type": "object",
    "additionalProperties": False,
    "required": ["text"],
    "properties": {"text": {"type": "string"}, "markdown": {"type": "string"}},
}
SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "additionalProperties": False,
    "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string"},
        "version": {"enum": ["2.1.0"]},
        "runs": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["tool"],
                "properties": {
                    "columnKind": {"enum": ["utf16CodeUnits", "unicodeCodePoints"]},
                    "tool": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "additionalProperties": False,
                                "required": ["name"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "version": {"type": "string"},
                                    "semanticVersion": {"type": "string"},
                                    "informationUri": {"type": "string"},
                                    "rules": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "additionalProperties": False,
                                            "required": ["id", "shortDescription", "fullDescription", "help"],
                                            "properties": {
                                                "id": {"type": "string"},
                                                "name": {"type": "string"},
                                                "shortDescription": MESSAGE,
                                                "fullDescription": MESSAGE,
                                                "help": MESSAGE,
                                                "helpUri": {"type": "string"},
                                                "defaultConfiguration": {
                                                    "type": "object",
                                                    "additionalProperties": False,
                                                    "properties": {
                                                        "level": {
                                                            "enum": ["none", "note", "warning", "error"]
                                                        }
                                                    },
                                                },
                                                "properties": {"type": "object"},
                                            },
                                        },
                                    },
                                },
                            }
                        },
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["message"],
                            "properties": {
                                "ruleId": {"type": "string"},
                                "ruleIndex": {"type": "integer", "minimum": -1},
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "message": MESSAGE,
                                "locations": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "additionalProperties": False,
                                        "properties": {
                                            "physicalLocation": {
                                                "type": "object",
                                                "additionalProperties": False,
                                                "properties": {
                                                    "artifactLocation": {
                                                        "type": "object",
                                                        "additionalProperties": False,
                                                        "properties": {"uri": {"type": "string"}},
                                                    },
                                                    "region": {
                                                        "type": "object",
                                                        "additionalProperties": False,
                                                        "properties": {
                                                            "startLine": {"type": "integer", "minimum": 1}
                                                        },
                                                    },
                                                },
                                            },
                                            "logicalLocations": {
                                                "type": "array",
                                                "items": {
                                                    "type": "object",
                                                    "additionalProperties": False,
                                                    "properties": {
                                                        "name": {"type": "string"},
                                                        "fullyQualifiedName": {"type": "string"},
                                                        "kind": {"type": "string"},
                                                    },
                                                },
                                            },
                                        },
                                    },
                                },
                                "partialFingerprints": {
                                    "type": "object",
                                    "additionalProperties": {"type": "string"},
                                },
                                "properties": {"type": "object"},
                            },
                        },
                    },
                },
            },
        },
    },
}


def test_sarif_validates_and_points_at_lines() -> None:
    bad = FIX / "gpu-request-without-limit" / "fail.yaml"
    res = CliRunner().invoke(cli, ["lint", "-f", "sarif", str(bad)])
    assert res.exit_code == 1
    log = json.loads(res.stdout)
    jsonschema.validate(log, SCHEMA)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    for rule in rules:
        assert rule["fullDescription"]["text"] and rule["help"]["markdown"].startswith("## What it catches")
    hits = [r for r in run["results"] if r["ruleId"] == "gpu-request-without-limit"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in hits] == [14, 28]
    for r in run["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    assert hits[0]["level"] == "error"
