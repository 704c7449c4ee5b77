"""A demo project at many runs a day: ``rocm-many-runs``, a ``cuda`` reference and a ``rocm``
family (``rocm-gfx90a``, ``rocm-gfx942``) running every commit of two weeks, eight runs a day,
so that what one run cannot tell, the history can (issue 46, "Evidence over runs"):

- **flaky tests at set rates** (``FLAKY``): the states from history read them flaky, and the
  compare view tells a real regression (a test failing a quarter of gfx90a's runs) from noise
  (one failing one run in thirty, or as often on CUDA as on ROCm);
- **a break at a named commit** (``BREAK_COMMIT``): from it on, one test fails on every ROCm run
  and stays failing, so it reads broken, not flaky, and keeps its gap;
- **an upgrade**: ``rocm-gfx942`` moves from ROCm 7.1 to 7.14 halfway, which fixes the SVD tests
  (Fail→Pass) and breaks one (Pass→Fail): its transition report. gfx90a stays on 7.1;
- the compare view ``gfx90a-vs-cuda`` over the two weeks, whose regressed tests are those.

Deterministic: a flaky test's failing runs are drawn by a ``random.Random`` seeded by its test
and variant (a string seed, the same on every machine and every ``PYTHONHASHSEED``). Every story
keeps its place as a share of the window, so ``load_demo --days 3`` tells it shorter. Every run
goes through the upload API, as CI sends it.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from django.core.files.uploadedfile import SimpleUploadedFile

from parity.demo.accelerators import CASES, GENERIC_FILE, ROCM_ONLY, TORCH, Case, junit
from parity.models import Backend, Project
from parity.pure.list_formats.parity_file import document_load, exemptions_parse
from parity.services.compare_rows import compare_headline_set
from parity.services.compare_views import CompareRequest, compare_view_create
from parity.services.projects import project_create
from parity.services.triage import exemptions_import

SLUG = "rocm-many-runs"
VIEW = "gfx90a-vs-cuda"
RUNS_PER_DAY = 8  # a run every three hours: every merge to main, batched
MAX_DAYS = 14  # the compare view's window and the history's
ARCHES = ("gfx90a", "gfx942")
OLD, UPGRADED = "7.1", "7.14"
UPGRADED_ARCH = "gfx942"
SEED = "rocm-many-runs"
# The commit that breaks BROKEN_TEST on ROCm, three quarters through the window (a hipBLASLt
# heuristic change, say): named, so the docs and the test page can point at it.
BREAK_COMMIT = "c0ffee4d2b1a9e8f7c6d5b4a39281706f5e4d3c2"
BREAK_AT = 0.75  # where in the window, as a share of its runs
UPGRADE_AT = 0.5


@dataclass(frozen=True)
class Flaky:
    """A test failing at ``rate`` of the runs of each backend in ``on``."""

    name: str  # the generic name (Case.name)
    rate: float
    on: tuple[str, ...]  # "cuda", "gfx90a", "gfx942"
    message: str


FLAKY = (
    # A real regression hidden as flakiness: a quarter of ROCm's runs (extreme against CUDA).
    Flaky("test_compare_cpu_topk_float32", 0.25, ("gfx90a", "gfx942"),
          "AssertionError: Tensor-likes are not close! Mismatched elements: 3 / 4096 (0.1%)"),
    # One run in ten on gfx90a only: regressed, not extreme.
    Flaky("test_stream_wait_event", 0.10, ("gfx90a",),
          "RuntimeError: HIP error: the operation timed out (hipStreamWaitEvent)"),
    # One run in thirty: flaky, but within the compare view's tolerance (no significant
    # difference): noise, not a regression.
    Flaky("test_caching_allocator_stats", 0.033, ("gfx90a", "gfx942"),
          "AssertionError: 0 != 512 : reserved bytes after empty_cache"),
    # As flaky on CUDA as on ROCm: flaky everywhere, and no difference between them.
    Flaky("test_grid_sample_float32", 0.08, ("cuda", "gfx90a", "gfx942"),
          "AssertionError: Tensor-likes are not close! Greatest absolute difference: 2.1e-05"),
)  # fmt: skip
BROKEN_TEST = "test_compare_cpu_index_add_float32"
BROKEN_MESSAGE = "RuntimeError: HIP error: an illegal memory access was encountered"
SVD = "svd"  # the SVD tests fail before ROCm 7.14 (hipSOLVER), as in rocm-parity
UPGRADE_BREAKS = "test_layer_norm_bfloat16"  # 7.14 breaks it on gfx942: the report's Pass→Fail
UPGRADE_MESSAGE = "AssertionError: Tensor-likes are not close! (MIOpen 3.5 layer norm, bf16)"
# gfx90a skips flash attention by design (rocm-parity's exemption): intended, not a gap to
# triage, and the compare view's "missing sample".
EXEMPTIONS = """
- match: test/test_transformers.py::TestSDPA::test_flash_attention_*
  backends: [rocm]
  kind: intended
  reason: flash attention kernels need MI300 (gfx942) or newer
  condition: arch == gfx90a
