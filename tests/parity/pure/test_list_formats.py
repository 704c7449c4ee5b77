"""Each list format reads its sample into entries and writes those entries back as the same
text, byte for byte; what a file holds that cannot be an entry is named with where and why."""

from pathlib import Path

import pytest

from parity.pure.list_formats import (
    FORMATS,
    ListEntry,
    ListFormatError,
    ReadOptions,
    list_read,
)
from parity.pure.list_formats import set_test_configs as stc

LISTS = Path(__file__).resolve().parents[2] / "fixtures" / "lists"

SAMPLES = [
    ("disabled-json", "disabled-tests-condensed.json"),
    ("set-test-configs", "set_test_configs.py.txt"),
    ("skip-dict", "skip_list_arc.py.txt"),
    ("amd-csv", "parity-sheet.csv"),
    ("deselect", "deselect.txt"),
    ("na-list", "not_applicable.txt"),
]


def read(format: str, name: str, **options):
    return list_read(format, (LISTS / name).read_text(), ReadOptions(source_name=name, **options))


@pytest.mark.parametrize(("format", "name"), SAMPLES)
def test_each_sample_is_written_back_byte_for_byte(format, name):
    sample = (LISTS / name).read_text()
    entries = read(format, name).entries

    written = FORMATS[format].write(entries)

    assert entries and not written.skipped
    assert written.text == sample
    # The order a list keeps is carried: shuffled entries (as the database returns them) too.
    assert FORMATS[format].write(list(reversed(entries))).text == sample


def summary(entries: list[ListEntry]) -> list[tuple]:
    return [(e.match, e.kind, e.backends, e.issue, e.condition) for e in entries]


def test_disabled_tests_become_tracked_tests_of_a_class_on_their_platforms():
    found = read("disabled-json", "disabled-tests-condensed.json")

    issue = "https://github.com/pytorch/pytorch/issues/91000"
    assert summary(found.entries) == [
        ("**::TestBinaryUfuncs::test_add_float32", "tracked", ("rocm",), f"{issue}1", ""),
        ("**::TestTensorCreation::test_cat_empty", "tracked", (), f"{issue}2", ""),
        ("**::TestSortAndSelect::test_sort_large", "tracked", ("linux", "rocm"), f"{issue}3", ""),
        ("**::TestViewOps::test_view", "tracked", ("win",), f"{issue}4", ""),
    ]


def test_a_disabled_key_that_is_not_a_unittest_name_is_reported():
    text = '{"test_a (__main__.TestA)": ["1", "https://x/1", []], "nonsense": [], "t*": 1}'

    found = list_read("disabled-json", text)

    assert [e.match for e in found.entries] == ["**::TestA::test_a"]
    assert [u.where for u in found.unread] == ["'nonsense'", "'t*'"]
    with pytest.raises(ListFormatError, match="Not JSON"):
        list_read("disabled-json", "{")


def test_set_test_configs_exclusions_are_not_applicable_classes_methods_and_dtypes():
    found = read("set-test-configs", "set_test_configs.py.txt", backends=("openreg",))

    assert [(e.match, e.kind, e.backends) for e in found.entries] == [
        ("**::TestCUDAGraphs::*", "not_applicable", ("openreg",)),
        ("**::TestTensorIndexing::test_index_put*", "not_applicable", ("openreg",)),
        ("**::TestTensorIndexing::test_gather*", "not_applicable", ("openreg",)),
        ("**::TestDtypeAware::test_dtype_filter*float32*", "not_applicable", ("openreg",)),
        ("**::TestDtypeAware::test_dtype_filter*complex64*", "not_applicable", ("openreg",)),
    ]
    assert found.entries[0].reason == "Excluded by set_test_configs in set_test_configs.py.txt"


def test_a_module_is_parsed_never_run_and_what_is_not_an_exclusion_is_reported():
    found = read("set-test-configs", "set_test_configs_module.py.txt")

    # The exclusions came from a module-level name; the call's other settings are reported.
    assert [e.match for e in found.entries] == [
        "**::TestCUDAGraphs::*",
        "**::TestTensorIndexing::test_index_put*",
    ]
    assert [(u.where, u.why) for u in found.unread] == [
        (
            "line 15: test_exclusions: 'TestNotAnIdentifier-'",
            "a class is named by a plain identifier",
        ),
        ("line 16: op_allowlist", "not imported: a test ID does not say which op an @ops "
         "variant runs"),
        ("line 17: op_overrides", "not imported: it changes how tests run, not whether they run"),
    ]  # fmt: skip


