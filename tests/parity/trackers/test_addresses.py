"""Which tracker an issue URL names, the repository a project files issues in, API URLs."""

import pytest

from parity.trackers import IssueAddress, RepoAddress, api_url, issue_address, repo_address


@pytest.mark.parametrize(
    ("url", "address"),
    [
        (
            "https://github.com/pytorch/XLA/issues/9017",
            IssueAddress("github", "github.com", "pytorch/xla", 9017),
        ),
        (
            "https://github.com/pytorch/pytorch/pull/12#discussion",
            IssueAddress("github", "github.com", "pytorch/pytorch", 12, "pull"),
        ),
        (
            "https://gitlab.com/group/sub/project/-/issues/3",
            IssueAddress("gitlab", "gitlab.com", "group/sub/project", 3),
        ),
        (
            "https://git.example.org:8443/tpu/xla/-/merge_requests/5",
            IssueAddress("gitlab", "git.example.org:8443", "tpu/xla", 5, "merge_request"),
        ),
        ("https://issuetracker.google.com/issues/123456", None),  # no adapter
        ("https://ghe.example.com/org/repo/issues/1", None),  # not configured as GitHub
        ("https://github.com/pytorch/xla/blob/master/README.md", None),
        ("b/123456", None),
    ],
)
def test_an_issue_url_names_its_tracker(url, address):
    assert issue_address(url) == address


def test_a_github_enterprise_host_is_github_once_given_an_api_url(settings):
    settings.PARITY_TRACKER_API_URLS = {"ghe.example.com": "https://ghe.example.com/api/v3"}

    assert issue_address("https://ghe.example.com/org/repo/issues/1") == IssueAddress(
        "github", "ghe.example.com", "org/repo", 1
    )


def test_a_project_files_issues_in_the_repository_of_its_issue_url_template():
    assert repo_address("https://github.com/pytorch/xla/issues/{number}") == RepoAddress(
        "github", "github.com", "pytorch/xla"
    )
    assert repo_address("https://gitlab.example.com/tpu/xla/-/issues/{number}") == RepoAddress(
        "gitlab", "gitlab.example.com", "tpu/xla"
    )
    assert repo_address("https://b.corp/issue?id={number}") is None
    assert repo_address("") is None


def test_api_urls_default_to_each_trackers_own(settings):
    settings.PARITY_TRACKER_API_URLS = {"gitlab.example.com": "http://127.0.0.1:1/api/v4"}

    assert api_url("github", "github.com") == "https://api.github.com"
    assert api_url("github", "ghe.example.com") == "https://ghe.example.com/api/v3"
    assert api_url("gitlab", "gitlab.com") == "https://gitlab.com/api/v4"
    assert api_url("gitlab", "gitlab.example.com") == "http://127.0.0.1:1/api/v4"
