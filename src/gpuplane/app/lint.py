"""``lint`` as a service: the request the CLI and MCP build, the outcome both render."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplane.app.inputs import ClusterCache, check_rule_ids, lint_config, load_manifests, read_cluster
from gpuplane.app.outcome import Messages, Surface

if TYPE_CHECKING:
    from gpuplane.lint.engine import LintResult
    from gpuplane.sources.loader import LoadResult


@dataclass(frozen=True, slots=True)
class LintRequest:
    """What to lint and how. ``config_start`` is where ``.gpuplane.yaml`` is looked for when
    ``config`` is not given (None: the working directory)."""

    paths: tuple[str, ...] = ()
    inline: str | None = None
    cluster: str | None = None
    context: str | None = None
    kubeconfig: str | None = None
    disable: frozenset[str] = frozenset()
    enable: frozenset[str] = frozenset()
    config: str | None = None
    config_start: str | None = None
    fail_on: str | None = None
    skip_non_manifests: bool = False
    enable_all: bool = False  # run the opt-in rules too (profile: all)
    progress: bool = False


@dataclass(slots=True)
class LintOutcome:
    """The engine's result plus what the front ends decide on: the ``--fail-on`` threshold in
    force (flag, else config, else ``error``) and whether any input was unusable (exit 2)."""

    result: LintResult
    loaded: LoadResult
    threshold: str
    bad_input: bool


def run(
    request: LintRequest,
    messages: Messages,
    surface: Surface,
    *,
    cache: ClusterCache | None = None,
) -> LintOutcome:
    """Validate the rule ids, read the config, the manifests and the cluster, run the rules.

    Raises :class:`~gpuplane.app.outcome.AppError` for unusable arguments or input; every
    other problem is a message (load errors, cluster errors, a rule that failed on this input).
    """
    from gpuplane.lint.engine import run_lint  # for start-up time

    check_rule_ids(surface, disable=request.disable, enable=request.enable)
    cfg = lint_config(
        request.config, request.config_start, request.disable, request.enable, enable_all=request.enable_all
    )
    threshold = request.fail_on or cfg.fail_on or "error"
    loaded = load_manifests(
        request.paths,
        messages,
        surface,
        inline=request.inline,
        skip_non_manifests=request.skip_non_manifests,
    )
    bad_input = bool(loaded.errors)
    state = None
    if request.cluster:
        state, cluster_errors = read_cluster(request, messages, surface, cache=cache)
        bad_input = bad_input or cluster_errors
    result = run_lint(loaded.objects, cluster=state, config=cfg)
    if any(obj.annotations for obj in loaded.objects):
        from gpuplane.lint.engine import unknown_suppression_notes  # for start-up time
        from gpuplane.rule_catalog import all_rules  # for start-up time

        for note in unknown_suppression_notes(loaded.objects, (meta.id for meta in all_rules())):
            messages.warning(note)
    for failure in result.failures:
        messages.error(
            f"rule {failure.rule} failed on this input ({failure.message}); other rules ran normally"
        )
    return LintOutcome(result, loaded, threshold, bad_input)
