"""Derive the compact demo fixture (``parity/demo/fixture.json``) from the real PyTorch/XLA data.

Run from the repository root::

    .venv/bin/python -m parity.demo.build_fixture [--shared DIR] [--out FILE]

``DIR`` is the team's shared folder (default ``../shared``); the data is read from
``DIR/data/pytorch-xla`` (see its README). The fixture lets ``make demo`` run on a machine
without that folder, so it keeps only what the demo scenario needs, re-shaped:

- ``backends``: per demo backend, the ACTIVE test files of its runner scripts with the shard
  function (or, on TPU, the script) that runs each. CPU, TPU (all five scripts that
  ``_tpu_ci.yml`` runs) and Neuron are read at HEAD; GPU at the last GPU-era commit, as the
  data README says. Their test/ files are checked against the data's own snapshot lists.
- ``files``: per test file, its entry point and every class and test name of
  ``tests_inventory.tsv`` (no cap: 1.6k names fit easily; the scenario caps per run).
- ``gpu_era_tests``: names that only the GPU-era skip rows know (files deleted since).
- ``skips``: the rows of ``skips.tsv`` that skip something in the demo, each with the
  backends it applies to, found by evaluating its condition against each backend's runner
  environment (see ``_Condition``); ``unresolved`` names backends where it depends on a test
  parameter.
- ``upstream``: device-parameterized upstream tests (``TestViewOpsXLA.test_x_xla_float32``)
  sampled from ``disabled_tests_sample.tsv``, with the backends that disable each.
- ``expected_overlap``: |A|, |B| and |A∩B| of test files for every backend pair.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

REPO_DIR = Path(__file__).resolve().parents[2]
DEFAULT_SHARED = REPO_DIR.parent / "shared"
DEFAULT_OUT = Path(__file__).resolve().parent / "fixture.json"
SCHEMA = 1

# Demo backend -> (key in backends.json, snapshot, list of active files, device type).
BACKENDS: dict[str, tuple[str, str, str, str]] = {
    "cpu": ("CPU", "head", "test_files_active", "CPU"),
    "gpu": ("GPU", "gpu_era", "test_files_active_on_cuda", "CUDA"),
    "tpu": ("TPU", "head", "test_files_active", "TPU"),
    "neuron": ("NEURON", "head", "test_files_active", "NEURON"),
}
# The snapshot list that equals each backend's test/ files, to cross-check the selection.
SNAPSHOT_LIST = {"cpu": "CPU", "gpu": "GPU", "tpu": "TPU_all_scripts", "neuron": "NEURON"}
# backends.json overlap figures that use the same definition as the demo's pair, if any
# (CPU vs GPU mixes two snapshots, so the data has no figure for it).
REFERENCE_PAIRS = {
    ("cpu", "tpu"): ("head", "CPU|TPU_all_scripts"),
    ("cpu", "neuron"): ("head", "CPU|NEURON"),
    ("neuron", "tpu"): ("head", "TPU_all_scripts|NEURON"),
}
UPSTREAM_PREFIX = "pytorch/pytorch:"
# A TPU file run by several scripts is filed under the first of these (the main script first).
TPU_SCRIPT_ORDER = (
    "test/tpu/run_tests.sh",
    "test/tpu/run_pallas_test.sh",
    "test/tpu/run_training_tests.sh",
    "test/tpu/run_expensive_test_1.sh",
    "test/tpu/run_expensive_test_2.sh",
)
# Hardware of the runners the README names, where a skip condition asks about it:
# TPU CI is a v4-8 (``runs-on: v4-runner-set``): 4 chips, one device each, one host.
TPU_VERSION = 4
TPU_DEVICES = 4
# Device count when the runner line does not set one: CPU exports CPU_NUM_DEVICES=4; GPU
# (GPU_NUM_DEVICES) defaults to 1 in torch_xla; ``run_test_multi_device`` on Neuron sets
# nothing, and a trn1.2xlarge has 2 NeuronCores (an assumption: Neuron's CI is not public).
DEFAULT_DEVICE_COUNT = {"CPU": 4, "CUDA": 1, "TPU": TPU_DEVICES, "NEURON": 2}
DEVICE_COUNT_VARS = {
    "CPU": ("CPU_NUM_DEVICES",),
    "CUDA": ("GPU_NUM_DEVICES",),
    "TPU": (),
    "NEURON": ("NEURONCORE_NUM_DEVICES", "NEURON_NUM_DEVICES"),
}
ENTRY_KINDS = (
    ("unittest.main", "unittest"),
    ("unittest.TextTestRunner", "unittest"),
    ("absltest.main", "absl"),
    ("common_utils.run_tests", "run_tests"),
    ("python -m unittest", "unittest_module"),
    ("script", "script"),
    ("missing-at-commit", "missing"),
)
UPSTREAM_EXACT_SHAPES = ("template_xla", "template_xla_dtype")
DISABLED_KEYS = {"CPU": ("cpu", "neuron"), "TPU": ("tpu",), "CUDA": ("gpu",)}
UPSTREAM_SKIP_TARGET = "XLATestBase.instantiate_test.disallowed_test"
DUMP_WIDTH = 200


@dataclass(frozen=True)
class RawData:
    backends: dict[str, Any]
    inventory: list[dict[str, str]]
    skips: list[dict[str, str]]
    disabled: list[dict[str, str]]


@dataclass(frozen=True)
class RunEnv:
    """What a skip condition can observe about one file's run on one backend."""

    device: str  # xr.device_type(): CPU, CUDA, TPU or NEURON
    env: dict[str, str]
    device_count: int


