"""A shard label says a count only when it is ``I/N`` with 1 <= I <= N."""

import pytest

from parity.pure.shards import shard_parse


@pytest.mark.parametrize(
    ("label", "parsed"),
    [("2/4", (2, 4)), ("1/1", (1, 1)), (" 4/4 ", (4, 4)), ("12/40", (12, 40))],
)
def test_a_shard_of_a_count_parses(label, parsed):
    assert shard_parse(label) == parsed


@pytest.mark.parametrize("label", ["", "linux-2", "0/4", "5/4", "2/0", "2 / 4", "-1/4", "2/4/8"])
def test_any_other_label_is_a_name_only(label):
    assert shard_parse(label) is None
