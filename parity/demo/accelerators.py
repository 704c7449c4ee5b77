"""Two more demo projects, small and generated, for stories the PyTorch/XLA one cannot tell.

``rocm-parity`` is shaped like AMD's ROCm parity work: a ``cuda`` reference and a ``rocm`` family
whose runs carry their GPU architecture (three variants: ``gfx942``, ``gfx90a``, ``gfx1100``) and
ROCm release, upgraded from 7.1 to 7.14 one arch at a time. It shows:

- each arch compared with CUDA, rolled up as a family ("fails on 3 of 3 arches");
- an exemption conditioned on ``rocm < 7.14`` that tracks the SVD failures until each arch's
  upgrade fixes them, then reads lapsed: remove it;
- each arch's upgrade as a version transition (docs/transitions.md): the SVD tests Fail→Pass;
- exemptions for one arch (``arch == gfx90a``: no flash attention before MI300);
- a file whose test count collapses on one arch's last run: run health, "rerun test/test_nn.py";
- AMD's two score definitions side by side: the headline counts a disagreement only where CUDA
  passed (ROCm/pytorch#3371), with "any difference" beside it.

``openreg`` is an out-of-tree backend as PyTorch's accelerator testing guide describes it: its
``set_test_configs(test_exclusions=...)`` (``lists/openreg_test_configs.py``) is imported, so the
tests it excludes read *not applicable*, not missing, and a device-generic class labelled by
``hw_classification`` on the CPU's uploads is declared not applicable on it too.

Every run goes through the upload API, as CI sends it (attributes and run manifests included).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

from django.core.files.uploadedfile import SimpleUploadedFile

from parity.models import Backend, Project
from parity.pure.list_formats.parity_file import document_load, exemptions_parse
from parity.services.compare_views import CompareRequest, compare_view_create
from parity.services.list_imports import ListFile, list_file_import
from parity.services.projects import project_create, project_score_set
from parity.services.triage import exemptions_import

LISTS = Path(__file__).resolve().parent / "lists"
DTYPES = ("float32", "float16", "bfloat16")
ROCM_ARCHES = ("gfx942", "gfx90a", "gfx1100")
UPGRADED, OLD = "7.14", "7.1"
TORCH = "2.10.0"
SVD_ISSUE = "https://github.com/ROCm/pytorch/issues/3456"
SLUGS = ("rocm-parity", "openreg")


@dataclass(frozen=True)
class Case:
    file: str  # test/test_linalg.py
    cls: str  # the generic class: TestLinalg
    name: str  # the generic name: test_svd_float32 (the device goes in before the dtype)
    device_type: bool = True  # instantiated per device (TestLinalgCUDA, test_svd_cuda_float32)

    def named(self, device: str) -> tuple[str, str]:
        """(class, name) as PyTorch names this test on ``device`` ("cuda", "privateuse1")."""
        if not self.device_type:
            return self.cls, self.name
        for dtype in DTYPES:
            if self.name.endswith(f"_{dtype}"):
                return self.cls + device.upper(), f"{self.name[: -len(dtype)]}{device}_{dtype}"
        return self.cls + device.upper(), f"{self.name}_{device}"


def _cases() -> list[Case]:
    linalg = [
        Case("test/test_linalg.py", "TestLinalg", f"test_{op}_{dtype}")
        for op in ("svd", "qr", "cholesky", "eigh", "inv", "lstsq", "matmul", "det")
        for dtype in DTYPES
    ]
    nn = [
        Case("test/test_nn.py", "TestNNDeviceType", f"test_{op}_{dtype}")
        for op in ("conv2d", "conv3d", "batchnorm", "layer_norm", "embedding", "ctc_loss",
                   "upsample_bilinear", "grid_sample", "pad_reflect", "max_pool2d")
        for dtype in DTYPES
    ]  # fmt: skip
    ops = [
        Case("test/test_ops.py", "TestCommon", f"test_compare_cpu_{op}_float32")
        for op in ("add", "mul", "div", "exp", "log_softmax", "topk", "sort", "cumsum",
                   "index_add", "scatter_reduce", "nn_functional_gelu", "linalg_norm")
    ]  # fmt: skip
    sdpa = [
        Case("test/test_transformers.py", "TestSDPA", f"test_{kind}_attention_{shape}")
        for kind in ("flash", "mem_efficient", "math")
        for shape in ("causal", "padded", "large_head")
    ]
    cuda = [
        Case("test/test_cuda.py", "TestCuda", f"test_{name}", device_type=False)
        for name in ("graph_capture_simple", "graph_memory_pool", "caching_allocator_stats",
                     "stream_wait_event", "hipblaslt_gemm", "hipblaslt_epilogue")
    ]  # fmt: skip
    shapes = [
        Case("test/test_shape_ops.py", "TestShapeOps", f"test_{name}", device_type=False)
        for name in ("flip", "roll", "movedim", "unflatten")
    ]
    return linalg + nn + ops + sdpa + cuda + shapes


CASES = _cases()

# ROCm-only tests: CUDA's run skips them; ROCm passes them (a disagreement only "any difference"
# counts, as CUDA did not pass them).
ROCM_ONLY = "hipblaslt"
# A device-generic class: PyTorch labels it GENERIC, and only the CPU generates it.
GENERIC_FILE = "test/test_shape_ops.py"


# --- Outcomes ------------------------------------------------------------------------------------


def cuda_outcome(case: Case) -> tuple[str, str]:
    if ROCM_ONLY in case.name:
        return "skipped", "test requires ROCm (hipBLASLt)"
    if case.file == GENERIC_FILE:
        return "", ""  # CUDA's CI runs device-generic tests once, on the CPU
    return "passed", ""


def rocm_outcome(case: Case, *, arch: str, rocm: str) -> tuple[str, str]:
    if case.file == GENERIC_FILE:
        return "", ""
    if "svd" in case.name and rocm == OLD:
        return "failed", "AssertionError: Tensor-likes are not close! (hipSOLVER gesvdj: NaN)"
    if arch == "gfx90a" and "flash_attention" in case.name:
        return "skipped", "Flash attention requires gfx942 (MI300) or newer"
    if arch == "gfx1100" and case.name.startswith("test_conv") and "bfloat16" in case.name:
        return "skipped", "MIOpen has no bfloat16 convolution on gfx1100"
    if case.name in ("test_graph_capture_simple", "test_graph_memory_pool"):
        return "failed", "RuntimeError: hipGraph capture is not supported in this mode"
    if arch == "gfx942" and case.name in ("test_compare_cpu_topk_float32",
                                          "test_compare_cpu_sort_float32"):  # fmt: skip
        return "failed", "AssertionError: Mismatched elements: 3 / 4096 (0.1%)"
    if arch == "gfx1100" and case.name == "test_ctc_loss_float16":
        return "error", "RuntimeError: HIP error: invalid device function"
    return "passed", ""


# --- Reports -------------------------------------------------------------------------------------


def junit(cases: list[tuple[Case, str, str]], device: str) -> bytes:
    """A report as pytest's junitxml writes PyTorch's runs: one suite, a ``file`` per case."""
    root = ElementTree.Element("testsuites")
    suite = ElementTree.SubElement(root, "testsuite", name="pytest", tests=str(len(cases)))
    for case, outcome, message in cases:
        cls, name = case.named(device)
        module = case.file.removeprefix("test/").removesuffix(".py").replace("/", ".")
        element = ElementTree.SubElement(
            suite, "testcase", classname=f"{module}.{cls}", name=name, file=case.file, time="0.05"
        )
        tag = {"skipped": "skipped", "failed": "failure", "error": "error"}.get(outcome)
        if tag:
            ElementTree.SubElement(element, tag, message=message).text = message
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)


def run_manifest(cases: list[tuple[Case, str, str]], expected: dict[str, int]) -> str:
    """What the job ran: each file it was told to run, with the tests its report held."""
    held: dict[str, int] = dict.fromkeys(expected, 0)
    for case, _, _ in cases:
        held[case.file] = held.get(case.file, 0) + 1
    files = [
        {"file": file, "started": True, "exit_code": 0, "report": True, "tests": n}
        for file, n in sorted(held.items())
    ]
    return json.dumps({"files": files})


@dataclass(frozen=True)
class Upload:
    project: str
    backend: str
    day: datetime.date
    content: bytes
    attributes: dict
    manifest: str = ""
    hw_classification: str = ""


def _ran(outcomes: Iterator[tuple[Case, tuple[str, str]]]) -> list[tuple[Case, str, str]]:
    return [(case, outcome, message) for case, (outcome, message) in outcomes if outcome]


def rocm_uploads(days: list[datetime.date]) -> Iterator[Upload]:
    n = len(days)
    # The day each arch moves to ROCm 7.14 (its index): MI300 first, Navi last (on the last day).
    upgrades = {"gfx942": n // 2, "gfx90a": max(n - 3, 1), "gfx1100": n - 1}
    expected = {case.file: 0 for case in CASES if case.file != GENERIC_FILE}
    for i, day in enumerate(days):
        ran = _ran((case, cuda_outcome(case)) for case in CASES)
        cuda_attributes = {"cuda": "12.8", "torch": TORCH}
        yield Upload("rocm-parity", "cuda", day, junit(ran, "cuda"), cuda_attributes,
                     run_manifest(ran, expected))  # fmt: skip
        for arch in ROCM_ARCHES:
            rocm = UPGRADED if i >= upgrades[arch] else OLD
            ran = _ran((c, rocm_outcome(c, arch=arch, rocm=rocm)) for c in CASES)
            if arch == "gfx90a" and i == n - 1:
                # The last run's test_nn.py report was cut short: 4 of its 30 tests.
                kept = [r for r in ran if r[0].file == "test/test_nn.py"][:4]
                ran = [r for r in ran if r[0].file != "test/test_nn.py"] + kept
            attributes = {"arch": arch, "rocm": rocm, "torch": TORCH}
            yield Upload("rocm-parity", "rocm", day, junit(ran, "cuda"), attributes,
                         run_manifest(ran, expected))  # fmt: skip


def openreg_uploads(days: list[datetime.date]) -> Iterator[Upload]:
    excluded = _openreg_excluded()
    generic = {f"{GENERIC_FILE}::TestShapeOps": "GENERIC"}
    suite = [c for c in CASES if c.file != "test/test_cuda.py"]
    for day in days:
        cpu = [(c, "passed", "") for c in suite]
        yield Upload("openreg", "cpu", day, junit(cpu, "cpu"), {},
                     hw_classification=json.dumps(generic))  # fmt: skip
        ran = [
            (c, "failed", "NotImplementedError: aten::linalg_eigh is not implemented for openreg")
            if c.name.startswith("test_eigh") else (c, "passed", "")
            for c in suite
            if c.file != GENERIC_FILE and not excluded(c)
        ]  # fmt: skip
        yield Upload("openreg", "openreg", day, junit(ran, "privateuse1"), {})


def _openreg_excluded() -> Callable[[Case], bool]:
    """What the backend's ``set_test_configs`` excludes (``lists/openreg_test_configs.py``):
    those tests produce no variant, so its runs never report them."""

    def excluded(case: Case) -> bool:
        return (
            case.cls == "TestSDPA"
            or case.name.startswith("test_svd")
            or (case.cls == "TestNNDeviceType" and case.name.endswith("_bfloat16"))
        )

    return excluded


# --- Loading -------------------------------------------------------------------------------------

ROCM_EXEMPTIONS = f"""
- match: test/test_linalg.py::TestLinalg::test_svd_*
  backends: [rocm]
  kind: tracked
  reason: hipSOLVER gesvdj returns NaN before ROCm 7.14
  issue: {SVD_ISSUE}
  condition: rocm < 7.14
