"""Which tests a recompute diffs: its scope, chosen once from how the backend's state moved
(``parity.engine.recompute``) and passed down to every step.

Every gap depends on the test's outcome on the reference and on the backend, and on the
backend's run (its start and manifest). A recompute diffs every test only when all of that may
have moved; otherwise only the tests whose inputs moved, the rest keeping the gaps the last
diff gave them:

- ``rebuild``: every backend's current run may have moved (``project_recompute``): every test,
  every open gap's triage picked again, every file cell recounted;
- ``every_test``: a backend's first run, the reference's first, or a narrower scope that could
  not be bounded (``instead_of`` says which);
- ``reference_moved_on``: the reference's new run replaced one every gap was diffed against:
  the tests whose outcome changed there (``parity_outcome_changes``);
- ``nightly``: a backend's new run replaced ``replaced_run_id``, which its every gap was diffed
  against: the tests that can change since (``parity_diff_scope``, ``gaps._NIGHTLY_SCOPE_SQL``);
- ``late_shard``: a late shard or a retried task of a backend's current run, which its every
  gap was diffed against already: what the shard brought (``gaps._RERUN_SCOPE_SQL``).
"""

import enum
from dataclasses import dataclass

from parity.engine import temp_tables


class ScopeKind(enum.Enum):
    REBUILD = "rebuild"
    EVERY_TEST = "every test"
    REFERENCE_MOVED_ON = "reference moved on"
    NIGHTLY = "nightly"
    LATE_SHARD = "late shard"


@dataclass(frozen=True)
class Scope:
    kind: ScopeKind
    # Nightly: the run the backend's new run replaced.
    replaced_run_id: int | None = None
    # Nightly: the reference's run current when the backend's run started is another than when
    # the replaced run started, so the backend's tests the reference lacks can change too.
    reference_changed: bool = False
    # Every test: the narrower scope it stands in for, which could not be bounded.
    instead_of: ScopeKind | None = None

    @classmethod
    def rebuild(cls) -> "Scope":
        return cls(ScopeKind.REBUILD)

    @classmethod
    def every_test(cls, *, instead_of: ScopeKind | None = None) -> "Scope":
        return cls(ScopeKind.EVERY_TEST, instead_of=instead_of)

    @classmethod
    def reference_moved_on(cls) -> "Scope":
        return cls(ScopeKind.REFERENCE_MOVED_ON)

    @classmethod
    def nightly(cls, replaced_run_id: int, *, reference_changed: bool) -> "Scope":
        return cls(
            ScopeKind.NIGHTLY,
            replaced_run_id=replaced_run_id,
            reference_changed=reference_changed,
        )

    @classmethod
    def late_shard(cls) -> "Scope":
        return cls(ScopeKind.LATE_SHARD)

    @property
    def table(self) -> str | None:
        """The temporary table of the tests diffed; None: every test of the backends."""
        return _TABLES.get(self.kind)

    def __str__(self) -> str:
        if self.instead_of is not None:
            return f"{self.kind.value} (a {self.instead_of.value} that could not be bounded)"
        if self.kind is ScopeKind.NIGHTLY:
            return f"{self.kind.value} (replacing run {self.replaced_run_id})"
        return self.kind.value


_TABLES = {
    ScopeKind.REFERENCE_MOVED_ON: temp_tables.OUTCOME_CHANGES,
    ScopeKind.NIGHTLY: temp_tables.DIFF_SCOPE,
    ScopeKind.LATE_SHARD: temp_tables.DIFF_SCOPE,
}
