"""The digest's compare views: each view of the project with red tests (regressed or extreme,
as its kept judgement says) is a line with its counts and a link to its report; a view with
none is left out, and so is a project with no view."""

import pytest
from django.conf import settings
from django.utils import timezone

from parity.digest.render import digest_render
from parity.models import Backend
from parity.pure.compare import RED, CompareState
from parity.pure.weeks import Week
from parity.result_reads import compare_report
from parity.selectors.digest import digest_content
from parity.services.compare_views import CompareRequest, compare_view_create
from tests.parity.compare_scenario import compare_upload, small_history

pytestmark = pytest.mark.django_db


def _view(project, name: str, sample: str, basis: str, **rules):
    return compare_view_create(
        project=project,
        request=CompareRequest(
            name=name,
            sample=Backend.objects.get(project=project, name=sample),
            basis=Backend.objects.get(project=project, name=basis),
            **rules,
        ),
    )


def test_a_view_with_red_tests_is_a_digest_line(xla, ingest, eager_errors_propagate):
    compare_upload(ingest, small_history())
    view = _view(xla, "tpu-vs-cpu", "tpu", "cpu")
    # The truth: the view's report computed from the window's results, not its kept rows.
    states = [row.state for row in compare_report(view=view).rows]
    red = sum(state in RED for state in states)
    extreme = states.count(CompareState.EXTREME)
    assert red, "the scenario's tpu regresses against cpu"
    content = digest_content(project=xla, week=Week.of(timezone.now()))
    assert [h.view.name for h in content.compare_views] == ["tpu-vs-cpu"]
    rendered = digest_render(content)
    line = (
        f"tpu-vs-cpu: tpu vs cpu over {view.days} days, {red} test{'s' if red != 1 else ''} "
        f"regressed ({extreme} extreme)"
    )
    url = f"{settings.SITE_URL}/p/pytorch-xla/compare/tpu-vs-cpu/"
    assert "COMPARE VIEWS" in rendered.text and line in rendered.text, rendered.text
    assert url in rendered.text and f'href="{url}"' in rendered.html
    assert "1 compare view with regressions" in rendered.subject


def test_a_view_with_no_red_test_is_left_out(xla, ingest, eager_errors_propagate):
    compare_upload(ingest, small_history())
    # A regression needs more failures than the window holds runs: none is red.
    view = _view(xla, "tpu-vs-cpu", "tpu", "cpu", min_failures=1000)
    assert not any(row.state in RED for row in compare_report(view=view).rows)
    content = digest_content(project=xla, week=Week.of(timezone.now()))
    assert content.compare_views == []
    assert "COMPARE VIEWS" not in digest_render(content).text
