"""``gpuplane lint -f sarif`` validated against the official OASIS SARIF 2.1.0 JSON schema.

Why a second SARIF test: ``test_sarif.py`` checks a hand-written subset of the
schema. This one validates against the schema the OASIS committee published with
SARIF 2.1.0 (vendored byte-exact under ``tests/fixtures/sarif/``, provenance in
``SOURCE.md`` there), so constraints the subset leaves out -- ``uniqueItems`` on
property-bag tags, ``anyOf`` on messages and physical locations, ``minimum`` on
indexes -- are enforced too. GitHub code scanning rejects or degrades uploads that
break them, and additionally needs, per its "SARIF support for code scanning"
page: ``fullDescription`` and ``help`` on every rule (the alert's description and
help panel), and a ``ruleId``, ``level``, a relative ``artifactLocation.uri`` and a
1-based ``region.startLine`` on every result (where the alert is shown).

The schema's ``format`` keywords (``uri``, ``uri-reference``) are only checked by
``jsonschema`` when optional packages are installed, so this module registers its
own RFC 3986 checks for them instead of letting them pass silently.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent.parent
SCHEMA_FILE = ROOT / "tests" / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"
LINT_FIXTURES = ROOT / "tests" / "fixtures" / "lint"
EXAMPLES = ROOT / "examples" / "manifests"
_EXPECT = re.compile(r"^#\s*expect:\s*([\d,\s]+)$")

# RFC 3986 section 2: the characters a URI may hold outside percent-encodings.
_URI_CHARS = re.compile(r"^(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*$")


def _is_uri_reference(value: object) -> bool:
    """RFC 3986 URI-reference: legal characters and, if there is a scheme, a legal one."""
    if not isinstance(value, str):
        return True  # format applies to strings only (JSON Schema draft 7, 7.1)
    if not _URI_CHARS.match(value):
        return False
    scheme = urlsplit(value).scheme
    return not scheme or bool(_SCHEME.match(scheme))


def _is_uri(value: object) -> bool:
    """RFC 3986 absolute URI: a URI-reference that carries a scheme."""
    if not isinstance(value, str):
        return True
    return _is_uri_reference(value) and bool(urlsplit(value).scheme)


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    if not SCHEMA_FILE.is_file():
        pytest.skip(
            f"{SCHEMA_FILE.name} is not vendored in this checkout (see tests/fixtures/sarif/SOURCE.md)"
        )
    with SCHEMA_FILE.open(encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def validator(schema: dict[str, Any]) -> jsonschema.Draft7Validator:
    checker = jsonschema.FormatChecker(formats=())
    checker.checks("uri")(_is_uri)
    checker.checks("uri-reference")(_is_uri_reference)
    return jsonschema.Draft7Validator(schema, format_checker=checker)


def _sarif(args: list[str], stdin: str | None = None) -> dict[str, Any]:
    """Run ``gpuplane lint -f sarif`` in-process; SARIF is stdout, messages stderr."""
    res = CliRunner().invoke(cli, ["lint", "-f", "sarif", "--fail-on", "never", *args], input=stdin)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert res.exit_code == 0, (res.exit_code, res.stderr)
    return json.loads(res.stdout)


def _assert_valid(validator: jsonschema.Draft7Validator, log: dict[str, Any]) -> None:
    errors = sorted(validator.iter_errors(log), key=lambda e: list(map(str, e.absolute_path)))
    report = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:20]]
    assert not errors, f"{len(errors)} SARIF 2.1.0 schema violation(s):\n" + "\n".join(report)


def _assert_github_ready(log: dict[str, Any], lines_of: dict[str, int]) -> None:
    """The members GitHub code scanning reads, present and consistent."""
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    ids = [rule["id"] for rule in rules]
    assert len(ids) == len(set(ids)), "rule ids must be unique"
    for rule in rules:
        assert rule["fullDescription"]["text"].strip(), rule["id"]
        assert rule["help"]["text"].strip(), rule["id"]
    for result in run["results"]:
        assert result["ruleId"] in ids
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note")
        assert result["message"]["text"].strip()
        physical = result["locations"][0]["physicalLocation"]
        uri = physical["artifactLocation"]["uri"]
        assert uri in lines_of, f"result points at {uri!r}, not at a linted file"
        assert 1 <= physical["region"]["startLine"] <= lines_of[uri]
        assert result["partialFingerprints"], "GitHub de-duplicates alerts on these"


def _line_counts(*paths: Path) -> dict[str, int]:
    """Relative URI (as gpuplane writes it, cwd = repo root) -> number of lines."""
    files = [
        p for path in paths for p in (sorted(path.rglob("*")) if path.is_dir() else [path]) if p.is_file()
    ]
    return {f.relative_to(ROOT).as_posix(): len(f.read_text().splitlines()) for f in files}


def _fail_fixtures() -> list[Path]:
    return sorted(LINT_FIXTURES.glob("*/fail*.yaml"))


def test_vendored_schema_is_the_official_draft7_schema(schema: dict[str, Any]) -> None:
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    assert (
        schema["$id"]
        == "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
    )
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]
    assert schema["required"] == ["version", "runs"]
    assert len(schema["definitions"]) == 52
    assert len(SCHEMA_FILE.read_bytes()) == 112318
    jsonschema.Draft7Validator.check_schema(schema)


def test_examples_folder_validates(
    validator: jsonschema.Draft7Validator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    log = _sarif([EXAMPLES.relative_to(ROOT).as_posix()])
    assert log["version"] == "2.1.0"
    assert log["runs"][0]["results"], "the examples are meant to produce findings"
    _assert_valid(validator, log)
    _assert_github_ready(log, _line_counts(EXAMPLES))


@pytest.mark.parametrize("file", _fail_fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_failing_fixture_validates_with_expected_lines(
    file: Path, validator: jsonschema.Draft7Validator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All rules on, for schema validity; then the fixture's own rule alone, for exact lines."""
    monkeypatch.chdir(ROOT)
    rel = file.relative_to(ROOT).as_posix()
    cluster = file.parent / "cluster.yaml"
    extra = ["--cluster", cluster.relative_to(ROOT).as_posix()] if cluster.exists() else []

    log = _sarif([*extra, rel])
    _assert_valid(validator, log)
    _assert_github_ready(log, _line_counts(file))

    rule_id = file.parent.name
    only = _sarif([*extra, "--enable", rule_id, rel])
    _assert_valid(validator, only)
    match = _EXPECT.match(file.read_text().splitlines()[0])
    assert match, f"{rel}: first line must be '# expect: L1,L2'"
    expected = sorted(int(n) for n in match.group(1).replace(" ", "").split(",") if n)
    got = sorted(
        r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in only["runs"][0]["results"]
    )
    assert got == expected
    assert {r["ruleId"] for r in only["runs"][0]["results"]} == {rule_id}
    assert {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in only["runs"][0]["results"]
    } == {rel}


