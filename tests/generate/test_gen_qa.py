"""QA regressions of ``gpuplane generate``: an unreadable blueprint is one clean line; CRD
schemas are read lazily, only for the kinds a bundle generates."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.generate.blueprint import load_blueprint
from gpuplane.generate.engine import generate
from gpuplane.generate.validate import CrdSchemas

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples" / "blueprints"


def test_missing_blueprint_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nonexist.yaml"
    result = CliRunner().invoke(cli, ["generate", str(missing), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == f"gpuplane: {missing}: cannot read: No such file or directory\n"


def test_invalid_yaml_blueprint_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["generate", str(bad), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.stderr == f"gpuplane: {bad}:2: invalid YAML: did not find expected node content\n"


def test_crd_files_parsed_only_for_generated_kinds(shared_dir: Path) -> None:
    crds = CrdSchemas(shared_dir / "corpus" / "crds")
    assert crds.files and not crds._parsed  # listing the folder parses nothing
    result = generate(load_blueprint(EXAMPLES / "gke-inference.yaml"), shared_dir / "corpus" / "crds")
    assert result.schema_errors == [] and result.unchecked_kinds == []
    assert crds.validator("karpenter.sh/v1", "NodePool") is not None
    assert len(crds._parsed) < len(crds.files) / 2  # only the files that can define NodePool
    assert crds.validator("example.com/v1", "NoSuchKind") is None


def test_crd_validator_rejects_unknown_field(tmp_path: Path) -> None:
    (tmp_path / "widget.yaml").write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
        "  name: widgets.example.com\nspec:\n  group: example.com\n  names:\n    kind: Widget\n"
        "    plural: widgets\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n"
        "    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n"
        "          apiVersion: {type: string}\n          kind: {type: string}\n          metadata: {type: object}\n"
        "          spec:\n            type: object\n            properties:\n              size:\n"
        "                type: integer\n          status:\n            type: object\n",
        encoding="utf-8",
    )
    (tmp_path / "other.yaml").write_text("kind: ConfigMap\napiVersion: v1\n", encoding="utf-8")
    crds = CrdSchemas(tmp_path)
    validator = crds.validator("example.com/v1", "Widget")
    assert validator is not None and crds._parsed == {tmp_path / "widget.yaml"}
    good = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}}
    assert list(validator.iter_errors(good)) == []
    bad = {**good, "spec": {"size": 1, "colour": "red"}}
    assert len(list(validator.iter_errors(bad))) == 1
