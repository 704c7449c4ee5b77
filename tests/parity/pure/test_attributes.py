import pytest

from parity.pure.attributes import (
    AttributesError,
    ConditionError,
    attributes_check,
    condition_holds,
    condition_parse,
    variant_name,
    version_key,
)

AMD = "arch in (gfx942, gfx90a) and rocm < 7.14"


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("7.2", "7.14"),
        ("6.4.1", "7"),
        ("7.1rc1", "7.1"),
        ("7.1.dev3", "7.1a1"),
        ("7.1", "7.1.1"),
        ("v12.4", "12.10"),
        ("2.6.0+rocm7.1", "2.7"),
    ],
)
def test_versions_order_by_their_numbers_not_their_text(lower, higher):
    assert version_key(lower) < version_key(higher)


def test_trailing_zeros_and_a_local_tail_do_not_make_another_version():
    assert version_key("7") == version_key("7.0") == version_key("7.0.0")
    assert version_key("2.6.0+rocm7.1") == version_key("2.6")


@pytest.mark.parametrize("text", ["gfx942", "", "7.x", "latest", "1..2"])
def test_what_is_not_a_version_says_so(text):
    assert version_key(text) is None


@pytest.mark.parametrize(
    ("attributes", "holds"),
    [
        ({"arch": "gfx942", "rocm": "7.1"}, True),
        ({"arch": "gfx90a", "rocm": "6.4.1"}, True),
        ({"arch": "gfx942", "rocm": "7.14"}, False),
        ({"arch": "gfx942", "rocm": "7.20"}, False),
        ({"arch": "gfx1100", "rocm": "7.1"}, False),
        ({"arch": "gfx942"}, False),  # no rocm: the clause about it is false
        ({"arch": "gfx942", "rocm": "nightly"}, False),  # not a version: no order
    ],
)
def test_amds_condition(attributes, holds):
    assert condition_parse(AMD).holds(attributes) is holds


def test_and_binds_tighter_than_or_and_parentheses_group():
    loose = condition_parse("arch == gfx90a or arch == gfx942 and rocm >= 7.14")
    grouped = condition_parse("(arch == gfx90a or arch == gfx942) and rocm >= 7.14")
    old_mi200 = {"arch": "gfx90a", "rocm": "6.4"}
    assert loose.holds(old_mi200) is True
    assert grouped.holds(old_mi200) is False
    assert grouped.holds({"arch": "gfx90a", "rocm": "7.14"}) is True


@pytest.mark.parametrize(
    ("condition", "attributes", "holds"),
    [
        ("rocm = 7.1", {"rocm": "7.1.0"}, True),  # equal as versions
        ("rocm == 7.1", {"rocm": "7.10"}, False),
        ("os != windows", {"os": "linux"}, True),
        ("os != windows", {}, False),  # a missing key fails every clause, != too
        ("os not in (windows, macos)", {"os": "linux"}, True),
        ("os not in (windows, macos)", {}, False),
        ("arch in (gfx942)", {"arch": "GFX942"}, False),  # text compares exactly
        ("torch >= 2.6", {"torch": "2.6.0+rocm7.1"}, True),
        ("torch <= 2.5", {"torch": "2.6.0a0"}, False),
        ('name == "MI300 X"', {"name": "MI300 X"}, True),
        ("cuda > 12", {"cuda": "12.4"}, True),
    ],
)
def test_operators(condition, attributes, holds):
    assert condition_parse(condition).holds(attributes) is holds


def test_an_empty_condition_holds_everywhere():
    assert condition_holds("", {}) is True
    assert condition_holds("  ", {"arch": "x"}) is True


def test_keys_are_those_the_clauses_name():
    assert condition_parse("(a == 1 or b < 2) and c in (x, y)").keys() == {"a", "b", "c"}


@pytest.mark.parametrize(
    ("condition", "message", "position"),
    [
        ("arch <", "ends too early", 6),
        ("arch < gfx942", "ordering compares versions", 7),
        ("Arch == x", "Expected an attribute name", 0),
        ("arch in (a b)", "Expected ',' or ')'", 11),
        ("arch ~ 1", "Unexpected character '~'", 5),
        ("rocm < 7 rocm", "Expected 'and', 'or' or the end", 9),
        ("arch gfx942", "Expected an operator", 5),
        ("(arch == a", "ends too early", 10),
        ("arch not (a)", "Expected 'in'", 9),
        ("and == 1 and", "ends too early", 12),
    ],
)
def test_a_fault_is_named_with_its_position(condition, message, position):
    with pytest.raises(ConditionError) as caught:
        condition_parse(condition)
    assert message in str(caught.value)
    assert caught.value.position == position
    assert f"at character {position + 1}" in str(caught.value)


def test_attributes_are_checked_and_kept_as_text():
    assert attributes_check({"arch": "gfx942", "rocm": 7.1, "world_size": 8}) == {
        "arch": "gfx942",
        "rocm": "7.1",
        "world_size": "8",
    }


@pytest.mark.parametrize(
    ("attributes", "names"),
    [
        ({"Arch": "x"}, "'Arch'"),
        ({"9arch": "x"}, "'9arch'"),
        ({"a" * 51: "x"}, "a" * 51),
        ({"arch": "x" * 101}, "'arch'"),
        ({"arch": ""}, "'arch'"),
        ({"arch": ["gfx942"]}, "'arch'"),
        ({"arch": True}, "'arch'"),
        ({f"k{i}": "v" for i in range(21)}, "At most 20"),
        (["arch=gfx942"], "JSON object"),
    ],
)
def test_bad_attributes_are_refused_naming_the_key(attributes, names):
    with pytest.raises(AttributesError, match=r".*") as caught:
        attributes_check(attributes)
    assert names in str(caught.value)


def test_a_variant_is_named_by_its_family_and_its_variant_keys():
    assert variant_name("rocm", {"arch": "gfx942", "rocm": "7.1"}, ["arch"]) == "rocm-gfx942"
    assert variant_name("rocm", {"rocm": "7.1"}, ["arch"]) is None
    two = variant_name("xpu", {"os": "Windows 11", "arch": "arc"}, ["arch", "os"])
    assert two == "xpu-arc-windows-11"


def test_a_long_variant_name_stays_within_50_characters_and_apart():
    one = variant_name("rocm", {"arch": "gfx942-" + "x" * 60}, ["arch"])
    other = variant_name("rocm", {"arch": "gfx942-" + "x" * 59 + "y"}, ["arch"])
    assert len(one) <= 50 and len(other) <= 50
    assert one != other and one.startswith("rocm-gfx942-")


def test_distinct_names_keep_two_values_of_one_slug_apart():
    plus = variant_name("rocm", {"arch": "gfx90a:xnack+"}, ["arch"])
    minus = variant_name("rocm", {"arch": "gfx90a:xnack-"}, ["arch"])
    assert plus == minus == "rocm-gfx90a-xnack"
    apart = {variant_name("rocm", {"arch": a}, ["arch"], distinct=True) for a in ("a+", "a-")}
    assert len(apart) == 2 and all(n.startswith("rocm-a-") and len(n) <= 50 for n in apart)
    long = variant_name("rocm", {"arch": "x" * 80}, ["arch"], distinct=True)
    assert len(long) == 50
