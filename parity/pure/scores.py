"""The parity score, defined once for every page that shows one (a backend's card, the overview,
the sparklines, each heatmap cell), by the project's choice of definition (``Definition``).

Teams define "parity" differently, and a number that disagrees with their own spreadsheet loses
the meeting, so the definition is a project setting:

- ``reference_passing`` (the default): of the tests the reference passes, the share that pass
  here.
- ``agree_reference_passed``: of the tests in the reference's run, the share that agree, where a
  test disagrees only if the reference passed it and this backend did not (AMD's redefinition
  in ROCm/pytorch#3371).
- ``agree_any``: the same share, where any difference of outcome disagrees (a test the
  reference skips and this backend fails, or lacks, disagrees too).

Two kinds of gap are decisions, not failures, and the headline leaves them out unless the
project counts them: a gap a triage marks *intended* (backend-specific by design), and a test
declared *not applicable* on the backend (a hardware classification, an out-of-tree backend's
exclusions, a project's list). Not-applicable tests are outside the snapshots' other counts;
intended gaps are inside them. The **raw** figure counts both, by the same definition; pages
show it beside the headline when the two differ."""

from dataclasses import dataclass

REFERENCE_PASSING = "reference_passing"
AGREE_REFERENCE_PASSED = "agree_reference_passed"
AGREE_ANY = "agree_any"
KINDS = (REFERENCE_PASSING, AGREE_REFERENCE_PASSED, AGREE_ANY)


@dataclass(frozen=True)
class Definition:
    """What a project's headline counts (``Project.score_definition`` and its two flags)."""

    kind: str = REFERENCE_PASSING
    counts_intended: bool = False
    counts_not_applicable: bool = False

    @property
    def agreement(self) -> bool:
        """Whether it compares the reference's tests it did not pass too (an agreement)."""
        return self.kind != REFERENCE_PASSING

    @property
    def label(self) -> str:
        """How pages name the headline, e.g. "agreement (any difference), intended counted"."""
        name = {
            REFERENCE_PASSING: "share of the reference's passing tests that pass",
            AGREE_REFERENCE_PASSED: "agreement (only where the reference passed)",
            AGREE_ANY: "agreement (any difference)",
        }[self.kind]
        counted = [
            what
            for what, on in (
                ("intended gaps", self.counts_intended),
                ("not-applicable tests", self.counts_not_applicable),
            )
            if on
        ]
        return name + (f"; {' and '.join(counted)} counted" if counted else "")

    @property
    def title(self) -> str:
        """The headline's name where a heading names it: "Parity scores", or the agreement it
        is ("Agreement scores (any difference)"), never "parity" for an agreement."""
        return {
            REFERENCE_PASSING: "Parity scores",
            AGREE_REFERENCE_PASSED: "Agreement scores (only where the reference passed)",
            AGREE_ANY: "Agreement scores (any difference)",
        }[self.kind]

    @property
    def decisions(self) -> str:
        """Whether the headline counts intended gaps and not-applicable tests as failures."""
        intended = "intended gaps " + ("counted" if self.counts_intended else "not counted")
        if self.counts_not_applicable:
            return f"{intended}; not-applicable tests counted"
        return intended


DEFAULT = Definition()
# The raw figure: the same definition with every decision counted as a failure.
_RAW = {"counts_intended": True, "counts_not_applicable": True}


@dataclass(frozen=True)
class Counts:
    """A backend's (or a file's) numbers against the reference, as snapshots keep them.

    ``compared``: the reference's passing tests compared here (not pending, not declared not
    applicable); ``passing`` of them pass here; ``intended`` of the others are intended gaps;
    ``not_applicable``: reference-passing tests declared not applicable here and not passing.
    For the agreement definitions: ``reference_tests``, every test of the reference's run
    compared (not pending, not applicable; None where not known, e.g. a heatmap cell),
    ``differ_not_passed``, those the reference did not pass whose outcome here differs, and
    ``not_applicable_not_passed``, those that differ but are declared not applicable here
    (outside the other two, as ``not_applicable`` is outside ``compared``)."""

    passing: int
    compared: int
    intended: int = 0
    not_applicable: int = 0
    reference_tests: int | None = None
    differ_not_passed: int = 0
    not_applicable_not_passed: int = 0


