"""The digest's absolute links (``{% load digest_links %}``): ``{{ gap.test_id|test_url:slug }}``,
a test's page for an email, which has no request to build URLs from (``parity.digest.links``)."""

from django import template

from parity.digest.links import testcase_url

register = template.Library()


@register.filter
def test_url(test_id: int, slug: str) -> str:
    return testcase_url(slug=slug, test_id=test_id)
