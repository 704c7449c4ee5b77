"""Shipped presets join their own examples; the preview reads pasted names and says which join."""

import pytest

from parity.pure.normalize import DEFAULT_RULES, validate_rules
from parity.pure.normalize.presets import (
    PRESET_NAMES,
    PRESETS,
    preset_matching,
    preset_named,
    preset_rules,
)
from parity.pure.normalize.preview import identity_preview


@pytest.mark.parametrize("preset", PRESETS, ids=lambda preset: preset.name)
def test_each_preset_joins_every_name_of_its_example(preset):
    left, right = preset.example
    preview = identity_preview(
        left="\n".join(left), right="\n".join(right), rules=validate_rules(preset.rules)
    )
    assert preview.errors == ()
    assert preview.joined == len(left) == len(right)
    assert preview.left_only == preview.right_only == preview.merged == 0


def test_under_the_plain_preset_the_backends_examples_stay_apart():
    left, right = preset_named("sqlalchemy").example
    preview = identity_preview(
        left="\n".join(left), right="\n".join(right), rules=validate_rules(preset_rules("plain"))
    )
    assert preview.joined == 1  # QueryTest::test_get carries no database
    assert preview.left_only == preview.right_only == 1


def test_a_preset_is_recognised_until_it_is_edited():
    assert set(PRESET_NAMES) == {"pytorch", "sqlalchemy", "django", "webdriverio", "plain"}
    assert preset_matching(DEFAULT_RULES) == "pytorch"
    rules = preset_rules("sqlalchemy")
    assert preset_matching(validate_rules(rules)) == "sqlalchemy"
    rules["backend_pattern"]["class"] = r"_(?P<backend>(?:postgresql|sqlite)\+\w+)$"
    assert preset_matching(validate_rules(rules)) is None
    assert "mssql" in preset_named("sqlalchemy").rules["backend_pattern"]["class"]  # a copy


def test_an_unknown_preset_says_which_exist():
    with pytest.raises(KeyError, match="presets: pytorch, sqlalchemy, django, webdriverio, plain"):
        preset_named("jest")


def test_the_preview_reads_junit_pairs_node_ids_and_unittest_ids():
    preview = identity_preview(
        left="test.test_ops.TestOpsCUDA::test_add_cuda_float32\n"
        "# a comment\n\n"
        "test/test_ops.py::TestOpsCUDA::test_sub_cuda\n",
        right="test.test_ops.TestOpsXLA.test_add_xla_float32\n"
        "test/test_ops.py::TestOpsXLA::test_mul_xla\n",
        rules=DEFAULT_RULES,
    )
    by_id = {row.test_id: row for row in preview.rows}
    joined = by_id["test/test_ops.py::TestOps::test_add_float32"]
    assert joined.joins
    assert [(n.line, n.backend) for n in joined.left] == [(1, "cuda")]
    assert [(n.line, n.backend) for n in joined.right] == [(1, "xla")]
    assert not by_id["test/test_ops.py::TestOps::test_sub"].right
    assert not by_id["test/test_ops.py::TestOps::test_mul"].left
    assert [row.test_id for row in preview.rows][0] == joined.test_id  # joined ones first
    assert (preview.joined, preview.left_only, preview.right_only) == (1, 1, 1)


def test_two_names_of_one_backend_becoming_one_test_are_flagged():
    rules = validate_rules(
        {"backend_pattern": {"name": r"_(?P<backend>[a-z]+)$"}}  # too broad: any last word
    )
    preview = identity_preview(
        left="tests.test_a.TestA::test_read_fast\ntests.test_a.TestA::test_read_slow",
        right="",
        rules=rules,
    )
    assert preview.merged == 1
    assert [n.backend for n in preview.rows[0].left] == ["fast", "slow"]


def test_a_line_naming_no_test_is_reported_and_the_rest_shown():
    preview = identity_preview(
        left="tests.test_a.TestA::\ntests.test_a.TestA::test_ok", right="", rules=DEFAULT_RULES
    )
    assert [(e.side, e.line) for e in preview.errors] == [("left", 1)]
    assert "names a class but no test" in preview.errors[0].problem
    assert [row.test_id for row in preview.rows] == ["tests/test_a.py::TestA::test_ok"]
