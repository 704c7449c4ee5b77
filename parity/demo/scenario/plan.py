"""What each backend runs: its cases in run order and the outcome each has at baseline."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from parity.demo.scenario.cases import PASSED, Case, Outcome

MAX_TESTS_PER_FILE = 250
# Upstream test files run from pytorch/xla/test as ``python3 ../../test/test_x.py`` (README).
UPSTREAM_DIR = "../../"
UPSTREAM_SHARD = "run_torch_op_tests"
SCRIPT_CASE = "main"
SCOPE_RANK = {"class": 0, "test": 1, "setup": 2}


@dataclass
class Plan:
    """A backend's cases in run order and the outcome each has when nothing happens."""

    cases: list[Case] = field(default_factory=list)
    base: dict[Case, Outcome] = field(default_factory=dict)


def plan_build(fixture: dict[str, Any], backend: str) -> Plan:
    plan = Plan()
    skips = _SkipIndex(fixture, backend)
    for file, shard in fixture["backends"][backend]["files"].items():
        file_row = skips.file_rows.get(file)
        if file_row is not None:
            # The module exits before any test runs (`if cond: sys.exit(0)`): only the
            # script's own status can be reported.
            case = _script_case(file, "script", shard)
            plan.cases.append(case)
            plan.base[case] = skip_outcome(file_row)
            continue
        for case in _file_cases(fixture, backend, file, shard):
            plan.cases.append(case)
            plan.base[case] = skips.outcome(case)
    upstream = fixture["upstream"]
    where = f"{upstream['skip_file']}:{upstream['skip_line']}"
    for test in upstream["tests"]:
        file = UPSTREAM_DIR + test["file"]
        case = Case(file, test["class"], test["test"], "upstream", UPSTREAM_SHARD)
        plan.cases.append(case)
        disabled = backend in test["disabled"]
        plan.base[case] = (
            Outcome("skipped", upstream["skip_reason"], where=where) if disabled else PASSED
        )
    return plan


def upstream_disabled(fixture: dict[str, Any]) -> dict[str, dict[str, dict[str, str]]]:
    """The upstream tests' DISABLED_TORCH_TESTS as PyTorch/XLA keeps them, by backend:
    ``{backend: {TestClassXLA: {test_name: reason}}}`` (``parity.pure.list_formats.parity_file``
    reads it)."""
    disabled: dict[str, dict[str, dict[str, str]]] = {}
    for test in fixture["upstream"]["tests"]:
        for backend, reason in test["disabled"].items():
            disabled.setdefault(backend, {}).setdefault(test["class"], {})[test["test"]] = reason
    return disabled


def _script_case(file: str, dialect: str, shard: str) -> Case:
    stem = file.rsplit("/", 1)[-1].removesuffix(".py")
    return Case(file, stem, SCRIPT_CASE, dialect, shard)


def _file_cases(fixture: dict[str, Any], backend: str, file: str, shard: str) -> list[Case]:
    info = fixture["files"][file]
    dialect = info["entry"]
    classes = {cls: list(tests) for cls, tests in info["classes"].items()}
    if backend == "gpu":
        for cls, tests in fixture["gpu_era_tests"].get(file, {}).items():
            classes.setdefault(cls, []).extend(t for t in tests if t not in classes[cls])
    only = fixture["backends"][backend]["only"].get(file)
    names = [
        (cls, test)
        for cls, tests in classes.items()
        for test in tests
        if only is None or f"{cls}.{test}" in only
    ][:MAX_TESTS_PER_FILE]
    if dialect in ("script", "missing") or not names:
        # No per-test results (or none known): one case stands for the script's exit status.
        return [_script_case(file, "missing" if dialect == "missing" else "script", shard)]
    return [Case(file, cls, test, dialect, shard) for cls, test in names]


class _SkipIndex:
    """The fixture's skip rows that apply on one backend, looked up per case.

    Precedence follows unittest: a class decorator wins over a method's, and among a method's
    stacked decorators the outermost (first line) gives the reason; a ``skipTest`` in setUp
    skips every test of its class. Rows in helpers are left out: which tests call the helper
    is unknown.
    """

    def __init__(self, fixture: dict[str, Any], backend: str) -> None:
        self.file_rows: dict[str, dict[str, Any]] = {}
        self.class_rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for row in fixture["skips"]:
            if backend not in row["backends"] or row["scope"] == "helper":
                continue
            if row["scope"] == "file":
                self.file_rows.setdefault(row["file"], row)
                continue
            cls = row["test_or_class"].partition(".")[0]
            self.class_rows.setdefault((row["file"], cls), []).append(row)
        for rows in self.class_rows.values():
            rows.sort(key=lambda row: (SCOPE_RANK[row["scope"]], row["line"]))

    def outcome(self, case: Case) -> Outcome:
        for row in self.class_rows.get((case.file, case.cls), []):
            if row["scope"] != "test" or row["test_or_class"].partition(".")[2] == case.name:
                return skip_outcome(row)
        if case.dialect == "missing":
            return Outcome(
                "error",
                f"python3: can't open file '{case.file}': [Errno 2] No such file or directory",
                "exit code 2",
            )
        return PASSED


def skip_outcome(row: dict[str, Any]) -> Outcome:
    """The skip a fixture row gives, with where its decorator sits."""
    return Outcome("skipped", row["reason"], where=f"{row['file']}:{row['line']}")
