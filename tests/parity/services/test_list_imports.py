"""Importing the lists teams keep, on a project with stored tests: what each entry covers,
counted here independently of parity's patterns; importing again changes nothing; an edited
list updates and reports; a dry run writes nothing; and each list comes back out as it went
in, through the database."""

import fnmatch
import json
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from parity.models import Gap, TestCase, Triage
from parity.pure.list_formats import list_source
from parity.selectors.list_exports import ExportQuery, exemptions_export
from parity.services.list_imports import ListFile, list_file_import
from parity.services.projects import project_create, upload_token_create
from tests.parity.conftest import run_xml
from tests.uploads import post_upload

LISTS = Path(__file__).resolve().parents[2] / "fixtures" / "lists"

# What the reference ran: the tests the sample lists name, a few they do not, and the
# runner's device-suffixed names, which parity's identity rules join across backends.
CUDA_TESTS = [
    "test/test_binary_ufuncs.py::TestBinaryUfuncsCUDA::test_add_cuda_float32",
    "test/test_binary_ufuncs.py::TestBinaryUfuncsCUDA::test_add_cuda_float64",
    "test/test_tensor_creation_ops.py::TestTensorCreation::test_cat_empty",
    "test/test_sort_and_select.py::TestSortAndSelectCUDA::test_sort_large_cuda",
    "test/test_view_ops.py::TestViewOps::test_view",
    "test/test_cuda.py::TestCUDAGraphs::test_graph_capture",
    "test/test_cuda.py::TestCUDAGraphs::test_graph_replay",
    "test/test_indexing.py::TestTensorIndexingCUDA::test_index_put_cuda_float32",
    "test/test_indexing.py::TestTensorIndexingCUDA::test_index_put_accumulate_cuda",
    "test/test_indexing.py::TestTensorIndexingCUDA::test_gather_cuda_int64",
    "test/test_indexing.py::TestTensorIndexingCUDA::test_take_cuda",
    "test/test_dtype.py::TestDtypeAwareCUDA::test_dtype_filter_cuda_float32",
    "test/test_dtype.py::TestDtypeAwareCUDA::test_dtype_filter_cuda_complex64",
    "test/test_dtype.py::TestDtypeAwareCUDA::test_dtype_filter_cuda_int64",
    "test/test_ops.py::TestCommonCUDA::test_out_abs_cuda_float32",
    "test/test_ops.py::TestCommonCUDA::test_out_warning_addmm_cuda",
    "test/test_ops.py::TestCommonCUDA::test_out_cuda_float32",
    "test/test_ops.py::TestCommonCUDA::test_noncontiguous_samples_cuda[linalg_svd]",
    "test/test_ops.py::TestCommonCUDA::test_multiple_devices_cuda",
    "test/test_nn.py::TestNN::test_conv_large",
    "test/test_nn.py::TestNN::test_linear",
    "test/test_sparse.py::TestSparse::test_add",
]
XPU_TESTS = [
    "test/xpu/test_ops_xpu.py::TestCommonXPU::test_compare_cpu_nn_functional_conv3d_xpu_float32",
    "test/xpu/test_ops_xpu.py::TestCommonXPU::test_out_warning_addmm_xpu",
    "test/xpu/test_sparse_xpu.py::TestSparseXPU::test_add_xpu",
    "test/xpu/test_sparse_xpu.py::TestSparseXPU::test_mul_xpu",
]
EXCLUDED = ("TestCUDAGraphs", "TestTensorIndexingCUDA", "TestDtypeAwareCUDA")


@pytest.fixture
def accel(db, django_capture_on_commit_callbacks, eager_errors_propagate):
    """cuda the reference; rocm with an alias; openreg, an out-of-tree backend whose
    excluded tests never reach its report; xpu, which runs Intel's copies of the files."""
    project = project_create(
        slug="accel", backends=["cuda", "rocm", "xpu", "openreg"], reference="cuda"
    )
    project.backends.filter(name="rocm").update(aliases=["amd"])
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}")
    openreg = [t for t in CUDA_TESTS if t.split("::")[1] not in EXCLUDED]
    for backend, tests in (("cuda", CUDA_TESTS), ("openreg", openreg), ("xpu", XPU_TESTS)):
        with django_capture_on_commit_callbacks(execute=True):
            response = post_upload(
                api,
                ("results.xml", run_xml(dict.fromkeys(tests, "passed"))),
                project="accel",
                backend=backend,
                commit="a" * 40,
                branch="main",
                run=f"run-{backend}",
                complete="true",
                timestamp="2026-12-01T12:00:00Z",
            )
        assert response.status_code in (200, 202), response.content
    return project


