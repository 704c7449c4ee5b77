"""parity.pure.normalize.ids: one key per logical test across dialects and backends, never a
merge."""

import csv
import dataclasses
import re
import xml.etree.ElementTree as ET
from collections import defaultdict

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from parity.pure.normalize import (
    DEFAULT_RULES,
    Rewrite,
    Rules,
    TestIdentifier,
    TestIdentity,
    test_identity,
)
from parity.pure.normalize.ids import (
    clean_path,
    device_generics,
    display_id,
    document_hint,
    make_key,
    split_key,
)
from tests.conftest import FIXTURES_DIR
from tests.shared_data import CORPUS_DIR, PYTORCH_XLA_DIR, needs_corpus, needs_pytorch_xla

FIXTURES = FIXTURES_DIR / "normalize"
CASES = yaml.safe_load((FIXTURES / "identity_cases.yaml").read_text())
NO_DEVICES = Rules(
    device_tokens=(), class_suffixes={}, path_prefixes=(), module_paths={}, rewrites=()
)


def identity(classname: str, name: str, file: str | None = None, hint: str | None = None, **kw):
    return test_identity(classname=classname, name=name, file=file, folder_hint=hint, **kw)


def read_tsv(name: str) -> list[dict[str, str]]:
    with (PYTORCH_XLA_DIR / name).open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


@pytest.mark.parametrize("case", CASES, ids=[case["dialect"] for case in CASES])
def test_dialect_table(case: dict) -> None:
    got = identity(case["classname"], case["name"], case.get("file"), case.get("folder_hint"))
    assert got.key == case["key"]
    assert make_key(got.file, got.class_name, got.name) == got.key
    if "class_name" in case:
        assert got.class_name == case["class_name"]


def test_identity_fields() -> None:
    got = identity("test.test_ops.TestOpsXLA", "test_add_xla_float32[x]")
    assert got == TestIdentity(
        key="test/test_ops.py::TestOps::test_add_float32[x]",
        file="test/test_ops.py",
        class_name="TestOps",
        name="test_add_float32[x]",
    )


# --- device variants -------------------------------------------------------------------------


def disabled_templates() -> list[tuple[str, str]]:
    """(generic class, template name) from the real DISABLED_TORCH_TESTS lists."""
    pairs = set()
    for row in read_tsv("disabled_tests_sample.tsv"):
        pattern, klass = row["test_name_pattern"], row["test_class"]
        if row["match_type"] != "exact" or not klass.endswith("XLA"):
            continue
        generic = klass.removesuffix("XLA")
        if row["name_shape"] == "template":
            pairs.add((generic, pattern))
        elif row["name_shape"] == "template_xla":
            pairs.add((generic, pattern.removesuffix("_xla")))
    return sorted(pairs)


@needs_pytorch_xla
def test_device_variants_of_one_test_share_an_id() -> None:
    templates = disabled_templates()
    assert len(templates) > 200
    keys = set()
    for generic, template in templates:
        for dtypes in ("", "_float32", "_float32_int64"):
            variants = {
                identity(f"{generic}{suffix}", f"{template}_{token}{dtypes}", "test/test_torch.py")
                for suffix, token in (("XLA", "xla"), ("CPU", "cpu"), ("CUDA", "cuda"))
            }
            assert len(variants) == 1, variants
            (got,) = variants
            assert got.class_name == generic
            assert got.name == template + dtypes
            keys.add(got.key)
    assert len(keys) == 3 * len(templates)  # distinct templates never merge


@needs_pytorch_xla
def test_dtype_suffixed_disabled_names_match_their_cpu_and_cuda_twins() -> None:
    rows = [
        row
        for row in read_tsv("disabled_tests_sample.tsv")
        if row["name_shape"] == "template_xla_dtype" and row["match_type"] == "exact"
    ]
    assert rows
    for row in rows:
        xla_name, klass = row["test_name_pattern"], row["test_class"]
        head, dtypes = xla_name.split("_xla_", 1)
        xla = identity(klass, xla_name, "test/test_torch.py")
        for suffix, token in (("CPU", "cpu"), ("CUDA", "cuda")):
            twin = identity(klass.removesuffix("XLA") + suffix, f"{head}_{token}_{dtypes}")
            assert twin.class_name == xla.class_name == klass.removesuffix("XLA")
            assert twin.name == xla.name == f"{head}_{dtypes}"


VIEW_OPS = "test.test_view_ops"


