"""Other runners' per-backend names, from real reports of the shared JUnit corpus.

WebdriverIO's JUnit reporter starts every classname with the browser's capabilities
(``CucumberJUnitReport-chrome.123_0_6312_59.windows.<feature>``), so one feature run on two
browsers is two sets of tests. The corpus holds three real reports of one chrome-on-Windows
project (test-results/parser's fixtures); the same features on another browser differ only in
that capability, which the reporter also writes as the suite's ``capabilities`` property. The
second browser's report is the real one with that string replaced, in memory: nothing from the
corpus is copied into the repository. Uploaded through the API, the plain rules keep the two
browsers apart and the ``webdriverio`` preset joins every test.
"""

import re

import pytest

from parity.models import Gap, Outcome, Result, TestCase
from parity.pure.normalize.presets import preset_rules
from parity.services.projects import project_create, project_rules_update, upload_token_create
from tests.shared_data import CORPUS_DIR, needs_corpus
from tests.uploads import post_upload

WDIO = [
    "test-results-reporter-parser/junit/wdio__results-0-0.xml",
    "test-results-reporter-parser/junit/wdio__results-0-1.xml",
    "test-results-reporter-parser/junit/wdio-failures-errors.xml",
]
FIREFOX = "firefox.124_0.linux"

pytestmark = [needs_corpus, pytest.mark.django_db]


def _reports() -> tuple[list[tuple[str, bytes]], list[tuple[str, bytes]]]:
    chrome, firefox = [], []
    for path in WDIO:
        data = (CORPUS_DIR / path).read_bytes()
        capabilities = re.search(rb'name="capabilities" value="([^"]+)"', data)[1]
        assert capabilities == b"chrome.123_0_6312_59.windows"  # as its reporter wrote it
        name = path.rsplit("/", 1)[-1]
        chrome.append((name, data))
        firefox.append((name, data.replace(capabilities, FIREFOX.encode())))
    return chrome, firefox


@pytest.fixture
def browsers(api_for, django_capture_on_commit_callbacks):
    def upload(preset: str):
        project = project_create(
            slug=f"wdio-{preset}", backends=["chrome", "firefox"], reference="chrome"
        )
        project_rules_update(project=project, rules=preset_rules(preset))
        api = api_for(project)
        for backend, files in zip(("chrome", "firefox"), _reports(), strict=True):
            with django_capture_on_commit_callbacks(execute=True):
                response = post_upload(
                    api, *files, project=project.slug, backend=backend, complete="true"
                )
            assert response.status_code == 202, response.content
        return project

    return upload


@pytest.fixture
def api_for():
    from rest_framework.test import APIClient

    def client(project):
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}")
        return api

    return client


def _backends_by_test(project) -> dict[str, set[str]]:
    by_test: dict[str, set[str]] = {}
    rows = Result.objects.filter(run__project=project)
    for key, backend in rows.values_list("test__key", "run__backend__name"):
        by_test.setdefault(key, set()).add(backend)
    return by_test


def test_the_webdriverio_preset_joins_two_browsers_runs(browsers):
    project = browsers("webdriverio")

    by_test = _backends_by_test(project)
    assert len(by_test) == 13  # 4 + 5 + 4 scenarios, each once
    assert all(backends == {"chrome", "firefox"} for backends in by_test.values())
    assert "CES to WD::User deletes Cloud extract source" in by_test
    # The chrome-failing scenarios fail on firefox too: no test is missing on either browser.
    assert not Gap.objects.filter(project=project, is_open=True, state="missing").exists()


def test_without_it_each_browser_has_tests_of_its_own(browsers):
    project = browsers("plain")

    by_test = _backends_by_test(project)
    assert len(by_test) == 26
    assert all(len(backends) == 1 for backends in by_test.values())
    assert TestCase.objects.filter(project=project, key__contains=FIREFOX).count() == 13
    # Every scenario chrome passes reads missing on firefox: the browsers share no test.
    passing = Result.objects.filter(run__backend__name="chrome", outcome=Outcome.PASSED)
    missing = Gap.objects.filter(project=project, is_open=True, state="missing")
    assert missing.count() == passing.filter(run__project=project).count() > 0