"""


@dataclass(frozen=True)
class Slot:
    """The ``index``-th run of the window (0 the oldest): one commit, run on every backend."""

    index: int
    total: int
    commit: str
    at: datetime.datetime


@dataclass(frozen=True)
class ManyUpload:
    slot: Slot
    backend: str  # "cuda", or the family "rocm"
    arch: str  # "" for cuda
    rocm: str
    outcomes: dict[Case, tuple[str, str]] = field(compare=False)

    @property
    def variant(self) -> str:
        return f"rocm-{self.arch}" if self.arch else self.backend

    def data(self) -> dict:
        """The upload API's form fields, as CI sends them."""
        ran = [(case, outcome, message) for case, (outcome, message) in self.outcomes.items()]
        device = "cuda"  # PyTorch's ROCm build names its device cuda, too
        attributes = {"torch": TORCH}
        if self.arch:
            attributes |= {"arch": self.arch, "rocm": self.rocm}
        else:
            attributes |= {"cuda": "12.8"}
        return {
            "project": SLUG,
            "backend": self.backend,
            "commit": self.slot.commit,
            "branch": "main",
            "run": f"{self.slot.commit[:12]}-{self.variant}",
            "complete": "true",
            "timestamp": self.slot.at.isoformat(),
            "attributes": json.dumps(attributes),
            "file": [SimpleUploadedFile("report.xml", junit(ran, device))],
        }


def cases() -> list[Case]:
    """The project's tests: rocm-parity's, but the device-generic ones (which CUDA's CI runs on
    the CPU) and the two hipGraph tests (a story rocm-parity tells)."""
    return [
        case
        for case in CASES
        if case.file != GENERIC_FILE and not case.name.startswith("test_graph_")
    ]


def slots(*, days: int, now: datetime.datetime) -> list[Slot]:
    """``days`` days of runs, ``RUNS_PER_DAY`` a day, the newest half an hour before ``now``."""
    total = max(min(days, MAX_DAYS), 1) * RUNS_PER_DAY
    last = now - datetime.timedelta(minutes=30)
    step = datetime.timedelta(hours=24 / RUNS_PER_DAY)
    made = []
    for index in range(total):
        commit = hashlib.sha1(f"{SEED}:{total}:{index}".encode()).hexdigest()
        if index == break_index(total):
            commit = BREAK_COMMIT
        made.append(Slot(index, total, commit, last - step * (total - 1 - index)))
    return made


def break_index(total: int) -> int:
    return int(total * BREAK_AT)


def upgrade_index(total: int) -> int:
    return int(total * UPGRADE_AT)


def rocm_version(arch: str, slot: Slot) -> str:
    upgraded = arch == UPGRADED_ARCH and slot.index >= upgrade_index(slot.total)
    return UPGRADED if upgraded else OLD