def _read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def raw_data_load(*, data_dir: Path) -> RawData:
    return RawData(
        backends=json.loads((data_dir / "backends.json").read_text(encoding="utf-8")),
        inventory=_read_tsv(data_dir / "tests_inventory.tsv"),
        skips=_read_tsv(data_dir / "skips.tsv"),
        disabled=_read_tsv(data_dir / "disabled_tests_sample.tsv"),
    )


# --- Which files each backend runs ------------------------------------------------------------


def _entry_kind(entry_point: str) -> str:
    for prefix, kind in ENTRY_KINDS:
        if entry_point.startswith(prefix):
            return kind
    raise ValueError(f"unknown entry point {entry_point!r}")


def _first_invocations(raw: RawData, backend: str) -> dict[str, dict[str, Any]]:
    """The first active invocation of every active file: the one the demo runs.

    A file invoked twice (test_operations.py runs four times on CPU with different env) is
    run once in the demo; its first line decides the shard and the environment.
    """
    key, _, list_key, _ = BACKENDS[backend]
    spec = raw.backends["backends"][key]
    active = set(spec[list_key])
    invocations = [inv for inv in spec["invocations"] if inv["status"] == "active"]
    if backend == "tpu":
        invocations.sort(key=lambda inv: TPU_SCRIPT_ORDER.index(inv["script"]))
    first: dict[str, dict[str, Any]] = {}
    for inv in invocations:
        if inv["file"] in active:
            first.setdefault(inv["file"], inv)
    missing = active - first.keys()
    if missing:
        raise ValueError(f"{backend}: active files without an active invocation: {missing}")
    return first


def _run_env(backend: str, invocation: dict[str, Any]) -> RunEnv:
    device = BACKENDS[backend][3]
    # "<unset: auto-detect>" marks a variable the line leaves unset (test_gpu_device_detection).
    env = {k: v for k, v in invocation["env"].items() if not v.startswith("<unset")}
    if backend == "tpu":
        env.setdefault("PJRT_DEVICE", "TPU")  # set by the workflow, not by the runner line
    count = DEFAULT_DEVICE_COUNT[device]
    for var in DEVICE_COUNT_VARS[device]:
        if var in env:
            count = int(env[var])
            break
    return RunEnv(device=device, env=env, device_count=count)


def _shard(backend: str, invocation: dict[str, Any]) -> str:
    return invocation["script"] if backend == "tpu" else invocation["shard_function"]


def backend_files(raw: RawData) -> dict[str, dict[str, str]]:
    """Per backend: active file -> the shard function (CPU, GPU, Neuron) or script (TPU)."""
    return {
        backend: {
            f: _shard(backend, inv) for f, inv in sorted(_first_invocations(raw, backend).items())
        }
        for backend in BACKENDS
    }


