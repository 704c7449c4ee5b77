"""The settings page of states from history (docs/history-states.md, "Changing the rules"):
what new rules would change before they are saved. Each backend's stored windows
(``TestHistory``) are judged again under the new rules at its current run, as the engine judges
them (``parity.definitions.HISTORY_FOLLOWED_SQL``, ``parity.pure.history_states.window_judge``);
nothing is written."""

from dataclasses import dataclass

from django.db import connection

from parity.definitions import (
    HISTORY_EARLIER_SQL,
    HISTORY_FOLLOWED_SQL,
    history_kept,
    history_window_params,
)
from parity.models import BackendState, Project, TestCase
from parity.pure.history_states import NONE, HistoryRules, window_judge


@dataclass(frozen=True)
class HistoryChange:
    """A (test, backend) whose state the new rules would change: ``before`` (what every surface
    reads now), ``after``, and the window the new rules keep, with its counts."""

    test_id: int
    test: str
    backend: str
    before: str
    after: str
    window: str  # the outcomes kept, oldest first (``P``, ``F``)
    passes_before: int
    runs: int
    failures: int
    flips: int


@dataclass(frozen=True)
class HistoryPreview:
    """``changes`` (worst first: into broken, into flaky, then out), how many windows were
    judged (``followed``, of ``backends`` backends), and the longest window stored (``longest``: a
    larger window than it holds cannot be seen yet)."""

    changes: list[HistoryChange]
    followed: int
    backends: int
    longest: int


_ORDER = {"broken": 0, "flaky": 1, NONE: 2}


def history_preview(*, project: Project, rules: HistoryRules) -> HistoryPreview:
    """Every followed (test, backend) whose state ``rules`` would change, judged from its
    stored window at its backend's current run. Off (``rules.enabled`` False), every state
    reads none; a project that keeps none now reads none before."""
    kept = history_kept(project)
    states = BackendState.objects.filter(project=project, current_run__isnull=False)
    changes, followed, longest, backends = [], 0, 0, 0
    for state in states.select_related("current_run", "backend").order_by("backend__name"):
        run = state.current_run
        params = history_window_params(run=run, rules=rules)
        with connection.cursor() as cursor:
            cursor.execute(HISTORY_EARLIER_SQL, params)
            earlier = cursor.fetchone()[0]
            cursor.execute(HISTORY_FOLLOWED_SQL, params)
            rows = cursor.fetchall()
        backends += bool(rows)
        followed += len(rows)
        for _pk, test_id, outcomes, passes_before, was, keep, same_commit in rows:
            longest = max(longest, len(outcomes))
            window, leading, found = window_judge(
                outcomes,
                keep=keep,
                passes_before=passes_before,
                earlier=earlier,
                same_commit=same_commit,
                rules=rules,
            )
            before = was if kept else NONE
            after = found.state if rules.enabled else NONE
            if before != after:
                changes.append(
                    HistoryChange(
                        test_id=test_id,
                        test="",
                        backend=state.backend.name,
                        before=before,
                        after=after,
                        window=window,
                        passes_before=leading,
                        runs=found.runs,
                        failures=found.failures,
                        flips=found.flips,
                    )
                )
    names = dict(
        TestCase.objects.filter(pk__in={c.test_id for c in changes}).values_list("pk", "key")
    )
    changes = sorted(
        (
            HistoryChange(**{**c.__dict__, "test": names.get(c.test_id, str(c.test_id))})
            for c in changes
        ),
        key=lambda c: (_ORDER[c.after], c.backend, c.test),
    )
    return HistoryPreview(changes=changes, followed=followed, backends=backends, longest=longest)
