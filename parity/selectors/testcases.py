"""Tests by name: the tests endpoint's search by canonical ID (``testcases_search``) and the
search box's (``testcase_find``), which also reads the query as a runner's test ID. Both read
the tests table only."""

import re
from dataclasses import dataclass

from django.db.models import Q, QuerySet

from parity.models import Project, TestCase
from parity.pure.normalize.runner_ids import RunnerIdError, runner_identity

# A dot between a class and its method (not a file's ".py"): what ``Class::method`` is in a key.
_MEMBER_DOT = re.compile(r"(?<=\w)\.(?!py\b)(?=[A-Za-z_])")


def testcases_search(*, project: Project, q: str = "") -> QuerySet[TestCase]:
    tests = TestCase.objects.filter(project=project)
    q = q.strip()
    if q:
        # ``Class.method`` (as unittest and tracebacks write it) names ``Class::method``.
        dotted = _MEMBER_DOT.sub("::", q)
        found = Q(key__icontains=q)
        if dotted != q:
            found |= Q(key__icontains=dotted)
        tests = tests.filter(found)
    return tests.order_by("key")


@dataclass(frozen=True)
class TestFind:
    __test__ = False  # not a pytest test class

    q: str
    exact: TestCase | None  # the test ``q`` names, as its canonical ID or as a runner names it
    tests: list[TestCase]  # tests whose canonical ID holds ``q``, the first ``limit`` by ID
    more: bool  # more than ``limit`` hold it


def testcase_find(*, project: Project, q: str, limit: int = 50) -> TestFind:
    """The search box: ``q`` read as a runner's test ID (a pytest node ID, a unittest ID;
    ``parity.pure.normalize.runner_ids``) and normalized by the project's rules, as ingest does, so
    ``test/test_ops.py::TestOpsXLA::test_add_xla_float32`` finds its canonical test; and the
    tests whose canonical ID holds ``q``. Two queries: the exact one by the tests' unique
    (project, file, digest) index, then the substring's first ``limit``."""
    q = q.strip()
    if not q:
        return TestFind(q=q, exact=None, tests=[], more=False)
    exact = None
    try:
        identity = runner_identity(q, project.normalization())
    except RunnerIdError:
        identity = None
    if identity is not None:
        exact = TestCase.objects.filter(
            project=project, file=identity.file, key=identity.key
        ).first()
    found = list(testcases_search(project=project, q=q)[: limit + 1])
    return TestFind(q=q, exact=exact, tests=found[:limit], more=len(found) > limit)
