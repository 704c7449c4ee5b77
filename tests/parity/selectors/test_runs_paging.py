"""The runs list's pages (``selectors.runs_page``): walked from the first to the last, for each
sort and with a backend's filter, they hold every run once, in the sort's order; runs CI
started at the same instant included. And the page's links keep the filter and the sort."""

import datetime
import re

import pytest

from parity import selectors
from parity.models import Project, Run

START = datetime.datetime(2026, 5, 1, tzinfo=datetime.UTC)


@pytest.fixture
def many_runs(project) -> Project:
    """30 runs a backend, every third started at the same instant as the one before it."""
    for b, backend in enumerate(project.backends.order_by("name")):
        at = START
        for n in range(30):
            if n % 3:
                at += datetime.timedelta(minutes=7 + b)
            Run.objects.create(
                project=project,
                backend=backend,
                key=f"{backend.name}-{n}",
                commit=f"{(n * 7 + b) % 11:040x}",
                branch="main",
                complete=True,
                started_at=at,
            )
    return project


def walked(project: Project, **query) -> list[int]:
    found, page = [], 1
    while True:
        result = selectors.runs_page(project=project, page=page, per_page=7, **query)
        found += [row.run.pk for row in result.rows]
        if not result.has_next:
            return found
        assert len(result.rows) == 7
        page += 1


def expected(project: Project, sort: str, backend: str | None = None) -> list[int]:
    runs = Run.objects.filter(project=project).select_related("backend")
    if backend:
        runs = runs.filter(backend__name=backend)
    key = {
        "-ran": lambda r: (-r.started_at.timestamp(), -r.pk),
        "ran": lambda r: (r.started_at, r.pk),
        "backend": lambda r: (r.backend.name, -r.started_at.timestamp(), -r.pk),
        "commit": lambda r: (r.commit, -r.started_at.timestamp(), -r.pk),
    }[sort]
    return [r.pk for r in sorted(runs, key=key)]


@pytest.mark.parametrize("sort", ["-ran", "ran", "backend", "commit"])
def test_the_pages_hold_every_run_once_in_order(many_runs, sort):
    pages = walked(many_runs, sort=sort)
    assert len(pages) == len(set(pages)) == Run.objects.count() == 4 * 30
    if sort in ("-ran", "ran"):
        assert pages == expected(many_runs, sort)
    else:  # ties within a column: in the column's order, every run once
        column = {"backend": lambda r: r.backend.name, "commit": lambda r: r.commit}[sort]
        runs = Run.objects.select_related("backend").in_bulk(pages)
        values = [column(runs[pk]) for pk in pages]
        assert values == sorted(values)


def test_a_backends_pages_hold_its_runs_alone(many_runs):
    pages = walked(many_runs, backend="tpu")
    assert pages == expected(many_runs, "-ran", backend="tpu") and len(pages) == 30


def _pager(client, url: str, **query) -> dict[str, str]:
    page = client.get(url, query).content.decode()
    found = re.findall(r'<a href="([^"]+)">(‹ newer|older ›)</a>', page)
    return {label: href.replace("&amp;", "&") for href, label in found}


def test_newer_and_older_keep_the_filter_and_the_sort(client, many_runs):
    """gpu's 30 runs at 25 a page: the first links the older page, the second the newer."""
    url = f"/p/{many_runs.slug}/runs/"
    first = _pager(client, url, backend="gpu", sort="ran")
    second = _pager(client, url, backend="gpu", sort="ran", page=2)
    assert set(first) == {"older ›"} and set(second) == {"‹ newer"}
    for href, number in ((first["older ›"], "2"), (second["‹ newer"], "1")):
        assert f"page={number}" in href and "backend=gpu" in href and "sort=ran" in href
