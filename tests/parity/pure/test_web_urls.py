"""The URL rule (``parity.pure.web_urls``): a stored URL is a link only when it is http(s) with a
host; every spelling a browser would read as a script is refused."""

import pytest

from parity.pure.normalize import extract_issue_refs
from parity.pure.web_urls import is_web_url, web_url_or_empty, web_url_problem

# Each a URL a browser runs as a script or that is not a web page with a host.
REFUSED = [
    "javascript:alert(document.domain)//://x",
    "JaVaScRiPt:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    " javascript:alert(1)",
    "\x01javascript:alert(1)",
    "\tjavascript:alert(1)",
    "java\nscript:alert(1)",
    "java\tscript:alert(1)",
    "javascript\x1f:alert(1)",
    "https://github.com/o/r/issues/1\x7f",
    "https://github.com/o/r/issues/1\u00a0",
    "https://github.com/o/r/issues/\u202e1",
    "https://github.com/o/r/issues/\x851",
    "ftp://example.com/issue/1",
    "https://",
    "http:///path-only",
    "//github.com/o/r/issues/1",
    "github.com/o/r/issues/1",
    "https://[::1",
    "",
]
ACCEPTED = [
    "https://github.com/pytorch/xla/issues/9017",
    "HTTPS://GitHub.com/o/r/issues/1",
    "http://tracker.example:8080/browse/XLA-12?x=1#c",
    "https://user@gitlab.example/g/p/-/issues/3",
]


@pytest.mark.parametrize("url", REFUSED)
def test_a_url_that_is_not_http_with_a_host_is_refused(url):
    assert not is_web_url(url)
    assert web_url_or_empty(url) == ""
    assert url == "" or web_url_problem(url)


@pytest.mark.parametrize("url", ACCEPTED)
def test_an_http_url_with_a_host_is_a_link(url):
    assert web_url_problem(url) == ""
    assert web_url_or_empty(url) == url


def test_a_project_template_that_makes_a_script_gives_a_bare_number_no_url():
    refs = extract_issue_refs("see #1234", issue_url_template="javascript:alert({number})")

    assert [(r.key, r.url) for r in refs] == [("#1234", "")]
    good = extract_issue_refs("see #1234", issue_url_template="https://x.example/i/{number}")
    assert [r.url for r in good] == ["https://x.example/i/1234"]
