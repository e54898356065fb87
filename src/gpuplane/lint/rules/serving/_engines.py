"""LLM serving engines started by a container, and the parallel sizes they are given.

Read from ``command``/``args`` as the kubelet runs them (``$(VAR)`` expanded from the container's
literal ``env`` values, kubernetes ``third_party/forked/golang/expansion``), through a shell
wrapper (``sh -c "... && vllm serve ..."``: the script is cut into simple commands and ``$VAR`` /
``${VAR}`` expanded from the same env), or from the image's entrypoint when there is no command.

Flag names, each checked in the engine's own source:

- vLLM (``vllm/engine/arg_utils.py`` ``EngineArgs.add_cli_args``): ``--tensor-parallel-size``/``-tp``,
  ``--pipeline-parallel-size``/``-pp``, ``--data-parallel-size``/``-dp``,
  ``--data-parallel-size-local``/``-dpl``, ``--prefill-context-parallel-size``/``-pcp``,
  ``--nnodes``/``-n``, ``--headless``; entry points ``vllm serve`` and
  ``python -m vllm.entrypoints.openai.api_server`` (the ``vllm/vllm-openai`` image's entrypoint).
- SGLang (``python/sglang/srt/server_args.py`` ``ServerArgs``): ``--tp-size`` (alias
  ``--tensor-parallel-size``; argparse's prefix matching accepts ``--tp``), ``--pp-size``
  (``--pipeline-parallel-size``), ``--dp-size`` (``--data-parallel-size``), ``--nnodes``,
  ``--enable-dp-attention`` (data parallelism inside the tensor-parallel group: no extra GPUs).
- TGI (huggingface/text-generation-inference ``launcher/src/main.rs`` ``Args``): ``--num-shard``
  or env ``NUM_SHARD`` (clap ``long, env``), ``--sharded false`` turns sharding off; without
  ``num_shard`` the launcher uses every visible GPU.
- TensorRT-LLM ``trtllm-serve`` (``tensorrt_llm/commands/serve.py``): ``--tp_size``, ``--pp_size``.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from gpuplane.lazy_pattern import LazyPattern
from gpuplane.lint.rules._common import as_list, as_str, dict_items
from gpuplane.records import Record
from gpuplane.sources.manifest import FieldPath

_SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh"})
_K8S_VAR = LazyPattern(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
_SHELL_VAR = LazyPattern(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
# Shell control operators that end a simple command.
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "\n", "(", ")"})
# Wrappers that run the next words as the command.
_PREFIXES = frozenset({"exec", "nohup", "env", "time", "stdbuf", "numactl", "taskset", "uv", "run"})

ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "tgi": "TGI", "trtllm": "TensorRT-LLM"}

# (flag spellings) -> size name, per engine. Values of every other flag are skipped.
_FLAGS: dict[str, dict[str, str]] = {
    "vllm": {
        "--tensor-parallel-size": "tp",
        "-tp": "tp",
        "--pipeline-parallel-size": "pp",
        "-pp": "pp",
        "--data-parallel-size": "dp",
        "-dp": "dp",
        "--data-parallel-size-local": "dpl",
        "-dpl": "dpl",
        "--prefill-context-parallel-size": "pcp",
        "-pcp": "pcp",
        "--nnodes": "nnodes",
        "-n": "nnodes",
    },
    "sglang": {
        "--tp-size": "tp",
        "--tp": "tp",
        "--tensor-parallel-size": "tp",
        "--pp-size": "pp",
        "--pipeline-parallel-size": "pp",
        "--dp-size": "dp",
        "--dp": "dp",
        "--data-parallel-size": "dp",
        "--nnodes": "nnodes",
    },
    "tgi": {"--num-shard": "shards", "--num_shard": "shards", "--sharded": "sharded"},
    "trtllm": {"--tp_size": "tp", "--pp_size": "pp"},
}
_SWITCHES = {"--headless": "headless", "--enable-dp-attention": "dp_attention"}
# Flags that read the rest of the configuration from a file gpuplane cannot see.
_CONFIG_FLAGS = frozenset({"--config", "--config-file", "--extra_llm_api_options"})
# vllm-omni: stages placed on GPUs by a stage config file (vllm-project/vllm-omni).
_VLLM_STAGED = frozenset({"--omni", "--stage-configs-path"})
# Words that say the engine spans pods (a Ray cluster it joins, another node's rank).
_MULTI_NODE = LazyPattern(
    r"\bray\s+start\b|multi-node-serving\.sh|--dist-init-addr|--node-rank|--data-parallel-address|"
    r"--data-parallel-start-rank|\bmpirun\b|\bmpiexec\b|trtllm-llmapi-launch|RAY_ADDRESS"
)


class EngineRun(Record):
    """One serving engine a container starts: which, its sizes, where its flags are written.

    ``engine``: a key of ENGINE_NAMES; ``unknown``: a size flag whose value is not a literal
    integer, or a config file; ``path``: the command/args/env item holding the first size flag
    (relative to the container)."""

    __slots__ = ("engine", "path", "sizes", "switches", "unknown")
    engine: str
    sizes: dict[str, int]
    switches: set[str]
    unknown: bool
    path: FieldPath

    def __init__(
        self,
        engine: str,
        sizes: dict[str, int] | None = None,
        switches: set[str] | None = None,
        unknown: bool = False,
        path: FieldPath = (),
    ) -> None:
        self.engine = engine
        self.sizes = {} if sizes is None else sizes
        self.switches = set() if switches is None else switches
        self.unknown = unknown
        self.path = path

    @property
    def name(self) -> str:
        return ENGINE_NAMES[self.engine]

    def size(self, key: str) -> int:
        return self.sizes.get(key, 1)

    def explicit(self) -> bool:
        """Whether a GPU-count flag is written (not only the engine's defaults)."""
        return any(key in self.sizes for key in ("tp", "pp", "dp", "dpl", "pcp", "shards"))

    def total_gpus(self) -> int | None:
        """GPUs the whole engine needs (every rank, on every pod it spans); None when it picks
        the count itself (TGI without ``num_shard``)."""
        if self.engine == "tgi":
            if self.sizes.get("sharded") == 0:
                return 1
            return self.sizes.get("shards")
        world = self.size("tp") * self.size("pp")
        if self.engine == "vllm":
            return world * self.size("pcp") * self.size("dp")
        if self.engine == "sglang":
            return world * (1 if "dp_attention" in self.switches else self.size("dp"))
        return world

    def local_gpus(self) -> int | None:
        """GPUs the engine uses in this pod when it says so itself (vLLM's ``-dpl``, or a total
        split over ``--nnodes``); None when that depends on the group."""
        total = self.total_gpus()
        if total is None:
            return None
        if self.engine == "vllm" and "dpl" in self.sizes:
            return self.sizes["dpl"] * self.size("tp") * self.size("pp") * self.size("pcp")
        nodes = self.size("nnodes")
        if nodes > 1:
            return total // nodes if total % nodes == 0 else None
        return None

    def describe(self) -> str:
        """``tensor-parallel-size 4 × pipeline-parallel-size 2`` as the user wrote it."""
        labels = {
            "tp": "tensor parallel",
            "pp": "pipeline parallel",
            "dp": "data parallel",
            "dpl": "local data parallel",
            "pcp": "prefill context parallel",
            "shards": "num-shard",
        }
        if self.engine == "tgi":
            return f"num-shard {self.sizes.get('shards', 1)}"
        keys = [k for k in ("tp", "pp", "pcp", "dp") if k in self.sizes]
        if self.engine == "sglang" and "dp_attention" in self.switches:
            keys = [k for k in keys if k != "dp"]
        if not keys:
            keys = ["tp"]
        return " × ".join(f"{labels[k]} {self.size(k)}" for k in keys)


def container_env(container: dict[str, Any]) -> dict[str, str]:
    """Literal env values of a container (``valueFrom`` entries are unknown here)."""
    env: dict[str, str] = {}
    for _, item in dict_items(container.get("env")):
        name = as_str(item.get("name"))
        if name and "value" in item and not isinstance(item.get("value"), (dict, list)):
            value = item.get("value")
            env[name] = "" if value is None else str(value)
    return env


def _expand_k8s(word: str, env: dict[str, str]) -> str:
    """``$(VAR)`` as the kubelet expands it (``$$`` is ``$``). An unknown reference stays unknown:
    it is kept as ``${VAR}``, one word whose value no size parses as a number."""

    def sub(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env.get(name, "${" + name + "}")

    return _K8S_VAR.sub(sub, word)


def _expand_shell(word: str, env: dict[str, str]) -> str:
    def sub(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return env.get(name, match.group(0))

    return _SHELL_VAR.sub(sub, word)


def _simple_commands(script: str, env: dict[str, str]) -> list[list[str]]:
    """A shell script cut into simple commands (words), variables expanded from ``env``."""
    text = script.replace("\\\n", " ")
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()")
    lexer.whitespace = " \t\r"
    lexer.wordchars += "-./=:$%{}@+,[]*?~^!#"
    lexer.commenters = ""
    commands: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token in _SEPARATORS or token in ("&&", "||", ";;") or set(token) <= set(";&|()\n"):
                commands.append([])
            else:
                for line_part in token.split("\n"):
                    if line_part:
                        commands[-1].append(_expand_shell(line_part, env))
                if "\n" in token:
                    commands.append([])
    except ValueError:  # unbalanced quotes: read it word by word
        commands = [[_expand_shell(w, env) for w in line.split()] for line in text.splitlines()]
    return [c for c in commands if c]


def _engine_of(words: list[str]) -> tuple[str, int] | None:
    """(engine, index of the first option word) when ``words`` start one of the engines."""
    i = 0
    while i < len(words) and (words[i] in _PREFIXES or ("=" in words[i] and not words[i].startswith("-"))):
        i += 1
    if i >= len(words):
        return None
    head = words[i].rsplit("/", 1)[-1]
    rest = words[i + 1 :]
    if head == "vllm" and rest[:1] == ["serve"]:
        return "vllm", i + 2
    if head == "sglang" and rest[:1] == ["serve"]:
        return "sglang", i + 2
    if head == "trtllm-serve":
        return "trtllm", i + 2 if rest[:1] == ["serve"] else i + 1
    if head == "text-generation-launcher":
        return "tgi", i + 1
    if re.fullmatch(r"python[0-9.]*", head):
        for j, word in enumerate(rest[:-1]):
            if word == "-m":
                module = rest[j + 1]
                if module.startswith("vllm.entrypoints."):
                    return "vllm", i + j + 3
                if module in ("sglang.launch_server", "sglang.launch_server_v2"):
                    return "sglang", i + j + 3
                return None
    return None


def _image_engine(image: str) -> str | None:
    """The engine an image runs as its entrypoint when the container sets no command."""
    name = image.lower().split("@", 1)[0]
    repo = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    if repo.endswith(("vllm/vllm-openai", "vllm-openai", "vllm/vllm-openai-rocm")):
        return "vllm"
    if "text-generation-inference" in repo:
        return "tgi"
    return None


def _parse_options(run: EngineRun, words: list[str], where: list[FieldPath]) -> None:
    flags = _FLAGS[run.engine]
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, inline = word.partition("=")
        if name in _CONFIG_FLAGS or (run.engine == "vllm" and name in _VLLM_STAGED):
            run.unknown = True
        if name in _SWITCHES and not eq:
            run.switches.add(_SWITCHES[name])
        key = flags.get(name) if name.startswith("-") else None
        if key is None:
            i += 1
            continue
        if eq:
            value = inline
        elif i + 1 < len(words):
            value = words[i + 1]
            i += 1
        else:
            value = ""
        i += 1
        if key == "sharded":
            run.sizes["sharded"] = 0 if value.lower() == "false" else 1
            continue
        if value.isdigit() and int(value) > 0:
            run.sizes[key] = int(value)
            if not run.path and where:
                run.path = where[min(i - 1, len(where) - 1)]
        else:
            run.unknown = True


def engine_runs(container: dict[str, Any], injected: dict[str, str] | None = None) -> list[EngineRun]:
    """Every serving engine the container starts (usually one), with its parallel sizes.

    ``injected``: env the controller adds to every container unless it sets it itself
    (LeaderWorkerSet's ``LWS_GROUP_SIZE``)."""
    env = {**(injected or {}), **container_env(container)}
    command = [_expand_k8s(as_str(w, str(w)), env) for w in as_list(container.get("command"))]
    args = [_expand_k8s(as_str(w, str(w)), env) for w in as_list(container.get("args"))]
    places: list[FieldPath] = [("command", i) for i in range(len(command))]
    places += [("args", i) for i in range(len(args))]
    words = command + args
    runs: list[EngineRun] = []
    if not command:
        engine = _image_engine(as_str(container.get("image")))
        if engine is not None and not (args and _engine_of(args)) and not _is_shell(args):
            run = EngineRun(engine)
            _parse_options(run, args, places)
            runs.append(run)
    if not runs:
        if _is_shell(words):
            script_at = 2 if len(words) > 2 and words[1].startswith("-") else 1
            script = " ; ".join(words[script_at:])
            for simple in _simple_commands(script, env):
                found = _engine_of(simple)
                if found is not None:
                    run = EngineRun(found[0])
                    at = places[min(script_at, len(places) - 1)] if places else ()
                    _parse_options(run, simple[found[1] :], [at] * len(simple))
                    runs.append(run)
        else:
            found = _engine_of(words)
            if found is not None:
                run = EngineRun(found[0])
                _parse_options(run, words[found[1] :], places[found[1] :])
                runs.append(run)
    for run in runs:
        if run.engine == "tgi" and "shards" not in run.sizes and "NUM_SHARD" in env:
            value = env["NUM_SHARD"]
            if value.isdigit() and int(value) > 0:
                run.sizes["shards"] = int(value)
                run.path = _env_path(container, "NUM_SHARD")
            else:
                run.unknown = True
        if not run.path:
            run.path = places[0] if places else ("image",)
    return runs


def _is_shell(words: list[str]) -> bool:
    return bool(words) and words[0].rsplit("/", 1)[-1] in _SHELLS and len(words) >= 2


def _env_path(container: dict[str, Any], name: str) -> FieldPath:
    for i, item in dict_items(container.get("env")):
        if item.get("name") == name:
            return ("env", i, "value")
    return ("env",)


def spans_pods(container: dict[str, Any]) -> bool:
    """The command joins or forms a multi-pod engine (a Ray cluster, another node's ranks)."""
    words = [str(w) for w in (*as_list(container.get("command")), *as_list(container.get("args")))]
    if _MULTI_NODE.search(" ".join(words)):
        return True
    return "RAY_ADDRESS" in container_env(container)