def test_view_ops_variants_from_every_dialect() -> None:
    ids = {
        identity("TestViewOpsXLA", "test_view_copy_out_xla_float32", "test/test_view_ops.py"),
        identity("test.test_view_ops.TestViewOpsCPU", "test_view_copy_out_cpu_float32"),
        identity("__main__.TestViewOpsCUDA", "test_view_copy_out_cuda_float32", hint=VIEW_OPS),
    }  # fmt: skip
    assert [i.key for i in ids] == [
        "test/test_view_ops.py::TestViewOps::test_view_copy_out_float32"
    ]


@pytest.mark.parametrize(
    ("classname", "name"),
    [
        ("TestFooXLA", "test_bar_cpu_float32"),  # tokens disagree
        ("TestFooXLA", "test_bar_float32"),  # suffix without token
        ("TestFoo", "test_bar_xla_float32"),  # token without suffix
        ("TestFooXLA", "test_xla_bar"),  # token not before the dtype tail
        ("TestFooXLA", "xla"),  # nothing left of the name
        ("XLA", "test_bar_xla"),  # nothing left of the class
        ("TestFooXLA", "test_barxla"),  # not a whole token
        ("TestFooXla", "test_bar_xla"),  # PyTorch upper-cases the device
    ],
)
def test_device_words_stay_unless_generated(classname: str, name: str) -> None:
    got = identity(classname, name, "test/test_foo.py")
    assert (got.class_name, got.name) == (classname, name)


# --- the real inventory ---------------------------------------------------------------------

DEVICE_WORD = re.compile(rf"(?:^|_)({'|'.join(DEFAULT_RULES.device_tokens)})(?:_|$)", re.IGNORECASE)


@needs_pytorch_xla
def test_inventory_keeps_every_test_distinct_in_every_dialect() -> None:
    rows = {(r["file"], r["class"], r["test"]) for r in read_tsv("tests_inventory.tsv")}
    assert len(rows) == 1647  # 1,650 rows; three methods are defined twice in their class
    by_dialect: dict[str, set[str]] = defaultdict(set)
    for file, klass, test in rows:
        module = file.removesuffix(".py").replace("/", ".")
        xmlrunner = identity(klass, test, file)
        pytest_style = identity(f"{module}.{klass}", test)
        main = identity(f"__main__.{klass}", test, None, module)
        assert xmlrunner == pytest_style == main
        assert (xmlrunner.file, xmlrunner.class_name, xmlrunner.name) == (file, klass, test)
        by_dialect["xmlrunner"].add(xmlrunner.key)
        by_dialect["pytest"].add(pytest_style.key)
        by_dialect["main"].add(main.key)
    assert {dialect: len(keys) for dialect, keys in by_dialect.items()} == {
        "xmlrunner": len(rows),
        "pytest": len(rows),
        "main": len(rows),
    }


@needs_pytorch_xla
def test_inventory_names_keep_their_device_words() -> None:
    rows = [r for r in read_tsv("tests_inventory.tsv") if DEVICE_WORD.search(r["test"])]
    assert len(rows) >= 90
    for row in rows:
        got = identity(row["class"], row["test"], row["file"])
        word = DEVICE_WORD.search(row["test"]).group(1)
        assert word in got.name and word in got.key
        assert got.name == row["test"] and got.class_name == row["class"]


# --- the JUnit corpus -----------------------------------------------------------------------


def corpus_triples() -> dict[str, set[tuple[str, str, str | None]]]:
    with (CORPUS_DIR / "MANIFEST.tsv").open(newline="", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle, delimiter="\t") if r["well_formed"] == "yes"]
    triples = {}
    for row in rows:
        cases = ET.parse(CORPUS_DIR / row["path"]).iter()
        triples[row["path"]] = {
            (case.get("classname") or "", case.get("name") or "", case.get("file"))
            for case in cases
            if case.tag.rpartition("}")[2] == "testcase"
        }
    return triples


@needs_corpus
def test_corpus_files_never_merge_two_testcases() -> None:
    total = 0
    for path, triples in corpus_triples().items():
        keys = {identity(*triple).key for triple in triples}
        assert len(keys) == len(triples), path
        total += len(triples)
    assert total > 20_000


# --- keys are injective ---------------------------------------------------------------------

PARTS = st.text(alphabet="ab:\\ ./[]", max_size=8)


@given(PARTS, PARTS, PARTS, PARTS)
def test_distinct_pairs_of_one_file_get_distinct_keys(c1: str, n1: str, c2: str, n2: str) -> None:
    first = test_identity(classname=c1, name=n1, file="f.rs", folder_hint=None, rules=NO_DEVICES)
    second = test_identity(classname=c2, name=n2, file="f.rs", folder_hint=None, rules=NO_DEVICES)
    assert (first.key == second.key) == ((c1, n1) == (c2, n2))