@dataclass(frozen=True)
class Scores:
    """A backend's (or a file's) parity both ways; None where nothing is left to compare."""

    headline: float | None
    raw: float | None
    intended: int  # the intended gaps between the two
    not_applicable: int = 0  # the not-applicable tests between the two

    @property
    def differs(self) -> bool:
        """The raw figure is worth showing beside the headline."""
        return (self.intended > 0 or self.not_applicable > 0) and self.headline != self.raw


def share(passing: int, of: int) -> float | None:
    return passing / of if of > 0 else None


def score(counts: Counts, definition: Definition = DEFAULT) -> float | None:
    """One figure of ``counts`` by ``definition``. Decisions not counted leave both the failures
    and the whole; counted ones are failures. Without ``reference_tests`` (a heatmap cell) an
    agreement definition falls back to ``reference_passing``."""
    return share(*parts(counts, definition))


def parts(counts: Counts, definition: Definition = DEFAULT) -> tuple[int, int]:
    """The two counts ``score`` divides, by ``definition``: the tests that count as passing (or
    agreeing) and the whole. A target's steering figure keeps the whole of its creation
    (``parity.pure.forecasts``)."""
    failing = counts.compared - counts.passing
    whole = counts.compared
    if not definition.counts_intended:
        failing -= counts.intended
        whole -= counts.intended
    if definition.counts_not_applicable:
        failing += counts.not_applicable
        whole += counts.not_applicable
    if definition.kind == REFERENCE_PASSING or counts.reference_tests is None:
        return whole - failing, whole
    # Agreement: the whole is every test of the reference's run compared, less the decisions
    # not counted (not-applicable tests are outside reference_tests, as outside compared, the
    # reference's non-passing ones too). Counted, a declaration is as if not made: those tests
    # differ here, which only agree_any calls a disagreement.
    whole += counts.reference_tests - counts.compared
    if definition.counts_not_applicable:
        whole += counts.not_applicable_not_passed
        if definition.kind == AGREE_ANY:
            failing += counts.not_applicable_not_passed
    if definition.kind == AGREE_ANY:
        failing += counts.differ_not_passed
    return whole - failing, whole


def scores(counts: Counts, definition: Definition = DEFAULT) -> Scores:
    """The headline by ``definition`` and the raw figure (the same, every decision counted)."""
    raw = Definition(kind=definition.kind, **_RAW)
    agreement = definition.kind != REFERENCE_PASSING and counts.reference_tests is not None
    return Scores(
        headline=score(counts, definition),
        raw=score(counts, raw),
        intended=counts.intended,
        not_applicable=counts.not_applicable
        + (counts.not_applicable_not_passed if agreement else 0),
    )


def alternatives(counts: Counts, definition: Definition) -> list[tuple[Definition, float | None]]:
    """The headline by the other agreement definition, beside the project's own, where the
    counts allow it (a project that chose an agreement definition keeps both definitions'
    counts): AMD compares the two side by side. Empty otherwise."""
    if definition.kind == REFERENCE_PASSING or counts.reference_tests is None:
        return []
    other = AGREE_ANY if definition.kind == AGREE_REFERENCE_PASSED else AGREE_REFERENCE_PASSED
    beside = Definition(
        kind=other,
        counts_intended=definition.counts_intended,
        counts_not_applicable=definition.counts_not_applicable,
    )
    return [(beside, score(counts, beside))]


def counted_gaps(*, gaps: int, intended: int, definition: Definition = DEFAULT) -> int:
    """The gaps a headline counts against a backend (what "most gaps first" sorts by)."""
    return gaps if definition.counts_intended else gaps - intended
