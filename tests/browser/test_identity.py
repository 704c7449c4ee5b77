"""The identity page in Chromium: a maintainer loads a preset, previews two backends' names and
reads which join, and a planned re-key's counts, at 1400 px and at 400 px without sideways
scrolling. Screenshots: ``test_identity_page_previews_joins[desktop].png`` and ``[narrow]``."""

import pytest
from playwright.sync_api import expect

from parity.models import Project, Rekey, RekeyStatus
from parity.pure.normalize.presets import preset_rules
from tests.browser.conftest import log_in, no_chromium
from tests.browser.layout import page_overflow

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]

# As the plan task leaves a re-key (tests/ingest/test_rekey.py holds its counts to the re-key).
PLAN = {
    "runs": 4,
    "uploads": 4,
    "tests": 7,
    "changed": 6,
    "merged_into": 3,
    "merging": 6,
    "split": 0,
    "unmatched": 0,
    "examples": [
        [
            "test/dialect/test_suite.py::ComponentReflectionTest_postgresql+psycopg2_15_20"
            "::test_get_indexes",
            "test/dialect/test_suite.py::ComponentReflectionTest::test_get_indexes",
        ]
    ],
    "merges": [
        [
            "test/dialect/test_suite.py::ComponentReflectionTest::test_get_indexes",
            [
                "test/dialect/test_suite.py::ComponentReflectionTest_postgresql+psycopg2_15_20"
                "::test_get_indexes",
                "test/dialect/test_suite.py::ComponentReflectionTest_sqlite+pysqlite_3_45"
                "::test_get_indexes",
            ],
        ]
    ],
}


@pytest.fixture(scope="module")
def planned(site, django_db_blocker):
    """A planned re-key, committed where the live server reads it (outside the tests'
    transactions, as the site's data is)."""
    with django_db_blocker.unblock():
        project = Project.objects.get(slug="pytorch-xla")
        rekey = Rekey.objects.create(
            project=project,
            rules=preset_rules("sqlalchemy"),
            rules_before=project.normalization_rules,
            status=RekeyStatus.PLANNED,
            plan=PLAN,
        )
    yield rekey
    with django_db_blocker.unblock():
        rekey.delete()


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_identity_page_previews_joins(page, site, planned):
    project, rekey = planned.project, planned
    log_in(page, site)
    page.goto(f"/admin/parity/rekey/project/{project.pk}/?preset=sqlalchemy")
    expect(page.locator("textarea[name=rules]")).to_contain_text('"backend_pattern"')
    page.locator("textarea[name=left]").fill(
        page.locator("textarea[name=left]").input_value()
        + "\ntest.orm.test_query.QueryTest::test_only_on_postgres"
    )
    page.get_by_role("button", name="preview").click()

    summary = page.locator("#preview-summary")
    expect(summary).to_contain_text("With these rules: 2 join, 1 only in the first")
    expect(summary).to_contain_text("With the saved rules: 1 join.")
    joined = page.locator("#preview tbody tr").first
    expect(joined).to_contain_text(
        "test/dialect/test_suite.py::ComponentReflectionTest::test_get_multi_columns"
    )
    expect(joined.locator(".joins")).to_have_text("joins")
    expect(joined.locator("code.backend")).to_have_text(
        ["postgresql+psycopg2_15_20", "sqlite+pysqlite_3_45"]
    )
    expect(page.locator("#preview .apart")).to_have_count(1)
    expect(page.locator(f"#rekey-{rekey.pk} .plan")).to_contain_text(
        "Of 7 stored tests (4 uploads in 4 runs), 6 change key; 6 merge into 3"
    )
    expect(page.get_by_role("button", name="run")).to_be_visible()
    assert page_overflow(page) <= 0, "the identity page scrolls sideways"