- match: test/test_transformers.py::TestSDPA::test_flash_attention_*
  backends: [rocm]
  kind: intended
  reason: flash attention kernels need MI300 (gfx942) or newer
  condition: arch == gfx90a
- match: test/test_nn.py::TestNNDeviceType::test_conv*_bfloat16
  backends: [rocm]
  kind: intended
  reason: MIOpen has no bfloat16 convolution on Navi 31
  condition: arch == gfx1100
"""


def accelerator_projects_load(
    post: Callable[[Upload], None], *, days: int, end: datetime.date
) -> list[Project]:
    """Create the two projects and send their runs through ``post`` (the upload API)."""
    span = [end - datetime.timedelta(days=n) for n in range(max(days, 4) - 1, -1, -1)]
    rocm = project_create(
        slug="rocm-parity",
        name="ROCm vs CUDA (AMD's shape)",
        backends=["cuda", "rocm"],
        reference="cuda",
        issue_url_template="https://github.com/ROCm/pytorch/issues/{number}",
        visibility="public",
    )
    project_score_set(project=rocm, definition="agree_reference_passed")
    entries = exemptions_parse(document_load(ROCM_EXEMPTIONS))
    exemptions_import(project=rocm, entries=entries)
    for upload in rocm_uploads(span[-10:]):
        post(upload)
    # The issue's example: gfx90a judged against CUDA over the demo's days (docs/compare-views.md).
    compare_view_create(
        project=rocm,
        request=CompareRequest(
            name="gfx90a-vs-cuda",
            sample=Backend.objects.get(project=rocm, name="rocm-gfx90a"),
            basis=Backend.objects.get(project=rocm, name="cuda"),
        ),
    )
    openreg = project_create(
        slug="openreg",
        name="OpenReg (an out-of-tree backend)",
        backends=["cpu", "openreg"],
        reference="cpu",
        issue_url_template="https://github.com/pytorch/pytorch/issues/{number}",
        visibility="public",
    )
    configs = LISTS / "openreg_test_configs.py"
    list_file_import(
        project=openreg,
        file=ListFile(
            format="set-test-configs",
            text=configs.read_text(),
            name="torch_openreg/testing.py",  # where the backend's repository keeps it
            backends=("openreg",),
        ),
    )
    for upload in openreg_uploads(span[-5:]):
        post(upload)
    return [rocm, openreg]


def upload_data(upload: Upload, *, ran_at: datetime.datetime) -> dict:
    """The upload API's form fields for ``upload``, as CI sends them."""
    key = f"{upload.day.isoformat()}-{upload.backend}-{upload.attributes.get('arch', '')}"
    data = {
        "project": upload.project,
        "backend": upload.backend,
        "commit": (upload.day.strftime("%Y%m%d") * 5)[:40],
        "branch": "main",
        "run": key,
        "complete": "true",
        "timestamp": ran_at.isoformat(),
        "file": [SimpleUploadedFile("report.xml", upload.content)],
    }
    if upload.attributes:
        data["attributes"] = json.dumps(upload.attributes)
    if upload.manifest:
        data["run_manifest"] = upload.manifest
    if upload.hw_classification:
        data["hw_classification"] = upload.hw_classification
    return data