def test_code_in_a_configuration_is_never_executed(tmp_path):
    marker = tmp_path / "ran"
    text = (
        f"open({str(marker)!r}, 'w').write('x')\n"
        f"Base.set_test_configs(test_exclusions={{'TestA': __import__('os').getcwd()}})\n"
    )

    found = list_read("set-test-configs", text)

    assert not marker.exists()
    assert found.entries == []
    assert "is not a literal" in found.unread[0].why
    with pytest.raises(ListFormatError, match="No set_test_configs"):
        list_read("set-test-configs", "x = 1\n")
    with pytest.raises(ListFormatError, match="Not Python: line 1"):
        list_read("set-test-configs", "set_test_configs(\n")


def test_skip_dict_cases_are_k_terms_of_their_file_with_comments_as_reasons():
    found = read("skip-dict", "skip_list_arc.py.txt", prefix="test/xpu/", condition="arch == arc")

    issue = "https://github.com/intel/torch-xpu-ops/issues/9001"
    assert [(e.match, e.kind, e.reason, e.issue, e.condition) for e in found.entries] == [
        ("test/xpu/test_ops_xpu.py::*test_compare_cpu_nn_functional_conv3d*", "intended",
         "precision on ARC's fp64 emulation", "", "arch == arc"),
        ("test/xpu/test_ops_xpu.py::*test_noncontiguous_samples_linalg_svd*", "tracked",
         issue, issue, "arch == arc"),
        ("test/xpu/test_ops_xpu.py::*test_out_warning_addmm*", "intended",
         "Skipped in skip_list_arc.py.txt", "", "arch == arc"),
        ("test/xpu/test_sparse_xpu.py", "intended", "no sparse kernels on ARC", "", "arch == arc"),
        ("test/xpu/test_unary_ufuncs_xpu.py::*test_reference_numerics_extremal*", "intended",
         "Skipped in skip_list_arc.py.txt", "", "arch == arc"),
    ]  # fmt: skip


def test_a_skip_dict_that_is_not_literal_is_reported_by_line():
    text = 'skip_dict = {\n    "a.py": ("t_1", name),\n    "b.py": 3,\n    4: None,\n}\n'

    found = list_read("skip-dict", text)

    assert [e.match for e in found.entries] == ["a.py::*t_1*"]
    assert [(u.where, u.why) for u in found.unread] == [
        ("line 2: 'a.py'", "a case is a string literal"),
        ("line 3: 'b.py'", "expected a tuple of cases or None"),
        ("line 4", "a key is a test file's name, in quotes"),
    ]
    with pytest.raises(ListFormatError, match="No module-level 'skip_dict"):
        list_read("skip-dict", "other = {}\n")


def test_amd_rows_carry_their_columns_and_skipped_arches_become_a_condition():
    found = read("amd-csv", "parity-sheet.csv", backends=("rocm",))

    assert summary(found.entries) == [
        ("test/test_ops.py::TestCommon::test_out_abs_float32", "intended", ("rocm",), "", ""),
        (
            "test/test_ops.py::TestCommon::test_out_warning_addmm",
            "tracked",
            ("rocm",),
            "https://github.com/ROCm/pytorch/issues/9100",
            "arch == mi300",
        ),
        ("test/test_nn.py::TestNN::test_conv_large", "intended", ("rocm",), "",
         "arch in (mi300, mi350)"),
    ]  # fmt: skip
    row = dict(zip(found.entries[1].extra["header"], found.entries[1].extra["row"], strict=True))
    assert (row["assignee"], row["comments"], row["week"]) == (
        "bob",
        "flaky, see thread",
        "2026-48",
    )


def test_an_amd_row_that_declares_nothing_or_is_short_is_reported():
    text = "Test_Name,Skip_Reason,extra\ntest_a,,x\ntest_b,why\ntest_c,because,y\n"

    found = list_read("amd-csv", text)

    assert [(e.match, e.reason) for e in found.entries] == [("**::test_c", "because")]
    assert [(u.where, u.why) for u in found.unread] == [
        ("line 2", "no skip_reason or issue: it declares nothing"),
        ("line 3", "2 cells, the header has 3"),
    ]
    with pytest.raises(ListFormatError, match="No test_name column"):
        list_read("amd-csv", "file,reason\n")