def keys_covered(project, pattern: str) -> int:
    """The stored tests ``pattern`` names, by fnmatch over whole keys: a file's pattern is its
    tests' prefix, and "**::" any file."""
    keys = TestCase.objects.filter(project=project).values_list("key", flat=True)
    if "::" not in pattern:
        return sum(1 for key in keys if key.startswith(f"{pattern}::"))
    glob = pattern.replace("[", "[[]").replace("**::", "*::", 1)
    return sum(1 for key in keys if fnmatch.fnmatchcase(key, glob))


def imported(project, format: str, name: str, **fields):
    options = {k: fields.pop(k) for k in ("dry_run", "prune") if k in fields}
    file = ListFile(format=format, text=(LISTS / name).read_text(), name=name, **fields)
    return list_file_import(project=project, file=file, **options)


SAMPLES = [
    ("disabled-json", "disabled-tests-condensed.json", {}),
    ("set-test-configs", "set_test_configs.py.txt", {"backends": ("openreg",)}),
    ("skip-dict", "skip_list_arc.py.txt", {"prefix": "test/xpu/", "backends": ("xpu",)}),
    ("amd-csv", "parity-sheet.csv", {"backends": ("rocm",)}),
    ("deselect", "deselect.txt", {"backends": ("rocm",)}),
    ("na-list", "not_applicable.txt", {"backends": ("openreg",)}),
]


@pytest.mark.parametrize(("format", "name", "fields"), SAMPLES)
def test_each_entry_reports_the_stored_tests_it_covers(accel, format, name, fields):
    report = imported(accel, format, name, **fields)

    for line in report.lines:
        if line.action == "created":
            assert line.tests == keys_covered(accel, line.match), line
    assert report.count("created") == Triage.objects.filter(project=accel).count() > 0
    assert {line.match for line in report.matched} == {
        t.match for t in Triage.objects.filter(project=accel) if keys_covered(accel, t.match)
    }


def test_the_disabled_list_says_which_entries_it_could_not_place(accel):
    report = imported(accel, "disabled-json", "disabled-tests-condensed.json")

    assert [(line.match, line.action, line.tests, line.why) for line in report.lines] == [
        ("**::TestBinaryUfuncs::test_add_float32", "created", 1, ""),
        ("**::TestTensorCreation::test_cat_empty", "created", 1, ""),
        ("**::TestSortAndSelect::test_sort_large", "created", 1,
         "not a backend of the project, left out: linux"),
        ("**::TestViewOps::test_view", "not imported", 0, "names no backend of the project: win"),
    ]  # fmt: skip
    backends = {
        t.match: sorted(b.name for b in t.backends.all())
        for t in Triage.objects.filter(project=accel)
    }
    assert backends["**::TestTensorCreation::test_cat_empty"] == []  # every platform
    assert backends["**::TestSortAndSelect::test_sort_large"] == ["rocm"]


