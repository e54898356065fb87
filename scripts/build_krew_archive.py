#!/usr/bin/env python3
"""Build this platform's krew release archive and render deploy/krew/gpuplane.krew.yaml for it.

    python scripts/build_krew_archive.py            # dist/gpuplane-v<version>-<os>-<arch>.tar.gz
    python scripts/build_krew_archive.py --render-only   # re-render for the archives in dist/

krew installs one executable per platform, so the archive holds a single-file build of gpuplane
made with PyInstaller (installed from PyPI into the build environment: `pip install pyinstaller`),
``kubectl-gpuplane``, plus the ``kubectl_complete-gpuplane`` wrapper kubectl 1.26+ runs for
completion. PyInstaller builds for the machine it runs on: build each platform on its own runner and
put the archives in dist/ before rendering. The rendered dist/gpuplane.krew.yaml keeps the platforms
whose archive is present, with each archive's real sha256 (docs/kubectl.md).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import platform
import re
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "deploy" / "krew" / "gpuplane.krew.yaml"
RELEASES = "https://github.com/gpuplane/gpuplane/releases/download"
COMPLETE_WRAPPER = '#!/bin/sh\n# kubectl 1.26+ runs this to complete `kubectl gpuplane <TAB>`\nexec kubectl-gpuplane __complete "$@"\n'
_ADD_URI = re.compile(r'\{\{\s*addURIAndSha\s+"([^"]+)"\s+\.TagName\s*\}\}')
_TAG = re.compile(r"\{\{\s*\.TagName\s*\}\}")
_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def version() -> str:
    return "v" + tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def this_platform() -> tuple[str, str]:
    return platform.system().lower(), _ARCH.get(platform.machine().lower(), platform.machine().lower())


def archive_name(tag: str, os_name: str, arch: str) -> str:
    return f"gpuplane-{tag}-{os_name}-{arch}.tar.gz"


def build_binary(work: Path) -> Path:
    """``kubectl-gpuplane``: gpuplane and its data files in one executable (PyInstaller --onefile)."""
    work.mkdir(parents=True, exist_ok=True)
    entry = work / "kubectl_gpuplane_entry.py"
    entry.write_text("from gpuplane.cli.entry import main\n\nmain()\n")
    cmd = [
        sys.executable, "-m", "PyInstaller", "--onefile", "--noconfirm", "--name", "kubectl-gpuplane",
        "--distpath", str(work / "dist"), "--workpath", str(work / "build"), "--specpath", str(work),
        # lazily imported modules and the data files (catalog YAML, rule pages, knowledge base, schemas)
        "--collect-submodules", "gpuplane", "--collect-data", "gpuplane",
        "--collect-data", "kubernetes_validate", str(entry),
    ]  # fmt: skip
    subprocess.run(cmd, check=True)
    return work / "dist" / "kubectl-gpuplane"


def make_archive(binary: Path, out_dir: Path, tag: str, os_name: str, arch: str) -> Path:
    """The release asset krew downloads: the executable and the completion wrapper, both 0755."""
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / archive_name(tag, os_name, arch)
    with tarfile.open(target, "w:gz") as tar:
        info = tar.gettarinfo(str(binary), arcname="kubectl-gpuplane")
        info.mode = 0o755
        with binary.open("rb") as handle:
            tar.addfile(info, handle)
        data = COMPLETE_WRAPPER.encode()
        wrapper = tarfile.TarInfo("kubectl_complete-gpuplane")
        wrapper.size, wrapper.mode = len(data), 0o755
        tar.addfile(wrapper, io.BytesIO(data))
    return target


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def render_manifest(template: str, tag: str, archives: dict[str, Path]) -> str:
    """The template with the tag filled in and, per platform, ``uri`` + ``sha256`` of its archive
    (``archives``: file name -> path); platforms without an archive are left out."""
    head, sep, body = template.partition("  platforms:\n")
    blocks = re.split(r"(?m)^(?=  - selector:)", body)
    kept = []
    for block in blocks:
        if not block.strip():
            continue
        match = _ADD_URI.search(block)
        if match is None:
            raise ValueError("platform without addURIAndSha")
        uri = _TAG.sub(tag, match.group(1))
        path = archives.get(uri.rsplit("/", 1)[1])
        if path is None:
            continue
        kept.append(block[: match.start()] + f"uri: {uri}\n    sha256: {sha256(path)}" + block[match.end() :])
    if not kept:
        raise ValueError("no archive for any platform of the manifest")
    text = _TAG.sub(tag, head) + sep + "".join(kept)
    return "\n".join(line for line in text.splitlines() if not line.startswith("#")).lstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--render-only", action="store_true", help="only render the manifest for dist/")
    args = parser.parse_args(argv)
    tag = version()
    if not args.render_only:
        os_name, arch = this_platform()
        binary = build_binary(args.dist / "pyinstaller")
        print(f"built {make_archive(binary, args.dist, tag, os_name, arch)}")
    archives = {p.name: p for p in args.dist.glob(f"gpuplane-{tag}-*.tar.gz")}
    manifest = args.dist / "gpuplane.krew.yaml"
    manifest.write_text(render_manifest(TEMPLATE.read_text(), tag, archives))
    print(f"wrote {manifest} for {', '.join(sorted(archives))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
