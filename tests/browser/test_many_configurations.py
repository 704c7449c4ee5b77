"""The heatmap at PyTorch core's width, twenty configurations, in Chromium at a desktop's and a
phone's width: a file's name keeps a readable width instead of breaking a character a line, the
table fits the window, and on a phone, where a file's cells wrap onto several lines, each cell
stays under its configuration's name."""

import pytest
from playwright.sync_api import expect
from rest_framework.test import APIClient

from parity.services.projects import project_create, upload_token_create
from tests.browser.conftest import SCREENSHOTS, no_chromium
from tests.browser.layout import page_overflow
from tests.parity.conftest import run_xml
from tests.uploads import post_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "core"
CONFIGS = [f"linux-cuda12.{n}-py3.{10 + n % 3}" for n in range(19)]
FILES = [
    f"test/distributed/_composable/fsdp/test_fully_shard_{name}.py"
    for name in ("state_dict", "training", "mixed_precision", "compile", "memory", "overlap")
]


def _cases(backend_index: int) -> dict:
    """Each file's five tests; configuration n fails the first n % 5 of every file and skips
    the last file, so cells differ from column to column."""
    cases = {}
    for file_index, file in enumerate(FILES):
        if backend_index and file_index == len(FILES) - 1:
            continue
        for test in range(5):
            failed = backend_index and test < backend_index % 5
            cases[f"{file}::TestFullyShard::test_{test}"] = (
                ("failed", "mismatch") if failed else "passed"
            )
    return cases


@pytest.fixture(scope="module")
def core(site, django_db_blocker):
    with django_db_blocker.unblock():
        project = project_create(
            slug=SLUG, backends=["cpu", *CONFIGS], reference="cpu", visibility="public"
        )
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}")
        for index, backend in enumerate(["cpu", *CONFIGS]):
            reply = post_upload(api, (f"{backend}.xml", run_xml(_cases(index))), project=SLUG,
                                backend=backend, commit="d" * 40, run=f"{backend}-d",
                                timestamp="2026-06-01T10:00:00Z", complete="true")  # fmt: skip
            assert reply.status_code == 202, reply.content
    return project


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_twenty_configurations_fit_and_each_cell_stays_under_its_name(page, core):
    page.goto(f"/p/{SLUG}/")
    heads = page.locator("#heatmap thead th.col")
    expect(heads).to_have_count(20)
    row = page.locator(f'#heatmap tr[data-name="{FILES[0]}"]')
    expect(row.locator("td.cell")).to_have_count(20)

    overflow = page_overflow(page)
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"
    name = row.locator("th[scope=row]").bounding_box()
    if page.viewport_size["width"] > 700:
        # 13rem: "test/distributed/_composable/" and the rest on two lines, not 60 of one letter
        assert name["width"] >= 200, name
    for head, cell in zip(heads.all(), row.locator("td.cell").all(), strict=True):
        column, box = head.bounding_box(), cell.bounding_box()
        middle = box["x"] + box["width"] / 2
        assert column["x"] <= middle <= column["x"] + column["width"], (
            f"{head.inner_text()}'s cell is not under it: {box} against {column}"
        )
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(
        path=SCREENSHOTS / f"many-configurations-{page.viewport_size['width']}.png",
        full_page=True,
    )


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
@pytest.mark.parametrize(
    "path",
    ["runs/", "exemptions/", "skip-reasons/", f"file/?path={FILES[0]}", "matrix/", "gaps/?open=1"],
)
def test_pages_with_a_column_or_a_choice_per_configuration_do_not_scroll_sideways(page, core, path):
    """The backend choices wrap onto more lines, and a table with a column per configuration
    scrolls in its own box, so the page itself never scrolls sideways."""
    page.goto(f"/p/{SLUG}/{path}")
    overflow = page_overflow(page)
    assert overflow <= 0, f"{path} scrolls sideways by {overflow}px"
