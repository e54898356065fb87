"""One bounded input path (issue 11 item 1, issue 12 item 4): every file gpuplane reads goes
through ``sources.loader.read_bytes``; side inputs through ``sources.side_input.read_document``.

Each case is the exact one-line error and the exit code 2 of the command that reads it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.sources.loader import load_paths, load_text
from gpuplane.sources.side_input import SideInputError, parse_document, read_document

POD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n"
CHAR_DEVICE = "not a regular file (a character device); gpuplane reads regular files, or stdin given as -"
FIFO = "not a regular file (a FIFO); gpuplane reads regular files, or stdin given as -"
SYSTEM = "a system folder, not a folder of manifests: not walked (name the files or a project folder)"


def lint(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["lint", *args])
    return result.exit_code, result.stdout, result.stderr


# -- special files and sizes --------------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this system")
def test_a_device_is_refused_before_it_is_read() -> None:
    code, _, err = lint("/dev/zero")
    assert (code, err) == (2, f"/dev/zero: {CHAR_DEVICE}\n")


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)  # opening it for reading would block until a writer comes
    code, _, err = lint(str(fifo))
    assert (code, err) == (2, f"{fifo}: {FIFO}\n")


def test_the_size_cap_is_checked_before_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big.yaml"
    with open(big, "wb") as handle:
        handle.truncate(3 * 1024 * 1024)  # sparse: 3 MiB of size, nothing written
    monkeypatch.setenv("GPUPLANE_MAX_FILE_MB", "2")
    result = load_paths([str(big)])
    assert [str(e) for e in result.errors] == [
        f"{big}: file is 3.0 MiB, over the 2 MiB limit for YAML input (set GPUPLANE_MAX_FILE_MB to raise it)"
    ]


# -- folder walks -------------------------------------------------------------------------------


@pytest.mark.parametrize("root", ["/", "/proc", "/sys/kernel", "/dev"])
def test_system_roots_are_not_walked(root: str) -> None:
    if not os.path.isdir(root):
        pytest.skip(f"{root} is not a folder here")
    code, _, err = lint(root)
    assert (code, err) == (2, f"{root}: {SYSTEM}\n")


def test_a_system_root_is_walked_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``allow_system_walk`` is the explicit opt-in (tested on a folder made to look like one)."""
    (tmp_path / "a.yaml").write_text(POD.format("a"), encoding="utf-8")
    monkeypatch.setattr("gpuplane.sources.loader.system_root", lambda path: True)
    assert [str(e) for e in load_paths([str(tmp_path)]).errors] == [f"{tmp_path}: {SYSTEM}"]
    assert [o.name for o in load_paths([str(tmp_path)], allow_system_walk=True).objects] == ["a"]


def test_a_walk_skips_special_files_and_symlinks_out_of_the_tree(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.yaml").write_text(POD.format("a"), encoding="utf-8")
    os.mkfifo(tree / "pipe.yaml")
    outside = tmp_path / "secret.yaml"
    outside.write_text(POD.format("outside"), encoding="utf-8")
    (tree / "out.yaml").symlink_to(outside)
    (tree / "in.yaml").symlink_to(tree / "a.yaml")  # inside the tree: read
    (tree / "linked").symlink_to(tmp_path, target_is_directory=True)  # folders are not followed
    result = load_paths([str(tree)])
    assert [o.name for o in result.objects] == ["a", "a"]
    assert result.errors == []
    assert result.skipped == [
        f"{tree}/out.yaml (a symlink out of the walked folder)",
        f"{tree}/pipe.yaml (a FIFO, not a regular file)",
    ]


def test_a_walk_skips_the_config_file_and_other_non_manifest_yaml(tmp_path: Path) -> None:
    """``gpuplane lint .`` in a repository with the .gpuplane.yaml the docs tell users to create."""
    (tmp_path / ".gpuplane.yaml").write_text("disable: [gpu-request-without-limit]\n", encoding="utf-8")
    (tmp_path / "ci.yaml").write_text("name: ci\non: push\n", encoding="utf-8")
    (tmp_path / "cm.yaml").write_text(POD.format("cm"), encoding="utf-8")
    code, out, err = lint(str(tmp_path))
    assert code == 0, err
    assert err == (
        f"gpuplane: skipped {tmp_path}/.gpuplane.yaml (gpuplane config, not a manifest)\n"
        f"gpuplane: skipped {tmp_path}/ci.yaml (no Kubernetes object: no kind)\n"
    )
    assert out == "No findings in 1 object.\n"


def test_a_named_file_without_objects_stays_an_error(tmp_path: Path) -> None:
    path = tmp_path / "ci.yaml"
    path.write_text("name: ci\n", encoding="utf-8")
    assert lint(str(path))[::2] == (2, f"{path}:1: object has no kind\n")


# -- parsing: CRLF, Helm, duplicates, long numbers ------------------------------------------------


def test_crlf_multi_document_files_load() -> None:
    text = (POD.format("a") + "---\n" + POD.format("b")).replace("\n", "\r\n")
    result = load_text(text, "crlf.yaml")
    assert result.errors == []
    assert [(o.name, o.line) for o in result.objects] == [("a", 1), ("b", 6)]
    assert result.objects[1].field_line(("metadata", "name")) == 9


def test_an_unrendered_helm_template_gets_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "deployment.yaml"
    path.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n"
        '  labels:\n    {{- include "chart.labels" . | nindent 4 }}\n',
        encoding="utf-8",
    )
    assert lint(str(path))[::2] == (
        2,
        f"{path}:6: invalid YAML: did not find expected node content; this looks like an unrendered "
        "Helm template: lint what `helm template CHART` prints\n",
    )


