"""The parity score, defined once for every page that shows one (a backend's card, the overview,
the sparklines, each heatmap cell).

A gap a triage marks *intended* (backend-specific by design: a file exemption, an op the
hardware lacks) is a decision, not a failure. The **headline** score leaves intended gaps out:
of the reference's passing tests the backend is meant to run, the share that pass there. The
**raw** score counts them as failures, as the snapshots store it. Pages show the headline with
the raw figure beside it when the two differ. Which one heads is this module's one choice
(``HEADLINE_COUNTS_INTENDED``), so a project setting can make it later."""

from dataclasses import dataclass

# False: intended gaps are not counted against a backend in the headline score.
HEADLINE_COUNTS_INTENDED = False


@dataclass(frozen=True)
class Scores:
    """A backend's (or a file's) parity both ways; None where nothing is left to compare."""

    headline: float | None
    raw: float | None
    intended: int  # the intended gaps between the two

    @property
    def differs(self) -> bool:
        """The raw figure is worth showing beside the headline."""
        return self.intended > 0 and self.headline != self.raw


def share(passing: int, of: int) -> float | None:
    return passing / of if of > 0 else None


def scores(*, passing: int, compared: int, intended: int) -> Scores:
    """``passing`` of the ``compared`` tests the reference passes pass here; ``intended`` of
    those that do not are intended gaps. Raw: passing / compared. Without intended gaps:
    passing / (compared - intended), None when every compared test is an intended gap."""
    raw = share(passing, compared)
    without = share(passing, compared - intended)
    return Scores(
        headline=raw if HEADLINE_COUNTS_INTENDED else without,
        raw=raw,
        intended=intended,
    )


def counted_gaps(*, gaps: int, intended: int) -> int:
    """The gaps a headline counts against a backend (what "most gaps first" sorts by)."""
    return gaps if HEADLINE_COUNTS_INTENDED else gaps - intended
