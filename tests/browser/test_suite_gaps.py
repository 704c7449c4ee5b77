"""A suite never run on a backend as the gaps page shows it, in Chromium at 1400 and 400 px
(docs/suites.md, "A suite that never ran"): the reference runs ``main`` and ``torch_ops``
(2,000 tests); tpu runs ``main`` only. The page has one row for torch_ops on tpu with its count,
lists none of its tests one by one, and its link lists them all. Screenshots:
``suite-gaps-<width>.png``."""

import datetime

import pytest
from django.utils import timezone
from playwright.sync_api import expect
from rest_framework.test import APIClient

from parity.services.projects import project_create, upload_token_create
from tests.browser.conftest import SCREENSHOTS, no_chromium
from tests.browser.layout import page_overflow
from tests.junit_builder import Case, junit_xml
from tests.uploads import post_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "suite-gaps"
OPS = 2000


def _xml(tests, failing=()) -> tuple[str, bytes]:
    cases = [
        Case(cls, name, "failed" if name in failing else "passed", "boom", file=file)
        for file, cls, name in tests
    ]
    return ("TEST-run.xml", junit_xml(*cases))


@pytest.fixture(scope="module")
def unrun(site, django_db_blocker):
    main = [("test/main.py", "TestMain", f"test_{i:02}") for i in range(10)]
    ops = [(f"test/ops/test_op{i // 100:02}.py", "TestOps", f"test_{i:04}") for i in range(OPS)]
    day = (timezone.now() - datetime.timedelta(hours=2)).isoformat()
    with django_db_blocker.unblock():
        project = project_create(
            slug=SLUG, backends=["cpu", "tpu"], reference="cpu", visibility="public"
        )
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}")
        for backend, suite, tests, complete in (
            ("cpu", "main", main, "false"),
            ("cpu", "torch_ops", ops, "true"),
            ("tpu", "main", main, "true"),
        ):
            reply = post_upload(
                api,
                _xml(tests, failing={"test_03"} if backend == "tpu" else ()),
                project=SLUG,
                backend=backend,
                commit="b" * 40,
                suite=suite,
                run=f"nightly-{backend}",
                timestamp=day,
                complete=complete,
            )
            assert reply.status_code == 202, reply.content
    return project


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_a_suite_never_run_is_one_row_and_lists_its_tests_on_demand(page, unrun):
    page.goto(f"/p/{SLUG}/gaps/")
    rows = page.locator("#unrun-suites li")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("suite torch_ops never ran on tpu: 2,000 tests missing")
    expect(page.locator("#new-gaps tbody tr")).to_have_count(1)  # tpu's failure, nothing folded
    assert page_overflow(page) <= 0
    width = page.viewport_size["width"]
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"suite-gaps-{width}.png", full_page=True)

    rows.first.locator("a.suite-tests-link").click()
    expect(page.locator("#suite-filter")).to_contain_text("torch_ops")
    expect(page.locator("#new-gaps h2 .badge")).to_have_text("2,000")
    expect(page.locator("#unrun-suites")).to_have_count(0)
    assert page_overflow(page) <= 0