def unittest_targets(raw: RawData, backend: str) -> dict[str, list[str]]:
    """Files run as `python -m unittest mod.Class.test`: only the named tests run."""
    only: dict[str, set[str]] = {}
    for inv in raw.backends["backends"][BACKENDS[backend][0]]["invocations"]:
        if inv["status"] == "active" and inv.get("unittest_target"):
            only.setdefault(inv["file"], set()).add(inv["unittest_target"].split(".", 1)[1])
    return {f: sorted(targets) for f, targets in sorted(only.items())}


def overlap_files(files: Iterable[str]) -> set[str]:
    """The README's overlap definition: test/**.py only (no examples/, no upstream files)."""
    return {f for f in files if f.startswith("test/")}


def expected_overlap(files_by_backend: dict[str, Iterable[str]]) -> dict[str, Any]:
    """|A|, |B|, |A∩B| and the shares for every pair of demo backends, naming the
    backends.json figure that uses the same definition where the data has one."""
    sets = {b: overlap_files(files) for b, files in files_by_backend.items()}
    pairs: dict[str, Any] = {}
    for a, b in combinations(sorted(sets), 2):
        both = len(sets[a] & sets[b])
        pair = {
            "size_a": len(sets[a]),
            "size_b": len(sets[b]),
            "intersection": both,
            "jaccard": round(both / len(sets[a] | sets[b]), 3),
            "a_also_run_on_b": round(both / len(sets[a]), 3),
            "b_also_run_on_a": round(both / len(sets[b]), 3),
        }
        if (a, b) in REFERENCE_PAIRS:
            snapshot, name = REFERENCE_PAIRS[(a, b)]
            pair["reference"] = f"backends.json overlap.{snapshot}.pairs[{name}]"
        pairs[f"{a}|{b}"] = pair
    return {
        "definition": "unique test/**.py files with an active invocation on the backend "
        "(examples/ and upstream pytorch/pytorch files excluded); a_also_run_on_b = |A∩B|/|A|",
        "sizes": {b: len(s) for b, s in sorted(sets.items())},
        "pairs": pairs,
    }


# --- Tests of each file ------------------------------------------------------------------------


def file_tests(raw: RawData, files: set[str]) -> dict[str, dict[str, Any]]:
    """Entry point and {class: [tests]} of every file some backend runs, in inventory order."""
    entries: dict[str, str] = {}
    for key, *_ in BACKENDS.values():
        entries.update(raw.backends["backends"][key]["entry_points"])
    result: dict[str, dict[str, Any]] = {
        f: {"entry": _entry_kind(entries[f]), "classes": {}}
        for f in sorted(files)
        if not f.startswith(UPSTREAM_PREFIX)
    }
    for row in raw.inventory:
        if row["file"] in result:
            tests = result[row["file"]]["classes"].setdefault(row["class"], [])
            # A method defined twice in a class (test_operations.py has one) runs once.
            if row["test"] not in tests:
                tests.append(row["test"])
    return result


def gpu_era_tests(raw: RawData, gpu_files: set[str]) -> dict[str, dict[str, list[str]]]:
    """Test names only the GPU-era skip rows know: their files changed or went since."""
    known = {(r["file"], r["class"], r["test"]) for r in raw.inventory}
    extra: dict[str, dict[str, list[str]]] = {}
    for row in raw.skips:
        cls, _, test = row["test_or_class"].partition(".")
        if row["snapshot"] == "head" or row["file"] not in gpu_files:
            continue
        if test.startswith("test") and (row["file"], cls, test) not in known:
            tests = extra.setdefault(row["file"], {}).setdefault(cls, [])
            if test not in tests:
                tests.append(test)
    return dict(sorted(extra.items()))


# --- Which backends a skip row applies to ------------------------------------------------------


class _Unknown(Exception):
    """The condition depends on something a runner's environment does not fix (a test
    parameter such as ``dtype`` or ``head_dim``): the row applies to some cases only."""