def test_an_amd_row_passed_on_every_arch_exempts_nothing_and_is_kept_to_write_back():
    text = (
        "test_file,test_class,test_name,mi300_status,mi350_status,skip_reason,issue,assignee\n"
        "test/test_a.py,TestA,test_passes,PASSED,pass,was flaky,,carol\n"
        "test/test_a.py,TestA,test_skips,SKIPPED,PASSED,no kernel,,dan\n"
    )

    found = list_read("amd-csv", text)

    assert [(e.match, e.condition) for e in found.entries] == [
        ("test/test_a.py::TestA::test_skips", "arch == mi300")
    ]
    (unread,) = found.unread
    assert (unread.where, unread.why) == (
        "line 2",
        "passes on every arch (mi300, mi350): nothing to exempt",
    )
    assert unread.extra["match"] == "test/test_a.py::TestA::test_passes"
    kept = ListEntry(match=unread.extra["match"], kind="", extra=unread.extra)
    assert FORMATS["amd-csv"].write([*found.entries, kept]).text == text


def test_deselected_node_ids_cover_what_pytest_deselects():
    found = read("deselect", "deselect.txt")

    assert [(e.match, e.kind, e.reason) for e in found.entries] == [
        ("test/test_ops.py::TestCommon::test_out_float32*", "intended", "needs a second device"),
        ("test/test_nn.py::TestNN::*", "intended", "Listed in deselect.txt"),
        ("test/test_sparse.py", "tracked",
         "no sparse kernels https://github.com/example/backend/issues/12"),
        ("test/test_ops.py::TestCommon::test_noncontiguous_samples[linalg_svd]*", "intended",
         "Listed in deselect.txt"),
    ]  # fmt: skip


def test_a_not_applicable_list_declares_not_applicable_with_its_reasons():
    found = read("na-list", "not_applicable.txt")

    assert {e.kind for e in found.entries} == {"not_applicable"}
    assert found.entries[1].reason == "Apple Metal only"


@pytest.mark.parametrize(
    ("format", "text"),
    [
        ("disabled-json", '{\n  "test_x (__main__.TestA)": [\n    "7",\n    '
         '"https://github.com/o/r/issues/7",\n    [\n      "tpu"\n    ]\n  ]\n}'),
        ("set-test-configs", "PrivateUse1TestBase.set_test_configs(\n    test_exclusions={\n"
         '        "TestA": "*",\n        "TestB": [\n            "test_x",\n        ],\n'
         "    },\n)\n"),
        # test/b.py is skipped whole: its -k term says nothing more, and is left out
        ("skip-dict", 'skip_dict = {\n    "test/a.py": None,  # why\n'
         '    "test/b.py": None,  # why\n}\n'),
        ("amd-csv", "test_file,test_class,test_name,skip_reason,issue,assignee,comments\n"
         ",TestA,test_x,,https://github.com/o/r/issues/7,,\ntest/a.py,TestA,test_x,why,,,\n"),
        ("deselect", "test/a.py  # why\ntest/a.py::TestA::test_x  # why\ntest/b.py  # why\n"),
    ],
)  # fmt: skip
def test_exemptions_made_in_parity_are_written_in_each_format(format, text):
    entries = [
        ListEntry("test/a.py::TestA::test_x", "intended", ("tpu",), "why"),
        ListEntry(
            "**::TestA::test_x", "tracked", ("tpu",), issue="https://github.com/o/r/issues/7"
        ),
        ListEntry("**::TestA::*", "not_applicable", reason="why"),
        ListEntry("**::TestB::test_x*", "not_applicable", reason="why"),
        ListEntry("test/a.py", "intended", reason="why"),
        ListEntry("test/b.py", "intended", reason="why"),
        ListEntry("test/b.py::*test_x*", "intended", reason="why"),
    ]

    written = FORMATS[format].write(entries)

    assert written.text == text
    assert len(written.skipped) == len(entries) - len(list_read(format, text).entries)


def test_the_set_test_configs_writer_keeps_the_call_it_read():
    text = 'Other.set_test_configs(\n    test_exclusions={\n        "TestA": "*",\n    },\n)\n'

    entries = list_read("set-test-configs", text).entries

    assert stc.write(entries).text == text


def test_disabled_tests_read_as_another_kind_get_a_reason_of_their_own():
    text = '{"test_a (__main__.TestA)": ["1", "https://x/issues/1", []]}'

    (entry,) = list_read("disabled-json", text, ReadOptions(kind="intended")).entries

    assert (entry.kind, entry.reason) == (
        "intended",
        "Disabled in PyTorch's CI by https://x/issues/1",
    )
    with pytest.raises(ListFormatError, match="Unknown kind 'flaky'"):
        list_read("disabled-json", text, ReadOptions(kind="flaky"))
