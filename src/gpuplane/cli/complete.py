"""Shell completion after ``kubectl gpuplane``: the ``kubectl_complete-gpuplane`` protocol.

kubectl 1.26+ (kubernetes/kubernetes#105867) completes a plugin by running the executable
``kubectl_complete-<plugin>`` from PATH with the words typed after ``kubectl <plugin>``, the last
one being the word to complete (possibly empty), and reads cobra's ``__complete`` answer: one
candidate per line (``value<TAB>description``), then ``:<directive>``. Directives used here are
cobra's ``ShellCompDirectiveDefault`` (0: the shell may complete file names) and
``ShellCompDirectiveNoFileComp`` (4).

The candidates come from click's own completion (``click.shell_completion``), the same that
``_GPUPLANE_COMPLETE=bash_source gpuplane`` uses, so both paths offer the same words.
"""

from __future__ import annotations

import sys

DIRECTIVE_DEFAULT = 0
DIRECTIVE_NO_FILE_COMP = 4


def complete(words: list[str]) -> list[str]:
    """The answer lines for the words after ``kubectl gpuplane`` (last word: the one typed)."""
    from click.shell_completion import ShellComplete  # deferred for start-up time

    from gpuplane.cli.main import cli

    args, incomplete = (words[:-1], words[-1]) if words else ([], "")
    items = ShellComplete(cli, {}, "kubectl gpuplane", "_GPUPLANE_COMPLETE").get_completions(args, incomplete)
    lines: list[str] = []
    files = False
    for item in items:
        if item.type in ("file", "dir"):
            files = True
            continue
        help_text = " ".join(str(item.help or "").split())
        lines.append(f"{item.value}\t{help_text}" if help_text else str(item.value))
    lines.append(f":{DIRECTIVE_DEFAULT if files else DIRECTIVE_NO_FILE_COMP}")
    return lines


def main(words: list[str] | None = None) -> None:
    """Console script ``kubectl_complete-gpuplane`` (and ``gpuplane __complete ...``)."""
    lines = complete(sys.argv[1:] if words is None else words)
    sys.stdout.write("\n".join(lines) + "\n")
