"""``--fix`` writes stay inside their target (issue 11 item 6): a unique temporary file in the
same folder, the file's mode and line endings kept, symlinks refused unless asked."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.sources.writes import line_ending, rewrite_file

QUOTA = """\
apiVersion: v1
kind: ResourceQuota
metadata:
  name: gpu
  namespace: team-a
spec:
  hard:
    limits.nvidia.com/gpu: 8
"""
FIXED = QUOTA.replace("limits.nvidia.com/gpu", "requests.nvidia.com/gpu")
RULE = "quota-gpu-invalid-key"


def _fix(*args: str) -> tuple[int, str]:
    # the rename is an unsafe fix (the quota starts enforcing): --unsafe-fixes applies it
    res = CliRunner().invoke(cli, ["lint", "--fix", "--unsafe-fixes", "--enable", RULE, *args])
    return res.exit_code, res.stderr


def test_a_planted_symlink_at_the_old_temporary_name_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    target = tree / "quota.yaml"
    target.write_text(QUOTA)
    os.symlink(outside, tree / "quota.yaml.gpuplane-fix.tmp")  # the name the old --fix used
    code, err = _fix(str(target))
    assert code == 0, err
    assert target.read_text() == FIXED
    assert outside.read_text() == "precious\n"
    assert sorted(p.name for p in tree.iterdir()) == ["quota.yaml", "quota.yaml.gpuplane-fix.tmp"]


def test_mode_and_crlf_are_kept(tmp_path: Path) -> None:
    target = tmp_path / "quota.yaml"
    target.write_bytes(QUOTA.replace("\n", "\r\n").encode())
    target.chmod(0o600)
    code, err = _fix(str(target))
    assert code == 0, err
    assert target.read_bytes() == FIXED.replace("\n", "\r\n").encode()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_symlinked_file_is_refused_unless_asked(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text(QUOTA)
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    code, err = _fix(str(link))
    assert (
        f"gpuplane: --fix: {link}: is a symlink; not rewritten (--follow-symlinks rewrites its target)\n"
        in err
    )
    assert "fixed 0 finding(s) in 0 file(s)" in err
    assert code == 1  # the finding stays
    assert real.read_text() == QUOTA and link.is_symlink()
    code, err = _fix("--follow-symlinks", str(link))
    assert code == 0, err
    assert real.read_text() == FIXED and link.is_symlink()


def test_follow_symlinks_needs_fix() -> None:
    res = CliRunner().invoke(cli, ["lint", "--follow-symlinks", "x.yaml"])
    assert res.exit_code == 2
    assert res.stderr == "gpuplane: --follow-symlinks only makes sense with --fix\n"


def test_rewrite_refuses_special_files(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    try:
        rewrite_file(str(fifo), "x")
    except OSError as exc:
        assert str(exc) == f"{fifo}: not a regular file; not rewritten"
    else:
        raise AssertionError("a FIFO was rewritten")


def test_line_ending_follows_the_majority() -> None:
    assert line_ending(b"a\r\nb\r\n") == "\r\n"
    assert line_ending(b"a\nb\nc\r\n") == "\n"
    assert line_ending(b"") == "\n"
