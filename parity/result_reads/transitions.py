"""A version transition's page: its tests that went each way (``TransitionKind``) between the
run before and the run after the change, a page of each list at a time, read from the two
runs' results by the results' (run, test) index (``parity.definitions.transition_tests``, the
rule the engine counted them by). One statement: its cost follows the two runs' sizes."""

from dataclasses import dataclass

from parity.definitions import OUTCOME_PARAMS, transition_tests
from parity.models import Outcome, TestCase, Transition, TransitionKind
from parity.models.sql import model_sql
from parity.read_replica import read_cursor

OFFSET_MAX = 2**40  # past any run's tests, within bigint however the limit adds


@dataclass(frozen=True)
class MovedTest:
    test_id: int
    test: str  # file::Class::name
    before: str | None  # its outcome in the run before; None: not there
    after: str | None


@dataclass(frozen=True)
class MovedList:
    kind: str  # TransitionKind
    label: str
    total: int
    offset: int
    limit: int
    tests: list[MovedTest]  # by test ID, from ``offset``, at most ``limit``

    @property
    def page(self) -> int:
        return self.offset // self.limit + 1

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.limit))

    @property
    def first(self) -> int:
        """The number of the page's first test in the whole list."""
        return self.offset + 1

    @property
    def has_previous(self) -> bool:
        return self.offset > 0

    @property
    def has_next(self) -> bool:
        return self.offset + self.limit < self.total


@dataclass(frozen=True)
class TransitionDetail:
    transition: Transition
    lists: list[MovedList]  # in TransitionKind's order
    # Retention deleted a run's results (or its passes): the lists cannot be read again, and
    # the counts are those recorded at the change.
    expired: bool


# Each kind's page of tests (ranked by test key), and each kind's total.
_PAGE_SQL = """
    WITH moved AS MATERIALIZED ({moved}),
    ranked AS (
        SELECT m.kind, m.test_id, m.before, m.after, t.key,
               row_number() OVER (PARTITION BY m.kind ORDER BY t.key, t.id) AS n
        FROM moved m JOIN {test} t ON t.id = m.test_id
    )
    SELECT r.kind, NULL::bigint, r.test_id, r.before, r.after, r.key
    FROM ranked r JOIN unnest(%(kinds)s::text[], %(offsets)s::bigint[]) AS p(kind, skip)
      ON p.kind = r.kind AND r.n > p.skip AND r.n <= p.skip + %(limit)s::bigint
    UNION ALL
    SELECT kind, count(*), NULL, NULL, NULL, NULL FROM moved GROUP BY kind
"""


def transition_detail(
    *, transition: Transition, offsets: dict[str, int] | None = None, limit: int = 100
) -> TransitionDetail:
    """``transition`` with at most ``limit`` tests of each of its lists, from the kind's
    offset in ``offsets`` (a kind left out: from its first)."""
    # Clamped: a page number past any list (``?new=99999999999999999999``) reads an empty page.
    offsets = {
        kind: min(max(0, (offsets or {}).get(kind, 0)), OFFSET_MAX)
        for kind in TransitionKind.values
    }
    runs = (transition.from_run, transition.to_run)
    expired = any(r.results_expired_at or r.passes_expired_at for r in runs)
    totals: dict[str, int] = dict(transition.counts)
    tests: dict[str, list[MovedTest]] = {kind: [] for kind in TransitionKind.values}
    if not expired:
        totals = dict.fromkeys(TransitionKind.values, 0)
        statement = model_sql(_PAGE_SQL, moved=transition_tests(), test=TestCase)
        params = {
            **OUTCOME_PARAMS,
            "before": transition.from_run_id,
            "after": transition.to_run_id,
            "kinds": list(offsets),
            "offsets": list(offsets.values()),
            "limit": limit,
        }
        with read_cursor() as cursor:
            cursor.execute(statement, params)
            rows = cursor.fetchall()
        for kind, total, test_id, before, after, key in rows:
            if total is not None:
                totals[kind] = total
            else:
                tests[kind].append(MovedTest(test_id, key, _label(before), _label(after)))
    lists = [
        MovedList(
            kind=kind.value,
            label=kind.label,
            total=totals[kind.value],
            offset=offsets[kind.value],
            limit=limit,
            tests=sorted(tests[kind.value], key=lambda t: t.test),
        )
        for kind in TransitionKind
    ]
    return TransitionDetail(transition=transition, lists=lists, expired=expired)


def _label(outcome: int | None) -> str | None:
    return None if outcome is None else Outcome(outcome).label