@given(PARTS, PARTS, PARTS)
def test_split_key_inverts_make_key(file: str, class_name: str, name: str) -> None:
    key = make_key(file, class_name, name)
    assert split_key(key, has_file=bool(file), has_class=bool(class_name)) == (
        file,
        class_name,
        name,
    )


def test_display_id_is_the_real_id_the_key_escapes():
    """A Rust test named ``a::b:`` in class ``m:`` keeps its colons for readers; the key
    escapes them so it never merges two tests."""
    identity = test_identity(
        classname="m:", name="a::b:", file="src/lib.rs", folder_hint=None, rules=NO_DEVICES
    )

    assert identity.key == "src/lib.rs::m:\\::a::b:"
    assert display_id(identity.file, identity.class_name, identity.name) == "src/lib.rs::m:::a::b:"
    assert display_id("test/x.py", "", "test_a[C:\\tmp]") == "test/x.py::test_a[C:\\tmp]"


# --- paths ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("/home/runner/work/xla/xla/test/test_ops.py", "test/test_ops.py"),
        ("/__w/xla/xla/test/test_ops.py", "test/test_ops.py"),
        ("/workspace/test/test_ops.py", "test/test_ops.py"),
        ("/workspace2/test/test_ops.py", "/workspace2/test/test_ops.py"),
        ("/var/lib/jenkins/workspace/test/test_ops.py", "test/test_ops.py"),
        ("./test//test_ops.py", "test/test_ops.py"),
        ("test\\spmd\\test_x.py", "test/spmd/test_x.py"),
        ("file:///github/workspace/a_test.dart", "a_test.dart"),
        ("  ", ""),
        (".", ""),
    ],
)
def test_clean_path(raw: str, expected: str) -> None:
    assert clean_path(raw) == expected


def test_longest_prefix_wins() -> None:
    rules = Rules(
        device_tokens=(),
        class_suffixes={},
        path_prefixes=("/src", "/src/xla/"),
        module_paths={},
        rewrites=(),
    )
    assert clean_path("/src/xla/test/a_test.py", rules) == "test/a_test.py"
    assert clean_path("/src/other/a_test.py", rules) == "other/a_test.py"


def test_module_paths_map_and_force_python() -> None:
    rules = Rules(
        device_tokens=(),
        class_suffixes={},
        path_prefixes=(),
        module_paths={
            "test": "python/test",
            "test_mat_mul_precision": "test/test_mat_mul_precision",
        },
        rewrites=(),
    )
    assert identity("test.test_ops.TestOps", "t", rules=rules).file == "python/test/test_ops.py"
    # a module_paths key makes a non-test-looking module Python
    assert identity("test.helpers.Base", "t", rules=rules).key == "python/test/helpers.py::Base::t"
    mat_mul = identity("test_mat_mul_precision.TestMatMulPrecision", "test_high", rules=rules)
    assert mat_mul.file == "test/test_mat_mul_precision.py"


def test_file_attribute_wins_over_module_and_hint() -> None:
    got = identity("test.test_ops.TestOps", "t", "test/other_test.py", "test.test_third")
    assert got.key == "test/other_test.py::TestOps::t"


def test_non_python_file_never_splits_the_classname() -> None:
    assert identity("test_a.B", "t", "f.rs").class_name == "test_a.B"


@pytest.mark.parametrize(
    ("folder", "file_hint", "expected"),
    [
        # parity_ci packs an XML found under test-reports/ into that folder: it names no file,
        # so the upload's file_hint (--file-hint) names the file of its __main__ classes.
        ("test-reports", "test/test_ops.py", "test/test_ops.py::TestOps::test_add"),
        (None, "test/test_ops.py", "test/test_ops.py::TestOps::test_add"),
        # xmlrunner's folder names the file, per document of a many-file upload: it stays.
        ("test.test_view_ops", "test/test_ops.py", "test/test_view_ops.py::TestOps::test_add"),
        ("test-reports", None, "TestOps::test_add"),
    ],
)
def test_a_folder_that_names_no_file_leaves_the_file_hint(folder, file_hint, expected) -> None:
    hint = document_hint(folder, file_hint, DEFAULT_RULES)
    assert identity("__main__.TestOps", "test_add", hint=hint).key == expected


# --- rewrites -------------------------------------------------------------------------------


def with_rewrites(*rewrites: tuple[str, str]) -> Rules:
    return Rules(
        device_tokens=DEFAULT_RULES.device_tokens,
        class_suffixes=DEFAULT_RULES.class_suffixes,
        path_prefixes=DEFAULT_RULES.path_prefixes,
        module_paths={},
        rewrites=tuple(Rewrite(pattern, replacement) for pattern, replacement in rewrites),
    )