class _Condition:
    """Evaluate a skip condition from skips.tsv against one run's environment.

    The conditions are Python expressions copied from decorators. They are parsed with
    ``ast`` and interpreted over a small table of the calls they use (``xr.device_type()``,
    ``tpu.version()``...), never ``eval``-ed. Anything else raises ``_Unknown``; ``and`` /
    ``or`` short-circuit first, so ``xr.device_type() != 'TPU' or tpu.version() < 3`` is
    decided on CPU without asking for a TPU version.
    """

    def __init__(self, run: RunEnv) -> None:
        self.run = run
        self.calls: dict[str, Callable[..., Any]] = {
            "xr.device_type": lambda: run.device,
            "xr.global_runtime_device_count": lambda: run.device_count,
            "xm.xla_device_hw": lambda _device: run.device,
            "torch_xla.device": lambda: "xla:0",
            "xm.get_xla_supported_devices": self._supported_devices,
            "_is_on_tpu": lambda: run.device == "TPU",
            "test_utils.is_on_tpu": lambda: run.device == "TPU",
            "_is_on_neuron": lambda: run.device == "NEURON",
            "os.environ.get": lambda name, default=None: run.env.get(name, default),
            "os.getenv": lambda name, default=None: run.env.get(name, default),
            "xu.getenv_as": lambda name, _type, default=None: run.env.get(name, default),
            "torch.cuda.is_available": lambda: run.device == "CUDA",
            "torch_xla.experimental.is_eager_mode": lambda: False,
            "has_tf_package": lambda: False,
            "jtu.is_device_tpu": self._is_device_tpu,
            "jtu.is_device_tpu_at_least": lambda version: self._tpu() and version <= TPU_VERSION,
            "tpu.version": lambda: self._require_tpu(TPU_VERSION),
            "tpu.num_available_chips": lambda: self._require_tpu(TPU_DEVICES),
            "tpu.num_available_devices": lambda: self._require_tpu(TPU_DEVICES),
            "tpu.num_logical_cores_per_chip": lambda: self._require_tpu(1),  # v4 megacore
            "tpu.num_tpu_workers": lambda: self._require_tpu(1),
        }
        self.names: dict[str, Any] = {
            "real_device_type": run.device,
            "device_count": run.device_count,
            "XLA_DISABLE_FUNCTIONALIZATION": run.env.get("XLA_DISABLE_FUNCTIONALIZATION") == "1",
            "XLA_EXPERIMENTAL": run.env.get("XLA_EXPERIMENTAL", ""),
            "xenv.PJRT_DEVICE": "PJRT_DEVICE",
            "os.environ": run.env,
            "self.device_type": "xla",  # upstream device-type tests under XLATestBase
        }

    def _tpu(self) -> bool:
        return self.run.device == "TPU"

    def _require_tpu(self, value: int) -> int:
        if not self._tpu():
            raise _Unknown("a TPU query off TPU")
        return value

    def _supported_devices(self, kind: str) -> list[str]:
        wanted = {"GPU": "CUDA"}.get(kind, kind)
        return ["xla:0"] if wanted == self.run.device else []

    def _is_device_tpu(self, version: int | None = None, variant: str | None = None) -> bool:
        # A v4 has no variant letter (v5e/v5p have one).
        return self._tpu() and version in (None, TPU_VERSION) and not variant

    def value(self, text: str) -> Any:
        return self._eval(ast.parse(text, mode="eval").body)

    def _eval(self, node: ast.expr) -> Any:
        if isinstance(node, ast.BoolOp):
            return self._bool_op(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self._eval(node.operand)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return [self._eval(elt) for elt in node.elts]
        if isinstance(node, ast.Call):
            return self._call(node)
        name = _dotted(node)
        if name in self.names:
            return self.names[name]
        raise _Unknown(ast.unparse(node))

    def _bool_op(self, node: ast.BoolOp) -> Any:
        # Three-valued: an unknown operand only matters if no later operand decides.
        unknown = False
        stop = isinstance(node.op, ast.Or)
        value: Any = not stop
        for operand in node.values:
            try:
                value = self._eval(operand)
            except _Unknown:
                unknown = True
                continue
            if bool(value) == stop:
                return value
        if unknown:
            raise _Unknown(ast.unparse(node))
        return value

    def _compare(self, node: ast.Compare) -> bool:
        left = self._eval(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self._eval(right_node)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def _call(self, node: ast.Call) -> Any:
        function = self.calls.get(_dotted(node.func))
        if function is None:
            raise _Unknown(ast.unparse(node))
        args = [self._eval(arg) for arg in node.args]
        kwargs = {kw.arg: self._eval(kw.value) for kw in node.keywords if kw.arg}
        return function(*args, **kwargs)


_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
}


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ast.unparse(node)


def skip_applies(row: dict[str, str], run: RunEnv) -> bool | None:
    """True if the row skips on this run, False if not, None if it depends on parameters."""
    kind, condition = row["kind"], row["backend_condition"]
    if kind == "expected_failure":
        return False  # not a skip: the test runs and its failure is expected
    if kind == "skip_always":
        return True
    try:
        value = bool(_Condition(run).value(condition))
    except _Unknown:
        return None
    return not value if kind == "run_only_if" else value


def _target_scope(test_or_class: str) -> str:
    """file (module-level exit), class, setup (skipTest in setUp: the whole class),
    test, or helper (skipTest in a helper: which tests call it is unknown)."""
    if test_or_class == "<module>":
        return "file"
    cls, _, member = test_or_class.partition(".")
    if not member:
        return "class"
    if member in ("setUp", "setUpClass"):
        return "setup"
    return "test" if member.startswith("test") else "helper"


def skip_rows(raw: RawData, runs: dict[str, dict[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The skip rows that skip something in the demo, each with the backends it skips on.

    HEAD rows apply to every backend (GPU included: most already existed in the GPU era);
    rows that exist only at the GPU-era commit apply to GPU alone.
    """
    envs = {
        backend: {f: _run_env(backend, inv) for f, inv in _first_invocations(raw, backend).items()}
        for backend in BACKENDS
    }
    rows = []
    for row in raw.skips:
        if not any(row["file"] in runs[b] for b in BACKENDS):
            continue
        applies, unresolved = [], []
        for backend in BACKENDS:
            run = envs[backend].get(row["file"])
            if run is None or (row["snapshot"] != "head" and backend != "gpu"):
                continue
            verdict = skip_applies(row, run)
            if verdict is None:
                unresolved.append(backend)
            elif verdict:
                applies.append(backend)
        # A row that skips on no backend (a TPU-only test's "TPU only" guard, say) has nothing
        # to show in the demo.
        if applies or unresolved:
            rows.append(_skip_row(row, applies, unresolved))
    return rows


def _skip_row(row: dict[str, str], applies: list[str], unresolved: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "file": row["file"],
        "test_or_class": row["test_or_class"],
        "scope": _target_scope(row["test_or_class"]),
        "kind": row["kind"],
        "tags": row["backend_tags"],
        "reason": row["reason"],
        "line": int(row["line"]),
        "backends": applies,
    }
    if row["issue_ref"]:
        result["issue_ref"] = row["issue_ref"]
    if unresolved:
        result["unresolved"] = unresolved  # depends on a test parameter there
    if row["snapshot"] != "head":
        result["snapshot"] = row["snapshot"]
    return result


# --- Device-parameterized upstream tests --------------------------------------------------------


def upstream_tests(raw: RawData) -> dict[str, Any]:
    """The exact-name entries of the DISABLED_TORCH_TESTS dicts, for the upstream classes the
    GPU-era runner ran, with the demo backends each entry disables.

    Only exact names (``test_sort_xla``, ``test_diff_xla_float32``) are used: a bare template
    (``test_clamp``) matches names whose dtype suffixes the data does not list. Neuron has no
    key in the real dict; the demo gives it the CPU key (DISABLED_TORCH_TESTS_ANY).
    """
    class_files = _upstream_class_files(raw)
    tests: dict[tuple[str, str], dict[str, Any]] = {}
    for row in raw.disabled:
        cls, name = row["test_class"], row["test_name_pattern"]
        if cls not in class_files or row["name_shape"] not in UPSTREAM_EXACT_SHAPES:
            continue
        entry = tests.setdefault(
            (cls, name), {"file": class_files[cls], "class": cls, "test": name, "disabled": {}}
        )
        for backend in DISABLED_KEYS[row["backend"]]:
            entry["disabled"][backend] = row["reason"]
    row = next(r for r in raw.skips if r["test_or_class"] == UPSTREAM_SKIP_TARGET)
    return {
        # What XLATestBase raises for a disabled name, and where (for pytest-style locations).
        "skip_reason": row["reason"],
        "skip_file": row["file"],
        "skip_line": int(row["line"]),
        "files": sorted(set(class_files.values())),
        "tests": [tests[key] for key in sorted(tests)],
    }


def _upstream_class_files(raw: RawData) -> dict[str, str]:
    """Class -> upstream file, from the GPU-era runner lines ``python3 test_x.py -v ClassXLA``.

    Only active lines count: TestNNDeviceTypeXLA's line is commented out, so it never ran.
    """
    result = {}
    for inv in raw.backends["backends"]["GPU"]["invocations"]:
        if inv["file"].startswith(UPSTREAM_PREFIX) and inv["status"] == "active":
            cls = next(arg for arg in inv["args"] if not arg.startswith("-"))
            result[cls] = inv["file"].removeprefix(UPSTREAM_PREFIX)
    return result


# --- Assembly ------------------------------------------------------------------------------------


def fixture_build(*, data_dir: Path) -> dict[str, Any]:
    raw = raw_data_load(data_dir=data_dir)
    runs = backend_files(raw)
    _check_against_snapshots(raw, runs)
    all_files = {f for files in runs.values() for f in files}
    meta = raw.backends["source"]
    return {
        "schema": SCHEMA,
        "project": "pytorch-xla",
        "source": {
            "repo": meta["repo"],
            "head": meta["mirror_head"],
            "head_date": meta["mirror_head_date"],
            "gpu_era": raw.backends["overlap"]["gpu_era"]["commit"],
            "gpu_era_date": raw.backends["overlap"]["gpu_era"]["date"],
            "built_by": "python -m parity.demo.build_fixture",
        },
        "backends": {
            backend: {
                "snapshot": BACKENDS[backend][1],
                "device_type": BACKENDS[backend][3],
                "files": {f: s for f, s in files.items() if not f.startswith(UPSTREAM_PREFIX)},
                "only": unittest_targets(raw, backend),
            }
            for backend, files in runs.items()
        },
        "files": file_tests(raw, all_files),
        "gpu_era_tests": gpu_era_tests(raw, set(runs["gpu"])),
        "skips": skip_rows(raw, runs),
        "upstream": upstream_tests(raw),
        "expected_overlap": expected_overlap(runs),
    }


def _check_against_snapshots(raw: RawData, runs: dict[str, dict[str, str]]) -> None:
    """The selection must equal the data's own per-snapshot file lists, or the shares drift."""
    for backend, name in SNAPSHOT_LIST.items():
        snapshot = raw.backends["snapshots"][BACKENDS[backend][1]][name]
        if overlap_files(runs[backend]) != set(snapshot):
            raise ValueError(f"{backend}: active test/ files differ from snapshots[{name}]")


def fixture_dumps(fixture: dict[str, Any]) -> str:
    """JSON with sorted keys; a value whose compact form fits on a line stays on one line,
    which keeps the file small (well under 300 KB) and its diffs readable."""
    return _dumps(fixture, 0) + "\n"


def _dumps(value: Any, depth: int) -> str:
    flat = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    if len(flat) + depth <= DUMP_WIDTH or not isinstance(value, dict | list) or not value:
        return flat
    pad = "\n" + " " * (depth + 1)
    if isinstance(value, dict):
        items = [
            f"{json.dumps(k, ensure_ascii=False)}:{_dumps(v, depth + 1)}"
            for k, v in sorted(value.items())
        ]
        opener, closer = "{", "}"
    else:
        items = [_dumps(v, depth + 1) for v in value]
        opener, closer = "[", "]"
    return opener + pad + ("," + pad).join(items) + "\n" + " " * depth + closer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="shared folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="fixture to write")
    args = parser.parse_args(argv)
    data_dir = args.shared / "data" / "pytorch-xla"
    if not (data_dir / "backends.json").is_file():
        print(f"no PyTorch/XLA data at {data_dir}", file=sys.stderr)
        return 2
    text = fixture_dumps(fixture_build(data_dir=data_dir))
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text.encode()) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
