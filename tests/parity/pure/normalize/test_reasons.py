"""parity.pure.normalize.reasons: noise goes, wording stays, one fingerprint per canonical text."""

import csv
import string

import pytest
import yaml
from hypothesis import assume, given
from hypothesis import strategies as st

from parity.pure.normalize import (
    CanonicalReason,
    canonical_reason,
    expected_failure_reason,
    is_expected_failure,
)
from parity.pure.normalize.reasons import failure_line, reason_fingerprint
from tests.conftest import FIXTURES_DIR
from tests.shared_data import PYTORCH_XLA_DIR, needs_pytorch_xla

FIXTURES = FIXTURES_DIR / "normalize"
CASES = yaml.safe_load((FIXTURES / "reason_cases.yaml").read_text(encoding="utf-8"))


def text_of(message: str, kind: str = "skip") -> str | None:
    reason = canonical_reason(message, kind=kind)
    return None if reason is None else reason.text


@pytest.mark.parametrize("case", CASES["skip"], ids=lambda case: case["message"][:40])
def test_skip_reason_table(case: dict[str, str]) -> None:
    assert text_of(case["message"]) == case["text"]


@pytest.mark.parametrize("case", CASES["failure"], ids=lambda case: case["message"][:40])
def test_failure_reason_table(case: dict[str, str]) -> None:
    assert text_of(case["message"], "failure") == case["text"]


@pytest.mark.parametrize("message", ["", "   ", "\n\t\n"])
def test_empty_is_none(message: str) -> None:
    assert canonical_reason(message) is None
    assert canonical_reason(message, kind="failure") is None


def test_fingerprint_is_pinned_sha1_of_the_text_for_either_kind() -> None:
    # Stored fingerprints identify reasons forever: this value must never change.
    expected = CanonicalReason(
        text="This test only works on TPU.",
        fingerprint="ab7e67401f703cefc00ff7e30ea9d6df5e8aba1d",
    )
    assert canonical_reason("This test only works on TPU.") == expected
    assert canonical_reason("This test only works on TPU.", kind="failure") == expected
    assert reason_fingerprint(expected.text) == expected.fingerprint


def test_noise_only_differences_share_a_fingerprint() -> None:
    pairs = [
        ("/a/b/test_x.py:12: MPI is not available", "/c/test_x.py:730: MPI is not available"),
        ("object at 0x7f3a12bc45d0 died", "object at 0x55d1c0ffee00 died"),
        ("took 1.2s on pid 100", "took 33s on pid 4242"),
        ("Mismatched elements: 3 / 100 (3.0%)", "Mismatched elements: 7 / 64 (10.9%)"),
    ]
    for first, second in pairs:
        assert canonical_reason(first).fingerprint == canonical_reason(second).fingerprint


def test_failure_line_keeps_one_line_messages() -> None:
    assert failure_line("E E x") == "E E x"
    assert failure_line("  only line  \n\n") == "  only line  "


# --- properties -----------------------------------------------------------------------------

KINDS = st.sampled_from(["skip", "failure"])
PY_PATH = st.from_regex(r"/?([a-z_]{1,8}/){0,3}[a-z_]{1,8}\.py", fullmatch=True)
LINE = st.integers(min_value=1, max_value=99_999)
WORD = st.text(alphabet=string.ascii_letters, min_size=1, max_size=10)
PUNCT_WORD = st.text(alphabet=string.ascii_letters + ".,!?()-", min_size=1, max_size=10)
SPACE = st.text(alphabet=" \t\n\r", min_size=1, max_size=4)


@given(st.text(), KINDS)
def test_idempotent(message: str, kind: str) -> None:
    reason = canonical_reason(message, kind=kind)
    if reason is not None:
        assert canonical_reason(reason.text, kind=kind) == reason


@given(st.text(), PY_PATH, LINE)
def test_invariant_under_a_location_prefix(message: str, path: str, line: int) -> None:
    reason = canonical_reason(message)
    assume(reason is not None)
    assert canonical_reason(f"{path}:{line}: {message}") == reason


@given(st.text(), PY_PATH, LINE, LINE)
def test_invariant_under_line_numbers(message: str, path: str, first: int, second: int) -> None:
    assume(canonical_reason(message) is not None)
    for template in ("{m} (at {p}:{n})", "{m}, line {n}", '{m}\n  File "{p}", line {n}'):
        one = canonical_reason(template.format(m=message, p=path, n=first))
        two = canonical_reason(template.format(m=message, p=path, n=second))
        assert one == two


@given(st.text(), st.sampled_from(["Skipped: ", "skipped: ", "SKIPPED [3] ", "skip: "]))
def test_invariant_under_a_skipped_prefix(message: str, prefix: str) -> None:
    reason = canonical_reason(message)
    assume(reason is not None)
    assert canonical_reason(prefix + message) == reason


@given(st.lists(st.tuples(PUNCT_WORD, SPACE), min_size=1, max_size=8), SPACE, SPACE)
def test_invariant_under_whitespace(words: list[tuple[str, str]], lead: str, tail: str) -> None:
    spaced = lead + "".join(word + space for word, space in words) + tail
    single = " ".join(word for word, _ in words)
    assert canonical_reason(spaced) == canonical_reason(single)
    assert canonical_reason(single).text == single


@given(st.lists(WORD, min_size=1, max_size=8), st.lists(WORD, min_size=1, max_size=8), KINDS)
def test_different_words_never_merge(first: list[str], second: list[str], kind: str) -> None:
    assume(first != second)
    one = canonical_reason(" ".join(first), kind=kind)
    two = canonical_reason(" ".join(second), kind=kind)
    assert one.fingerprint != two.fingerprint


@given(st.lists(PUNCT_WORD, min_size=1, max_size=8), st.lists(PUNCT_WORD, min_size=1, max_size=8))
def test_different_punctuated_words_never_merge(first: list[str], second: list[str]) -> None:
    assume(first != second)
    assert canonical_reason(" ".join(first)) != canonical_reason(" ".join(second))


# --- real reasons -----------------------------------------------------------------------------


@needs_pytorch_xla
def test_real_skip_reasons_keep_their_wording_and_stay_distinct() -> None:
    with (PYTORCH_XLA_DIR / "skips.tsv").open(newline="", encoding="utf-8") as handle:
        reasons = {
            " ".join(row["reason"].split()) for row in csv.DictReader(handle, delimiter="\t")
        }
    reasons.discard("")
    fingerprints = set()
    for reason in reasons:
        canonical = canonical_reason(reason)
        assert canonical.text == reason  # people's reasons carry no noise
        fingerprints.add(canonical.fingerprint)
    assert len(fingerprints) == len(reasons) > 70


# --- expected failures ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "xfail", "says"),
    [
        ("expected failure", True, ""),
        ("expected failure: XLA lowers it wrong", True, "XLA lowers it wrong"),
        (  # xmlrunner's, with the traceback object's address scrubbed
            "expected failure: (<class 'AssertionError'>, AssertionError('x'), "
            "<traceback object at 0x100c125c0>)",
            True,
            "(<class 'AssertionError'>, AssertionError('x'), <traceback object at 0x<hex>>)",
        ),
        ("expected failures are fine here", False, None),
        ("Skipped: not on TPU", False, None),
    ],
)
def test_expected_failures_keep_their_wording_and_are_told_apart(
    message: str, xfail: bool, says: str | None
) -> None:
    text = text_of(message)

    assert is_expected_failure(text) is xfail
    if xfail:
        assert expected_failure_reason(text) == says
