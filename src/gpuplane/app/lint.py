"""``lint`` as a service: the request the CLI and MCP build, the outcome both render."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuplane.app.inputs import ClusterCache, check_rule_ids, lint_config, load_manifests, read_cluster
from gpuplane.app.outcome import Messages, Surface
from gpuplane.records import FrozenRecord, Record, set_field

if TYPE_CHECKING:
    from gpuplane.lint.engine import LintResult
    from gpuplane.sources.loader import LoadResult


class LintRequest(FrozenRecord):
    """What to lint and how. ``config_start`` is where ``.gpuplane.yaml`` is looked for when
    ``config`` is not given (None: the working directory). ``enable_all``: run the opt-in rules
    too (profile: all)."""

    __slots__ = (
        "cluster",
        "config",
        "config_start",
        "context",
        "disable",
        "enable",
        "enable_all",
        "fail_on",
        "inline",
        "kubeconfig",
        "paths",
        "progress",
        "skip_non_manifests",
    )
    paths: tuple[str, ...]
    inline: str | None
    cluster: str | None
    context: str | None
    kubeconfig: str | None
    disable: frozenset[str]
    enable: frozenset[str]
    config: str | None
    config_start: str | None
    fail_on: str | None
    skip_non_manifests: bool
    enable_all: bool
    progress: bool

    def __init__(
        self,
        paths: tuple[str, ...] = (),
        inline: str | None = None,
        cluster: str | None = None,
        context: str | None = None,
        kubeconfig: str | None = None,
        disable: frozenset[str] = frozenset(),
        enable: frozenset[str] = frozenset(),
        config: str | None = None,
        config_start: str | None = None,
        fail_on: str | None = None,
        skip_non_manifests: bool = False,
        enable_all: bool = False,
        progress: bool = False,
    ) -> None:
        set_field(self, "paths", paths)
        set_field(self, "inline", inline)
        set_field(self, "cluster", cluster)
        set_field(self, "context", context)
        set_field(self, "kubeconfig", kubeconfig)
        set_field(self, "disable", disable)
        set_field(self, "enable", enable)
        set_field(self, "config", config)
        set_field(self, "config_start", config_start)
        set_field(self, "fail_on", fail_on)
        set_field(self, "skip_non_manifests", skip_non_manifests)
        set_field(self, "enable_all", enable_all)
        set_field(self, "progress", progress)


class LintOutcome(Record):
    """The engine's result plus what the front ends decide on: the ``--fail-on`` threshold in
    force (flag, else config, else ``error``) and whether any input was unusable (exit 2)."""

    __slots__ = ("bad_input", "loaded", "result", "threshold")
    result: LintResult
    loaded: LoadResult
    threshold: str
    bad_input: bool

    def __init__(self, result: LintResult, loaded: LoadResult, threshold: str, bad_input: bool) -> None:
        self.result = result
        self.loaded = loaded
        self.threshold = threshold
        self.bad_input = bad_input


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
