"""Exemption patterns: the same regex answers in Python and in Postgres, and a glob stays
within the files it names."""

import pytest
from django.db import connection

from parity.pure.globs import (
    PatternError,
    file_matches,
    is_file_level,
    key_matches,
    key_parts,
    pattern_literal,
    pattern_regex,
    pattern_shape,
)

KEYS = [
    "test/test_ops.py::TestOps::test_add_complex64",
    "test/test_ops.py::TestOps::test_add_float32",
    "test/test_ops.py::TestOps::test_add[complex64-x::y]",
    "test/test_ops_fwd.py::TestOps::test_add_complex64",
    "test/test_ops.py.orig::TestOps::test_add_complex64",
    "test/spmd/test_a.py::TestA::test_x",
    "test/spmd/deep/test_b.py::TestB::test_y",
    "test/spmd_extra/test_c.py::TestC::test_z",
    "pytorch/test/test_view_ops.py::TestViewOps::test_view_float32",
]
CASES = {
    "test/test_ops.py": [0, 1, 2],
    "test/test_ops*.py": [0, 1, 2, 3],
    "test/test_ops.py::TestOps::test_*_complex64": [0],
    "test/test_ops.py::TestOps::test_add[complex64-x::y]": [2],  # brackets are literal
    "test/test_ops.py::*": [0, 1, 2],
    "test/spmd/*": [5],
    "test/spmd/**": [5, 6],
    "test/spmd/**::TestB::*": [6],
    "**::TestViewOps::test_view_float32": [8],
    "test/*/test_?.py": [5, 7],
}


@pytest.mark.parametrize(("pattern", "expected"), CASES.items())
def test_a_pattern_matches_exactly_the_tests_it_names(pattern, expected):
    regex = pattern_regex(pattern)

    assert [i for i, key in enumerate(KEYS) if key_matches(regex, key)] == expected


@pytest.mark.django_db
def test_postgres_reads_each_pattern_as_python_does():
    with connection.cursor() as cursor:
        for pattern, expected in CASES.items():
            cursor.execute(
                "SELECT array_agg(i - 1 ORDER BY i) "
                "FROM unnest(%s::text[]) WITH ORDINALITY k(key, i) WHERE key ~ %s",
                [KEYS, pattern_regex(pattern)],
            )
            assert (cursor.fetchone()[0] or []) == expected, pattern


def test_file_level_patterns_match_files():
    assert is_file_level("test/spmd/**") and not is_file_level("test/a.py::TestA::*")
    assert file_matches(pattern_regex("test/spmd/**"), "test/spmd/deep/test_b.py")
    assert not file_matches(pattern_regex("test/spmd/**"), "test/spmd_extra/test_c.py")


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        ("", "empty"),
        ("**", "names every file"),
        ("test/a.py::", "ends with '::'"),
        ("x" * 1001, "at most 1000"),
    ],
)
def test_patterns_that_name_no_tests_are_refused(pattern, says):
    with pytest.raises(PatternError, match=says):
        pattern_regex(pattern)


@pytest.mark.parametrize("pattern", CASES)
def test_every_key_a_pattern_matches_holds_its_literal(pattern):
    literal = pattern_literal(pattern)

    assert literal
    assert all(literal in key for key in KEYS if key_matches(pattern_regex(pattern), key))


EXACT = [*CASES, "test/test_ops.py::TestOps::test_add_float32", "**::TestA::test_x", "**::test_y"]


@pytest.mark.parametrize("pattern", EXACT)
def test_a_pattern_found_by_equality_matches_what_its_regex_matches(pattern):
    shape = pattern_shape(pattern)
    part = {"key": lambda key: key, "file": lambda key: key_parts(key)[0]}
    part["anyfile"] = lambda key: key_parts(key)[1]
    keys = [*KEYS, "::TestA::test_x", "TestA::test_x", "a:b::TestA::test_x", "x::y::test_y"]

    for key in keys:
        by_regex = key_matches(pattern_regex(pattern), key)
        if shape != "glob":
            assert (part[shape](key) == pattern) == by_regex, key
