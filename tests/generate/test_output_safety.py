"""``generate -o`` writes stay inside their target (issue 11 item 6): a non-empty folder it did not
create is refused without --force, nothing is written through a symlink, and only the files an
earlier run wrote (its ``.gpuplane-generated`` manifest) are ever removed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.generate.blueprint import load_blueprint
from gpuplane.generate.engine import generate
from gpuplane.generate.output import MANIFEST_NAME, OutputRefused, write_bundle

ROOT = Path(__file__).resolve().parents[2]
BLUEPRINT = str(ROOT / "examples" / "blueprints" / "eks-training.yaml")


@pytest.fixture(scope="module")
def bundle():  # type: ignore[no-untyped-def]
    return generate(load_blueprint(BLUEPRINT)).bundle


def _cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["generate", BLUEPRINT, *args])
    return res.exit_code, res.stderr


def test_manifest_lists_every_written_file(bundle, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    paths = write_bundle(bundle, tmp_path / "out")
    lines = (tmp_path / "out" / MANIFEST_NAME).read_text(encoding="utf-8").splitlines()
    assert lines[1:] == [*paths, MANIFEST_NAME]
    on_disk = sorted(
        str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file()
    )
    assert on_disk == sorted([*paths, MANIFEST_NAME])


def test_non_empty_folder_not_ours_is_refused_without_force(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "README.md").write_text("my notes\n")
    code, err = _cli("-o", str(out))
    assert code == 2
    assert err == (
        f"gpuplane: -o {out}: not empty and not written by gpuplane generate (no .gpuplane-generated); "
        "choose an empty or new folder, or pass --force to write into it\n"
    )
    assert (out / "README.md").read_text() == "my notes\n"
    code, err = _cli("-o", str(out), "--force")
    assert code == 0, err
    assert (out / MANIFEST_NAME).is_file()


def test_rerun_removes_only_its_own_files(bundle, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    write_bundle(bundle, out)
    mine = out / "10-operators" / "my-notes.txt"
    mine.write_text("keep me\n")
    paths = write_bundle(bundle, out)
    assert mine.read_text() == "keep me\n"  # a user's file in a stage folder survives
    assert "10-operators/my-notes.txt" not in paths


def test_symlinked_output_and_stage_folders_are_refused(bundle, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "out-link"
    link.symlink_to(elsewhere)
    with pytest.raises(
        OutputRefused, match=r"out-link: is a symlink; generate does not write through symlinks$"
    ):
        write_bundle(bundle, link)
    out = tmp_path / "out"
    write_bundle(bundle, out)
    stage = out / "00-namespaces"
    for child in stage.iterdir():
        child.unlink()
    stage.rmdir()
    stage.symlink_to(elsewhere)  # a stage folder planted as a symlink out of DIR
    with pytest.raises(OutputRefused, match=r"00-namespaces.*symlink"):
        write_bundle(bundle, out)
    assert list(elsewhere.iterdir()) == []


def test_readme_symlink_is_not_followed(bundle, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    write_bundle(bundle, out)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (out / "README.md").unlink()
    (out / "README.md").symlink_to(victim)
    with pytest.raises(OutputRefused, match=r"README.md: a symlink on the way; not written$"):
        write_bundle(bundle, out)
    assert victim.read_text() == "precious\n"


def test_unwritable_or_file_output_is_one_line(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    code, err = _cli("-o", str(target / "sub"))
    assert (
        code == 2
        and err.count("\n") == 1
        and err.startswith(f"gpuplane: -o {target / 'sub'}: cannot create: ")
    )
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        code, err = _cli("-o", str(locked / "out"))
        assert code == 2 and "cannot create: Permission denied" in err
