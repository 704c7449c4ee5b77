"""The nav's test search: a test named as its runner names it (a pytest node ID, a unittest ID)
or by its canonical ID opens its page; part of an ID lists the tests holding it."""

import pytest

from parity.models import TestCase
from tests.parity.dashboard.conftest import text

P = "/p/pytorch-xla"
OPS = "test/test_ops.py"
CANONICAL = f"{OPS}::TestOps::test_add_float32"


@pytest.fixture
def ops(upload_run) -> TestCase:
    """PyTorch's device-generic test as XLA's CI reports it: class and name carry the device."""
    upload_run(
        "tpu",
        {
            f"{OPS}::TestOpsXLA::test_add_xla_float32": "passed",
            f"{OPS}::TestOpsXLA::test_add_xla_int64": "passed",
        },
        day="2026-04-01",
    )
    return TestCase.objects.get(key=CANONICAL)


@pytest.mark.parametrize(
    "q",
    [
        f"{OPS}::TestOpsXLA::test_add_xla_float32",  # pytest
        "test.test_ops.TestOpsXLA.test_add_xla_float32",  # unittest
        CANONICAL,
        f"  {CANONICAL} ",
    ],
)
def test_a_test_named_as_its_runner_names_it_opens_its_page(client, ops, q):
    response = client.get(f"{P}/tests/", {"q": q})
    assert (response.status_code, response["Location"]) == (302, f"{P}/tests/{ops.pk}/")


def test_part_of_an_id_lists_the_tests_holding_it(client, ops):
    html = text(client.get(f"{P}/tests/", {"q": "test_add"}))
    assert f'<a href="{P}/tests/{ops.pk}/">{CANONICAL}</a>' in html
    assert f"{OPS}::TestOps::test_add_int64" in html


def test_class_dot_method_lists_the_tests_of_that_class_and_method(client, ops):
    # As unittest, tracebacks and people write it: the key has "::" there.
    html = text(client.get(f"{P}/tests/", {"q": "TestOps.test_add"}))
    assert f'<a href="{P}/tests/{ops.pk}/">{CANONICAL}</a>' in html
    assert f"{OPS}::TestOps::test_add_int64" in html


def test_no_match_says_so_and_every_page_has_the_box(client, ops):
    html = text(client.get(f"{P}/tests/", {"q": "no_such_test"}))
    assert "No test of pytorch-xla is named" in html
    assert f'<form class="test-search" role="search" method="get" action="{P}/tests/">' in html
    assert 'action="/p/pytorch-xla/tests/"' in text(client.get(f"{P}/gaps/"))