def test_set_test_configs_exclusions_read_not_applicable_on_the_backend(accel):
    report = imported(accel, "set-test-configs", "set_test_configs.py.txt", backends=("openreg",))

    triages = Triage.objects.filter(project=accel).prefetch_related("backends")
    assert {(t.kind, t.source, tuple(b.name for b in t.backends.all())) for t in triages} == {
        ("not_applicable", "set_test_configs:set_test_configs.py.txt", ("openreg",))
    }
    # The method's pattern reaches test_index_put_accumulate too: the report shows it.
    assert {line.match: line.tests for line in report.lines} == {
        "**::TestCUDAGraphs::*": 2,
        "**::TestTensorIndexing::test_index_put*": 2,
        "**::TestTensorIndexing::test_gather*": 1,
        "**::TestDtypeAware::test_dtype_filter*float32*": 1,
        "**::TestDtypeAware::test_dtype_filter*complex64*": 1,
    }
    # The tests openreg never ran read not applicable, not missing: all but the two the
    # configuration does not exclude.
    gaps = Gap.objects.filter(project=accel, backend__name="openreg", is_open=True)
    assert gaps.count() == 9
    assert {g.test.key.split("::")[1] for g in gaps.filter(not_applicable=True)} == {
        "TestCUDAGraphs",
        "TestTensorIndexing",
        "TestDtypeAware",
    }
    assert set(gaps.filter(not_applicable=False).values_list("test__key", flat=True)) == {
        "test/test_dtype.py::TestDtypeAware::test_dtype_filter_int64",
        "test/test_indexing.py::TestTensorIndexing::test_take",
    }
    assert not gaps.filter(not_applicable=True, triage=None).exists()


def snapshot(project) -> list[tuple]:
    return sorted(
        (t.pk, t.match, t.kind, t.note, t.condition, t.source, t.extra, t.issue_id)
        for t in Triage.objects.filter(project=project)
    )


@pytest.mark.parametrize(("format", "name", "fields"), SAMPLES)
def test_importing_a_list_again_changes_nothing(accel, format, name, fields):
    imported(accel, format, name, **fields)
    before = snapshot(accel)

    again = imported(accel, format, name, **fields)

    assert snapshot(accel) == before
    assert again.count("created") == again.count("updated") == 0
    assert again.count("unchanged") == len(before)
    assert again.removed == []


def test_an_edited_sheet_updates_what_changed_and_reports_what_it_lost(accel):
    imported(accel, "amd-csv", "parity-sheet.csv", backends=("rocm",))
    lines = (LISTS / "parity-sheet.csv").read_text().splitlines(keepends=True)
    edited = [lines[0], lines[1].replace("alice", "dave"), lines[2]]  # the third row is gone
    file = ListFile(
        format="amd-csv", text="".join(edited), name="next-week.csv", backends=("rocm",)
    )

    dry = list_file_import(project=accel, file=file, dry_run=True)
    assert Triage.objects.filter(project=accel, extra__row__8="dave").count() == 0
    report = list_file_import(project=accel, file=file)

    assert [line.action for line in dry.lines] == [line.action for line in report.lines]
    assert [line.action for line in report.lines] == ["updated", "unchanged"]
    assert [r.match for r in report.removed] == ["test/test_nn.py::TestNN::test_conv_large"]
    assert Triage.objects.filter(project=accel).count() == 3  # reported, not deleted
    assert Triage.objects.get(project=accel, extra__row__8="dave").note == "needs hipBLASLt"

    pruned = list_file_import(project=accel, file=file, prune=True)
    assert pruned.pruned and Triage.objects.filter(project=accel).count() == 2


def test_a_dry_run_writes_nothing_and_reports_the_same(accel):
    dry = imported(accel, "na-list", "not_applicable.txt", backends=("openreg",), dry_run=True)

    assert not Triage.objects.exists()
    real = imported(accel, "na-list", "not_applicable.txt", backends=("openreg",))
    assert dry.lines == real.lines
    assert [(line.match, line.why) for line in real.unmatched] == [
        ("test/test_mps.py", "matches no stored test")
    ]


@pytest.mark.parametrize(("format", "name", "fields"), SAMPLES)
def test_a_list_comes_back_out_as_it_went_in(accel, format, name, fields):
    report = imported(accel, format, name, **fields)
    sample = (LISTS / name).read_text()

    export = exemptions_export(
        project=accel, query=ExportQuery(format=format, source=report.source)
    )

    assert export.skipped == []
    if format == "disabled-json":  # less the entry naming no backend of the project
        kept = {line.where.strip("'") for line in report.lines if line.action == "created"}
        whole = json.loads(sample)
        assert export.text == json.dumps({k: whole[k] for k in kept}, sort_keys=True, indent=2)
    else:
        assert export.text == sample
    assert report.source == list_source(format, name)


