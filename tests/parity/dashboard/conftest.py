"""What the dashboard's tests share: the scenario's runs, a page's text, clients of members of
its project by role, and a set of exemptions of every kind and target over its gaps."""

import datetime
import re
from html import unescape

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from parity.models import Membership, Reason, Role, TestCase, Triage
from parity.services.triage import TriageRequest, triage_create
from tests.parity.dashboard_scenario import CUDA, A, B, tid, upload_history

ISSUES = "https://github.com/pytorch/xla/issues/"


@pytest.fixture
def runs(upload_run) -> dict[str, int]:
    """``dashboard_scenario``'s two days, uploaded; run ids by ``<backend><day>``."""
    return upload_history(upload_run)


def text(response) -> str:
    """A page's HTML with its whitespace collapsed and its entities read, to search in."""
    assert response.status_code == 200, response.status_code
    return unescape(re.sub(r"\s+", " ", response.content.decode()))


def member(project, role: str) -> Client:
    user = get_user_model().objects.create_user(role, password="x" * 12)
    Membership.objects.create(user=user, project=project, role=role)
    client = Client()
    client.force_login(user)
    client.user = user
    return client


@pytest.fixture
def maintainer(xla) -> Client:
    return member(xla, Role.MAINTAINER)


@pytest.fixture
def viewer(xla) -> Client:
    return member(xla, Role.VIEWER)


@pytest.fixture
def exemptions(xla, maintainer) -> dict[str, Triage]:
    """Six exemptions, oldest first (call it after the runs are uploaded): a test, a reason, a
    file, a glob over test IDs, one that matches no gap (stale) and one past its expiry."""
    tomorrow = timezone.now().date() + datetime.timedelta(days=1)
    requests = {
        "test": TriageRequest(
            kind="tracked",
            test=TestCase.objects.get(project=xla, key=tid(A, 4)).pk,
            backend="tpu",
            issue_url=f"{ISSUES}501",
        ),
        "reason": TriageRequest(
            kind="intended", reason=Reason.objects.get(text=CUDA).pk, note="CUDA only"
        ),
        "file": TriageRequest(
            kind="tracked", match=B, backends=["neuron"], issue_url=f"{ISSUES}502"
        ),
        "glob": TriageRequest(
            kind="quarantine",
            match="test/ops/*.py::TestA::test_a2",
            backends=["gpu"],
            issue_url=f"{ISSUES}503",
            expires_on=tomorrow,
        ),
        "stale": TriageRequest(kind="intended", match="test/test_c.py::TestC::gone", note="gone"),
        "expired": TriageRequest(
            kind="tracked",
            match="test/test_c.py",
            backends=["gpu", "tpu"],
            issue_url=f"{ISSUES}504",
            expires_on=tomorrow,
        ),
    }
    made = {
        name: triage_create(project=xla, request=request, user=maintainer.user)
        for name, request in requests.items()
    }
    # Past its day (the service refuses a past day): as if it had been written a while ago.
    yesterday = tomorrow - datetime.timedelta(days=2)
    Triage.objects.filter(pk=made["expired"].pk).update(expires_on=yesterday)
    for triage in made.values():
        triage.refresh_from_db()
    return made
