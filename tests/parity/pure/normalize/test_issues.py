"""parity.pure.normalize.issues: every real reference found, no dtype or standard taken for one."""

import csv

import pytest

from parity.pure.normalize import IssueRef, canonical_reason, extract_issue_refs
from tests.shared_data import PYTORCH_XLA_DIR, needs_pytorch_xla

XLA_ISSUES = "https://github.com/pytorch/xla/issues/{number}"


def refs(text: str, template: str = XLA_ISSUES, **kw: str) -> list[IssueRef]:
    return extract_issue_refs(text, issue_url_template=template, **kw)


def skip_rows() -> list[dict[str, str]]:
    with (PYTORCH_XLA_DIR / "skips.tsv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def cited(issue_ref: str, found: list[IssueRef]) -> bool:
    """The issue_ref column holds a URL, an owner/repo#N or a bare #N."""
    return issue_ref in {ref.url for ref in found} | {ref.key for ref in found}


@needs_pytorch_xla
def test_every_cited_issue_of_skips_tsv_is_found() -> None:
    rows = [row for row in skip_rows() if row["issue_ref"]]
    assert len(rows) == 21
    in_comment_only = 0
    for row in rows:
        if cited(row["issue_ref"], refs(row["reason"])):
            # The pipeline links issues from the canonical text: the reference must survive it.
            assert cited(row["issue_ref"], refs(canonical_reason(row["reason"]).text))
        else:
            # test_mat_mul_precision's TODO comment carries the issue, not the skip reason.
            assert cited(row["issue_ref"], refs(row["comment_above"])), row
            in_comment_only += 1
    assert in_comment_only == 2


@needs_pytorch_xla
def test_uncited_skip_reasons_yield_no_reference() -> None:
    for row in skip_rows():
        if not row["issue_ref"]:
            assert refs(row["reason"]) == [], row["reason"]


GH = "https://github.com/"
KINDS = [
    ("See https://github.com/pytorch/xla/issues/4298 for more detail.",
     "github", "pytorch/xla#4298", GH + "pytorch/xla/issues/4298"),
    ("Reason: https://github.com/pytorch/xla/pull/7864#issuecomment-2294034008.",
     "github", "pytorch/xla#7864", GH + "pytorch/xla/pull/7864"),
    ("github.com/PyTorch/XLA/pulls/12", "github", "pytorch/xla#12", GH + "pytorch/xla/pull/12"),
    ("wrong after functionalization. pytorch/pytorch#91199",
     "github", "pytorch/pytorch#91199", GH + "pytorch/pytorch/issues/91199"),
    ("single-device GPU is pending #6023", "project", "#6023", GH + "pytorch/xla/issues/6023"),
    ("https://gitlab.com/g/p/-/issues/12", "gitlab", "g/p#12", "https://gitlab.com/g/p/-/issues/12"),
    ("https://gitlab.example.com/a/b/c/-/merge_requests/5",
     "gitlab", "gitlab.example.com/a/b/c!5", "https://gitlab.example.com/a/b/c/-/merge_requests/5"),
    ("flaky, b/123456789",
     "buganizer", "b/123456789", "https://issuetracker.google.com/issues/123456789"),
    ("see http://b/2345678", "buganizer", "b/2345678", "https://issuetracker.google.com/issues/2345678"),
    ("https://issuetracker.google.com/issues/99999",
     "buganizer", "b/99999", "https://issuetracker.google.com/issues/99999"),
    ("tracked in XLA-123.", "jira", "XLA-123", ""),
    ("see https://jira.example.com/browse/NEUR-42", "jira", "NEUR-42", ""),
]  # fmt: skip


@pytest.mark.parametrize(("text", "kind", "key", "url"), KINDS)
def test_reference_kinds(text: str, kind: str, key: str, url: str) -> None:
    assert refs(text) == [IssueRef(kind, key, url)]


@pytest.mark.parametrize(
    "text",
    [
        "XLA does not support dtype torch.float32 or bfloat16",
        "This test only works on TPUv4+ and TPUv5p, v4-8 slices",
        "UTF-8, UTF-16, SHA-256, SHA-1, ISO-8601, x86-64, X86-64, GPT-4, PEP-8, TPU-4, FP-8",
        "issue#3, (#1), #0123, &#123; and page.html#1234",
        "https://example.com/docs#1234 and https://example.com/a/b/123456",
        "file a/b/123456 and kb/123456 and b/1234",
        "CVE-2021-44228",
        "owner/repo#",
        "",
    ],
)
def test_no_false_positives(text: str) -> None:
    assert refs(text) == []


def test_deduplicated_in_order_of_appearance() -> None:
    text = (
        "b/123456: pytorch/xla#4298, see #12 and https://github.com/pytorch/xla/issues/4298 "
        "and b/123456 again, then XLA-9"
    )
    assert [ref.key for ref in refs(text)] == ["b/123456", "pytorch/xla#4298", "#12", "XLA-9"]


def test_bare_number_without_a_template_has_no_url() -> None:
    assert refs("pending #6023", template="") == [IssueRef("project", "#6023", "")]
    assert refs("pending #6023", template="https://no-placeholder") == [
        IssueRef("project", "#6023", "")
    ]


def test_jira_url_template() -> None:
    found = refs("XLA-123", jira_url_template="https://jira.example.com/browse/{key}")
    assert found == [IssueRef("jira", "XLA-123", "https://jira.example.com/browse/XLA-123")]
