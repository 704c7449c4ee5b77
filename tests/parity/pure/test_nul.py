"""The one rule for a NUL character in parsed JSON or literal input: found anywhere, keys
included, and named by where it is."""

import pytest

from parity.pure.nul import nul_message, nul_where


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ("a\x00b", "(the value)"),
        ({"arch": "gfx\x00942"}, "arch"),
        ({"files": [{"file": "test/a.py"}, {"file": "test/\x00.py"}]}, "files[1].file"),
        ({"x\x00": 1}, "['x\\x00'] (a key)"),
        ({"a": {"b\x00": "c"}}, "a['b\\x00'] (a key)"),
        (["ok", ("x", "\x00")], "[1][1]"),
    ],
)
def test_a_nul_is_found_and_named(value, where):
    assert nul_where(value) == where
    assert where in nul_message(value)


@pytest.mark.parametrize("value", ["", "plain", {"a": [1, 2.5, None, True]}, [], 7])
def test_values_without_a_nul_pass(value):
    assert nul_where(value) is None
    assert nul_message(value) is None


def test_an_exemption_file_with_a_nul_is_refused_where_it_is_read():
    from parity.pure.list_formats.parity_file import ExemptionFileError, document_load

    with pytest.raises(ExemptionFileError, match=r"NUL.*\[0\]\.match"):
        document_load('- match: "test/a.py::x\\0"\n  kind: intended\n')