def test_rewrites_run_last_on_the_key_and_parts_follow() -> None:
    rules = with_rewrites(
        (r"^test/old_name\.py::", "test/new_name.py::"), ("::TestFooGPU::", "::TestFoo::")
    )
    got = identity("TestFooGPU", "test_bar_xla", "test/old_name.py", rules=rules)
    assert got == TestIdentity(
        key="test/new_name.py::TestFoo::test_bar_xla",
        file="test/new_name.py",
        class_name="TestFoo",
        name="test_bar_xla",
    )  # fmt: skip


def test_rewrites_see_the_device_normalized_key() -> None:
    rules = with_rewrites((r"_float32$", ""))
    got = identity("TestFooXLA", "test_bar_xla_float32", "test/test_foo.py", rules=rules)
    assert got.key == "test/test_foo.py::TestFoo::test_bar"


def test_rewrite_dropping_a_separator_empties_the_class() -> None:
    got = identity("TestFoo", "test_bar", "f.py", rules=with_rewrites(("::TestFoo::", "::")))
    assert (got.key, got.file, got.class_name, got.name) == (
        "f.py::test_bar",
        "f.py",
        "",
        "test_bar",
    )


# --- the per-upload identifier is test_identity, remembered ----------------------------------

CLASSNAMES = st.sampled_from(
    ["test.test_ops.TestOps", "TestViewOpsXLA", "test.test_nn.TestNNCPU", "m:", "", "__main__.T"]
)
NAMES = st.sampled_from(
    ["test_add", "test_view_xla_float32", "test_nn_cpu", "a::b:", "test_x_cuda_int64[p::q]", ""]
)
REWRITING = dataclasses.replace(DEFAULT_RULES, rewrites=(Rewrite("Ops", "O"),))
IDENTIFIER_RULES = st.sampled_from([DEFAULT_RULES, NO_DEVICES, REWRITING])


@given(IDENTIFIER_RULES, st.lists(st.tuples(CLASSNAMES, NAMES, st.sampled_from([None, "t/x.py"]))))
def test_the_identifier_gives_what_test_identity_gives(rules, cases) -> None:
    identify = TestIdentifier(rules)
    for classname, name, file in cases:  # repeats reuse what the identifier remembered
        expected = test_identity(
            classname=classname, name=name, file=file, folder_hint=None, rules=rules
        )
        assert identify(classname=classname, name=name, file=file, folder_hint=None) == expected


# The per-class shortcuts (one ``endswith`` over every suffix, a look-up per suffix length, one
# regex for the prefixes) must give what the plain definitions give.
_SUFFIXED_RULES = Rules(
    device_tokens=("cpu", "xla", "tpu", "neuron", "privateuse1"),
    class_suffixes={
        "CPU": "cpu",
        "XLA": "xla",
        "TPU": "tpu",
        "UTPU": "xla",
        "NEURON": "neuron",
        "PRIVATEUSE1": "privateuse1",
    },
    path_prefixes=("/src", "/src/xla/", "/home/*/w/", "C:/a/*/"),
    module_paths={},
    rewrites=(),
)


@given(
    st.lists(
        st.sampled_from(
            [
                "Test",
                "Foo",
                ".",
                "CPU",
                "XLA",
                "TPU",
                "UTPU",
                "U",
                "NEURON",
                "1",
                "PRIVATEUSE1",
                "PRIVATEUSE",
            ]
        ),
        max_size=5,
    ).map("".join)
)
def test_device_generics_is_every_suffix_it_ends_with(class_name):
    expected: dict[str, str] = {}
    for suffix, token in sorted(_SUFFIXED_RULES.class_suffixes.items(), key=lambda kv: -len(kv[0])):
        generic = class_name[: -len(suffix)]
        if class_name.endswith(suffix) and generic and not generic.endswith("."):
            expected.setdefault(token, generic)
    assert device_generics(class_name, _SUFFIXED_RULES) == expected


@given(
    st.lists(
        st.sampled_from(["/src", "/xla", "/", "home", "runner", "w", "C:", "a", "x", "test_a.py"]),
        max_size=6,
    ).map("".join)
)
def test_clean_path_cuts_the_longest_prefix(raw):
    uncut = clean_path(raw, NO_DEVICES)  # no prefixes: only normalized
    cuts = [m.end() for rx in _SUFFIXED_RULES.compiled.path_prefixes if (m := rx.match(uncut))]
    expected = uncut[max(cuts, default=0) :]
    assert clean_path(raw, _SUFFIXED_RULES) == ("" if expected == "." else expected)
