"""Issue references in reason text: GitHub/GitLab URLs, ``owner/repo#N``, bare ``#N``,
Buganizer ``b/N`` and JIRA keys.

Decisions:

* Keys are stable identities: ``pytorch/xla#4298`` for a GitHub issue or PR (one numbering;
  owner/repo lower-cased as GitHub treats them), ``group/project#12`` / ``group/project!5`` for
  GitLab issues / merge requests (host kept unless gitlab.com), ``b/123456``, ``XLA-123``, and
  ``#6023`` for a bare number, whose url comes from the project's ``issue_url_template``
  (``{number}``); without a template the url is "".
* False positives are avoided by shape, not guessed: ``#N`` needs two or more digits, no
  leading zero and no word or ``&`` before it (``issue#3``, ``&#123;``); ``b/N`` needs five or
  more digits and no path before it; a JIRA key needs two leading capitals and is refused for a
  list of common standards/dtype names (``UTF-8``, ``SHA-256``, ``ISO-8601``, ``X86-64``…);
  lower-case words such as ``float32``, ``TPUv4``, ``x86-64`` never match. JIRA urls are ""
  unless a ``jira_url_template`` (``{key}``) is given.
* Inside a URL only the URL itself (an issue/PR/Buganizer link) or a JIRA key (a browse link)
  counts; ``#123``, ``owner/repo#1`` or ``b/…`` inside some other link do not.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass

from parity.pure.web_urls import web_url_or_empty


@dataclass(frozen=True)
class IssueRef:
    kind: str
    key: str
    url: str


_GITHUB_URL = re.compile(
    r"(?:https?://)?(?:www\.)?github\.com/([\w.-]+)/([\w.-]+)/(issues|pulls?)/(\d+)", re.I
)
_GITLAB_URL = re.compile(
    r"https?://([\w.-]+(?::\d+)?)/((?:[\w.-]+/)*[\w.-]+)/-/(issues|merge_requests)/(\d+)", re.I
)
_BUGANIZER_URL = re.compile(r"(?:https?://)?issuetracker\.google\.com/issues/(\d+)", re.I)
_BUGANIZER = re.compile(r"(?:https?://b/|(?<![\w/.-])b/)(\d{5,})\b")
_REPO_REF = re.compile(r"(?<![\w./-])([A-Za-z0-9][\w.-]*)/([\w.-]+)#(\d+)\b")
_BARE = re.compile(r"(?<![\w&#/])#([1-9]\d+)\b")
_JIRA = re.compile(r"(?<![\w.-])([A-Z]{2}[A-Z0-9]*)-([1-9]\d{0,6})(?![\w-])")
_ANY_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://\S+")

# Upper-case words followed by a number that are standards, encodings or model names.
_NOT_JIRA = frozenset({
    "AES", "ARM", "BERT", "BF", "BLAKE", "CP", "CRC", "CVE", "CWE", "DDR", "DES", "EC", "FIPS",
    "FP", "GCC", "GPT", "GPU", "HTTP", "IEC", "IEEE", "INT", "IP", "IPV", "ISO", "LLAMA", "MD",
    "NCCL", "PCI", "PCIE", "PEP", "RFC", "RSA", "SHA", "SM", "SSL", "TF", "TLS", "TPU", "UCS",
    "UINT", "USB", "UTF", "VGG", "WIN", "X86",
})  # fmt: skip


def extract_issue_refs(
    text: str, *, issue_url_template: str = "", jira_url_template: str = ""
) -> list[IssueRef]:
    """Issue references in order of first appearance, one per key."""
    if not text:
        return []
    urls = [m.span() for m in _ANY_URL.finditer(text)]
    taken: list[tuple[int, int, IssueRef]] = []
    for start, end, ref, in_url_ok in _candidates(text, issue_url_template, jira_url_template):
        overlaps = any(s < end and start < e for s, e, _ in taken)
        inside_url = not in_url_ok and any(s <= start < e for s, e in urls)
        if not overlaps and not inside_url:
            taken.append((start, end, ref))
    refs: dict[str, IssueRef] = {}
    for _, _, ref in sorted(taken, key=lambda item: item[0]):
        refs.setdefault(ref.key, ref)
    return list(refs.values())


_Candidate = tuple[int, int, IssueRef, bool]  # span, ref, may it sit inside another URL


def _candidates(text: str, issue_template: str, jira_template: str) -> Iterator[_Candidate]:
    """Most specific shapes first, so a full URL claims its span before the shorter forms in it."""
    for m in _GITHUB_URL.finditer(text):
        yield *m.span(), _github(m), True
    for m in _GITLAB_URL.finditer(text):
        yield *m.span(), _gitlab(m), True
    for m in _BUGANIZER_URL.finditer(text):
        yield *m.span(), _buganizer(m.group(1)), True
    for m in _BUGANIZER.finditer(text):
        yield *m.span(), _buganizer(m.group(1)), m.group(0).startswith("http")
    for m in _REPO_REF.finditer(text):
        owner, repo, number = m.group(1).lower(), m.group(2).lower(), m.group(3)
        url = f"https://github.com/{owner}/{repo}/issues/{number}"
        yield *m.span(), IssueRef("github", f"{owner}/{repo}#{number}", url), False
    for m in _JIRA.finditer(text):
        key = m.group(0)
        if m.group(1) not in _NOT_JIRA:  # a JIRA browse URL is a fine place for a key
            yield *m.span(), IssueRef("jira", key, _fill(jira_template, "{key}", key)), True
    for m in _BARE.finditer(text):
        key, url = f"#{m.group(1)}", _fill(issue_template, "{number}", m.group(1))
        yield *m.span(), IssueRef("project", key, url), False


def _fill(template: str, placeholder: str, value: str) -> str:
    """A template without its placeholder would give every reference the same url: none; nor
    does one that does not make an http(s) URL (``parity.pure.web_urls``)."""
    return web_url_or_empty(template.replace(placeholder, value)) if placeholder in template else ""


def _github(m: re.Match[str]) -> IssueRef:
    owner, repo, what, number = m.group(1).lower(), m.group(2).lower(), m.group(3), m.group(4)
    path = "issues" if what.lower() == "issues" else "pull"
    url = f"https://github.com/{owner}/{repo}/{path}/{number}"
    return IssueRef("github", f"{owner}/{repo}#{number}", url)


def _gitlab(m: re.Match[str]) -> IssueRef:
    host, project, what, number = m.group(1).lower(), m.group(2), m.group(3).lower(), m.group(4)
    sigil = "#" if what == "issues" else "!"
    scope = project if host == "gitlab.com" else f"{host}/{project}"
    url = f"https://{host}/{project}/-/{what}/{number}"
    return IssueRef("gitlab", f"{scope}{sigil}{number}", url)


def _buganizer(number: str) -> IssueRef:
    return IssueRef("buganizer", f"b/{number}", f"https://issuetracker.google.com/issues/{number}")
