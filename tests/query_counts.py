"""Count the queries of whole requests: pages and endpoints, through Django's test client."""

from collections.abc import Callable

from django.db import connection
from django.test.utils import CaptureQueriesContext


def gets(client, urls: dict[str, str]) -> dict[str, Callable]:
    """One GET per named URL, with ``client`` (Django's or DRF's test client), for query_counts."""
    return {name: (lambda url=url: client.get(url)) for name, url in urls.items()}


def query_counts(requests: dict[str, Callable]) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Run each request (a no-argument callable returning a response); per name, its number of
    queries, and the SQL of each for the failure message. A request that does not succeed
    (status >= 400) counts as -1, so that a broken page never passes as a cheap one."""
    counts, statements = {}, {}
    for name, request in requests.items():
        with CaptureQueriesContext(connection) as queries:
            response = request()
        counts[name] = len(queries) if response.status_code < 400 else -1
        statements[name] = [q["sql"][:200] for q in queries.captured_queries]
    return counts, statements


def mismatches(
    counts: dict[str, int], expected: dict[str, int], statements: dict[str, list[str]]
) -> str:
    """What differs, with the statements of each request that differs."""
    lines = []
    for name, want in expected.items():
        if counts.get(name) != want:
            lines.append(f"{name}: {counts.get(name)} queries, expected {want}")
            lines += [f"    {sql}" for sql in statements.get(name, [])]
    return "\n".join(lines)