def flaky_fails(flaky: Flaky, who: str, slot: Slot) -> bool:
    """Whether ``flaky`` fails on ``who`` in ``slot``: at its rate of the window's runs exactly
    (so the compare view's pass rate reads it), in runs drawn by a seeded shuffle, the newest
    three runs being passed, passed, failed. The newest run catches it failing, so its gap is
    open and reads flaky; two passes before it keep three failures in a row (a break) from
    ending the window."""
    return slot.index in _failing_runs(flaky, who, slot.total)


@functools.cache
def _failing_runs(flaky: Flaky, who: str, total: int) -> frozenset[int]:
    failures = max(round(flaky.rate * total), 2)
    drawn = random.Random(f"{SEED}:{flaky.name}:{who}:{total}").sample(
        range(total - 3), failures - 1
    )
    return frozenset([*drawn, total - 1])


def outcome(case: Case, *, arch: str, rocm: str, slot: Slot) -> tuple[str, str]:
    """(outcome, message) of ``case`` on CUDA (``arch`` "") or the ROCm variant ``arch``."""
    who = arch or "cuda"
    if ROCM_ONLY in case.name:
        return ("skipped", "test requires ROCm (hipBLASLt)") if not arch else ("passed", "")
    for flaky in FLAKY:
        if case.name == flaky.name and who in flaky.on and flaky_fails(flaky, who, slot):
            return "failed", flaky.message
    if not arch:
        return "passed", ""
    if SVD in case.name and rocm == OLD:
        return "failed", "AssertionError: Tensor-likes are not close! (hipSOLVER gesvdj: NaN)"
    if case.name == BROKEN_TEST and slot.index >= break_index(slot.total):
        return "error", BROKEN_MESSAGE
    if case.name == UPGRADE_BREAKS and rocm == UPGRADED:
        return "failed", UPGRADE_MESSAGE
    if arch == "gfx90a" and "flash_attention" in case.name:
        return "skipped", "Flash attention requires gfx942 (MI300) or newer"
    return "passed", ""


def uploads(*, days: int, now: datetime.datetime) -> Iterator[ManyUpload]:
    """Every run of the window, oldest first: CUDA's and each arch's of each commit."""
    tests = cases()
    for slot in slots(days=days, now=now):
        yield ManyUpload(
            slot, "cuda", "", "", {c: outcome(c, arch="", rocm="", slot=slot) for c in tests}
        )
        for arch in ARCHES:
            rocm = rocm_version(arch, slot)
            outcomes = {c: outcome(c, arch=arch, rocm=rocm, slot=slot) for c in tests}
            yield ManyUpload(slot, "rocm", arch, rocm, outcomes)


def many_runs_project_load(
    post: Callable[[dict], None], *, days: int, now: datetime.datetime
) -> Project:
    """Create ``rocm-many-runs`` with its states from history on, and send its runs through
    ``post`` (the upload API's form fields)."""
    project = project_create(
        slug=SLUG,
        name="ROCm vs CUDA, every commit",
        backends=["cuda", "rocm"],
        reference="cuda",
        issue_url_template="https://github.com/ROCm/pytorch/issues/{number}",
        visibility="public",
    )
    # At many runs a day the history is the evidence (docs/history-states.md).
    project.history_rules = {"enabled": True}
    project.save(update_fields=["history_rules"])
    exemptions_import(project=project, entries=exemptions_parse(document_load(EXEMPTIONS)))
    for upload in uploads(days=days, now=now):
        post(upload.data())
    # Made once its runs are in: one computation of the view, not one per run of its variants.
    view = compare_view_create(
        project=project,
        request=CompareRequest(
            name=VIEW,
            sample=Backend.objects.get(project=project, name="rocm-gfx90a"),
            basis=Backend.objects.get(project=project, name="cuda"),
            days=MAX_DAYS,
        ),
    )
    # At many runs a day the project's headline reads from the view (docs/compare-views.md).
    compare_headline_set(project=project, view=view)
    return project