def test_json_duplicate_keys_are_refused_like_yaml_ones() -> None:
    """``"kind":"Pod","kind":"Secret"`` read last-wins would lint a Secret; the API server's
    strict decoding refuses the object, as it refuses YAML duplicates."""
    text = '{\n  "apiVersion": "v1",\n  "kind": "Pod",\n  "kind": "Secret",\n  "metadata": {"name": "a"}\n}\n'
    result = load_text(text, "dup.json")
    assert result.objects == []
    assert [str(e) for e in result.errors] == [
        'dup.json:4: duplicate key "kind" (first at line 3): kubectl and the API server reject the object'
    ]
    yaml_result = load_text("apiVersion: v1\nmetadata: {name: a}\nkind: Pod\nkind: Secret\n", "dup.yaml")
    assert [str(e) for e in yaml_result.errors] == [
        'dup.yaml:4: duplicate key "kind" (first at line 3): kubectl and the API server reject the object'
    ]


def test_keys_equal_only_in_python_are_no_duplicate() -> None:
    """``1 == True`` in Python, but YAML's 1 and true are different keys; kubectl's YAML to
    JSON conversion (sigs.k8s.io/yaml) writes them as "1" and "true"."""
    result = load_text(POD.format("a") + "data: {1: 2, true: x}\n", "cm.yaml")
    assert result.errors == []
    assert result.objects[0].data["data"] == {"1": 2, "true": "x"}
    real = load_text(POD.format("a") + "data: {1: 2, 1: x}\n", "cm.yaml")
    assert [str(e) for e in real.errors] == [
        "cm.yaml:5: duplicate key 1 (first at line 5): kubectl and the API server reject the object"
    ]


def test_a_number_too_long_is_one_clear_error() -> None:
    result = load_text(POD.format("a") + "data:\n  n: " + "9" * 5000 + "\n", "n.yaml")
    assert [str(e) for e in result.errors] == [
        "n.yaml:6: invalid YAML: number too long (5000 digits; gpuplane reads integers of up to 4300 digits)"
    ]


# -- side inputs --------------------------------------------------------------------------------


def test_side_inputs_read_one_bounded_document(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("a: 1\nb: [x]\n", encoding="utf-8")
    assert read_document(str(path)) == {"a": 1, "b": ["x"]}
    assert parse_document("", "empty.yaml") is None
    assert parse_document('{"a": 1}', "s.json") == {"a": 1}


@pytest.mark.parametrize(
    ("text", "name", "message"),
    [
        (
            "a: 1\na: 2\n",
            "s.yaml",
            's.yaml:2: duplicate key "a" (first at line 1): kubectl and the API server reject the object',
        ),
        (
            '{"a": 1, "a": 2}',
            "s.json",
            's.json:1: duplicate key "a" (first at line 1): kubectl and the API server reject the object',
        ),
        ("a: 1\n---\nb: 2\n", "s.yaml", "s.yaml:2: expected one YAML document, found 2"),
        (
            "n: " + "1" * 4400 + "\n",
            "s.yaml",
            "s.yaml:1: invalid YAML: number too long (4400 digits; gpuplane reads integers of up to 4300 digits)",
        ),
        ("a: &x [*x]\n", "s.yaml", "s.yaml:1: invalid YAML: recursive alias: the document contains itself"),
    ],
)
def test_side_input_errors_are_one_line(text: str, name: str, message: str) -> None:
    with pytest.raises(SideInputError) as caught:
        parse_document(text, name)
    assert str(caught.value) == message


def test_a_scenario_from_a_device_exits_2() -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero on this system")
    result = CliRunner().invoke(cli, ["advise", "sharing", "--gpu", "L4", "--from", "/dev/zero"])
    assert (result.exit_code, result.stderr) == (2, f"gpuplane: /dev/zero: {CHAR_DEVICE}\n")


def test_a_config_file_with_a_duplicate_key_exits_2(tmp_path: Path) -> None:
    config = tmp_path / ".gpuplane.yaml"
    config.write_text("disable: [a]\ndisable: [b]\n", encoding="utf-8")
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(POD.format("cm"), encoding="utf-8")
    code, _, err = lint("--config", str(config), str(manifest))
    assert code == 2
    assert err == (
        f'gpuplane: {config}:2: duplicate key "disable" (first at line 1): kubectl and the API server '
        "reject the object\n"
    )