def test_exact_results_for_one_fixture(
    validator: jsonschema.Draft7Validator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    rel = "tests/fixtures/lint/gpu-request-without-limit/fail.yaml"
    log = _sarif(["--enable", "gpu-request-without-limit", rel])
    _assert_valid(validator, log)
    got = [
        (
            r["ruleId"],
            r["level"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in log["runs"][0]["results"]
    ]
    assert got == [
        ("gpu-request-without-limit", "error", rel, 14),
        ("gpu-request-without-limit", "error", rel, 28),
    ]


def test_stdin_and_clean_input_validate(validator: jsonschema.Draft7Validator) -> None:
    text = (LINT_FIXTURES / "gpu-request-without-limit" / "fail.yaml").read_text()
    log = _sarif(["-"], stdin=text)
    _assert_valid(validator, log)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]
    }
    assert uris == {"stdin"}

    clean = _sarif(["-"], stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n")
    _assert_valid(validator, clean)
    assert clean["runs"][0]["results"] == []  # present and empty for an actual scan (schema: run.results)


def test_path_with_space_is_percent_encoded(
    validator: jsonschema.Draft7Validator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``artifactLocation.uri`` is a URI-reference (schema ``format``): a space must be ``%20``."""
    folder = tmp_path / "k8s manifests"
    folder.mkdir()
    (folder / "serve.yaml").write_text(
        (LINT_FIXTURES / "gpu-request-without-limit" / "fail.yaml").read_text()
    )
    monkeypatch.chdir(tmp_path)
    log = _sarif(["--enable", "gpu-request-without-limit", "k8s manifests"])
    _assert_valid(validator, log)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]
    }
    assert uris == {"k8s%20manifests/serve.yaml"}


def test_format_checks_are_live(validator: jsonschema.Draft7Validator) -> None:
    """The custom ``uri`` checks must reject what RFC 3986 rejects, or they prove nothing."""
    base: dict[str, Any] = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "x"}},
                "results": [
                    {
                        "message": {"text": "m"},
                        "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a b.yaml"}}}],
                    }
                ],
            }
        ],
    }
    assert any(e.validator == "format" for e in validator.iter_errors(base))
    base["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = (
        "k8s/a%20b.yaml"
    )
    base["runs"][0]["tool"]["driver"]["informationUri"] = "not/absolute"
    assert [e.validator for e in validator.iter_errors(base)] == ["format"]


def test_suppressed_findings_are_suppressed_results(validator: jsonschema.Draft7Validator) -> None:
    """SARIF 2.1.0 §3.27.23 / §3.35: an annotation in the manifest is an ``inSource`` suppression,
    its reason the ``justification``; the result stays in the log, schema-valid."""
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
        '    ignore-rule.gpuplane.io/gpu-fractional-quantity: "the webhook rounds it"\n'
        '    gpuplane.io/ignore: "gpu-request-limit-mismatch"\n'
        "spec:\n  containers:\n  - name: c\n    image: busybox\n    resources:\n"
        "      requests: {nvidia.com/gpu: 1}\n      limits: {nvidia.com/gpu: 0.5, amd.com/gpu: 2}\n"
    )
    log = _sarif(["--enable", "gpu-fractional-quantity,gpu-request-limit-mismatch", "-"], stdin=text)
    _assert_valid(validator, log)
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r.get("suppressions")) for r in results] == [
        ("gpu-request-limit-mismatch", [{"kind": "inSource"}]),
        ("gpu-fractional-quantity", [{"kind": "inSource", "justification": "the webhook rounds it"}]),
    ]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results] == [13, 14]