def test_a_sheets_per_arch_skips_apply_on_those_arches_only(
    accel, django_capture_on_commit_callbacks
):
    """AMD's sheet says where each test is skipped; imported onto the rocm family, a row
    skipped on mi300 only covers mi300's gap, not navi31's."""
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=accel)}")
    sheet = [
        "test/test_ops.py::TestCommonCUDA::test_out_abs_cuda_float32",
        "test/test_ops.py::TestCommonCUDA::test_out_warning_addmm_cuda",
        "test/test_nn.py::TestNN::test_conv_large",
    ]
    skipped = dict.fromkeys(sheet, ("skipped", "see the sheet"))
    for arch in ("mi300", "navi31"):
        with django_capture_on_commit_callbacks(execute=True):
            response = post_upload(
                api,
                ("results.xml", run_xml(skipped)),
                project="accel",
                backend="rocm",
                commit="a" * 40,
                branch="main",
                run=f"run-rocm-{arch}",
                complete="true",
                timestamp="2026-12-01T12:00:00Z",
                attributes=json.dumps({"arch": arch}),
            )
        assert response.status_code in (200, 202), response.content

    imported(accel, "amd-csv", "parity-sheet.csv", backends=("rocm",))

    covered = {
        (g.backend.name, g.test.key.rpartition("::")[2]): g.triage.condition if g.triage else None
        for g in Gap.objects.filter(
            project=accel, backend__family__name="rocm", is_open=True, state="skipped"
        ).select_related("backend", "test", "triage")  # the sheet's; rocm lacks the others
    }
    assert covered == {
        ("rocm-mi300", "test_out_abs_float32"): "",
        ("rocm-mi300", "test_out_warning_addmm"): "arch == mi300",
        ("rocm-mi300", "test_conv_large"): "arch in (mi300, mi350)",
        ("rocm-navi31", "test_out_abs_float32"): "",
        ("rocm-navi31", "test_out_warning_addmm"): None,
        ("rocm-navi31", "test_conv_large"): None,
    }


def test_sheet_rows_that_exempt_nothing_are_counted_and_come_back_on_export(accel):
    """A row with no reason or issue yet, and one that passes on every arch, import as
    nothing, are counted as not imported, and an export gives them back as they were."""
    sheet = (LISTS / "parity-sheet.csv").read_text().splitlines(keepends=True)
    sheet.insert(
        2, "test/test_nn.py,TestNN,test_linear,SKIPPED,SKIPPED,PASSED,,,erin,looking,2026-48\n"
    )
    sheet.append(
        "test/test_sparse.py,TestSparse,test_add,PASSED,PASSED,PASSED,was slow,,,,2026-48\n"
    )
    file = ListFile(format="amd-csv", text="".join(sheet), name="s.csv", backends=("rocm",))

    report = list_file_import(project=accel, file=file)

    assert [line.match for line in report.lines] == [
        "test/test_ops.py::TestCommon::test_out_abs_float32",
        "test/test_ops.py::TestCommon::test_out_warning_addmm",
        "test/test_nn.py::TestNN::test_conv_large",
    ]
    assert [(u.where, u.why) for u in report.unread] == [
        ("line 3", "no skip_reason or issue: it declares nothing"),
        ("line 6", "passes on every arch (mi300, mi350, navi31): nothing to exempt"),
    ]
    assert report.count("not imported") == report.as_dict()["not_imported"] == 2
    assert not Triage.objects.filter(match__in=["**::TestSparse::test_add"]).exists()
    assert Triage.objects.filter(project=accel).count() == 3
    export = exemptions_export(
        project=accel, query=ExportQuery(format="amd-csv", source=report.source)
    )
    assert export.text == "".join(sheet)
    assert exemptions_export(project=accel, query=ExportQuery(format="amd-csv")).text == "".join(
        sheet
    )

    sheet.pop(2)  # next week the row has gone from the sheet: so it goes from the export
    list_file_import(project=accel, file=ListFile(**{**file.__dict__, "text": "".join(sheet)}))
    export = exemptions_export(
        project=accel, query=ExportQuery(format="amd-csv", source=report.source)
    )
    assert export.text == "".join(sheet)
