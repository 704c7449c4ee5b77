"""A target's progress and forecast, from a backend's daily counts (docs/targets.md).

A target is a score (a share, by the project's definition: ``parity.pure.scores``) to reach by
a date. Its **denominator** is the score's whole on the day it was set (the expected set, counted):
tests added later do not move the goal, so a week of new tests does not read as a regression.
Two figures, each named where it is shown:

- the **published** figure: the headline score, of today's whole;
- the **steering** figure: today's passing (or agreeing) tests of the denominator fixed at the
  target's creation, capped at 100 %.

The goal is ``ceil(score x denominator)`` passing tests; **remaining** is the goal less today's
passing tests (0 when met). The **rate** is the least-squares slope of the passing count per
day over the daily points of the last ``weeks`` weeks (at least two days with a point). The
**forecast** is ``today + ceil(remaining / rate)`` days. A rate of zero or less, or too few
points to measure one, is **no progress**: no date is forecast, and nothing is drawn through the
noise. A target is **at risk** when it is not met and has no progress or a forecast after its
date; it leaves that state only when the forecast comes at least ``margin`` days before the date
(or it is met), so a forecast that hovers at the date does not flap (``at_risk_next``)."""

import datetime
import math
from dataclasses import dataclass


@dataclass(frozen=True)
class DayCount:
    day: datetime.date
    passing: int  # the tests that count as passing (or agreeing) that day, by the definition


@dataclass(frozen=True)
class Forecast:
    goal: int  # passing tests the target asks for: ceil(score x denominator)
    passing: int | None  # on the last day with a point; None without one
    remaining: int  # to the goal (0 when met)
    steering: float | None  # passing over the fixed denominator, at most 1
    rate: float | None  # passing tests gained a day; None: too few points to measure
    on: datetime.date | None  # the forecast; None when met or without progress
    met: bool
    no_progress: bool  # not met, and the rate is None, zero or negative
    points: int  # the daily points the rate was measured over


def goal_of(*, score: float, denominator: int) -> int:
    """The passing tests a target of ``score`` over ``denominator`` asks for. Rounded to 9
    places first, so 0.9 x 1000 is 900, not 901 by a float's last bit."""
    return math.ceil(round(score * denominator, 9))


def rate_of(points: list[DayCount]) -> float | None:
    """The least-squares slope of ``passing`` against the day (tests a day); None with fewer
    than two distinct days."""
    days = {p.day for p in points}
    if len(days) < 2:
        return None
    origin = min(days)
    xs = [(p.day - origin).days for p in points]
    ys = [p.passing for p in points]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread


def forecast(
    *,
    points: list[DayCount],
    score: float,
    denominator: int,
    today: datetime.date,
    weeks: int,
) -> Forecast:
    """The target's progress on ``today`` and its forecast, from its backend's daily ``points``
    (any order; those older than ``weeks`` weeks before ``today`` are left out of the rate)."""
    goal = goal_of(score=score, denominator=denominator)
    ordered = sorted(points, key=lambda p: p.day)
    passing = ordered[-1].passing if ordered else None
    remaining = max(goal - (passing or 0), 0)
    steering = None if passing is None or denominator <= 0 else min(passing / denominator, 1.0)
    since = today - datetime.timedelta(weeks=weeks)
    recent = [p for p in ordered if p.day > since]
    rate = rate_of(recent)
    met = passing is not None and remaining == 0
    no_progress = not met and (rate is None or rate <= 0)
    on = None
    if not met and not no_progress:
        on = today + datetime.timedelta(days=math.ceil(remaining / rate))
    return Forecast(
        goal=goal,
        passing=passing,
        remaining=remaining,
        steering=steering,
        rate=rate,
        on=on,
        met=met,
        no_progress=no_progress,
        points=len(recent),
    )


def at_risk_next(
    *, was: bool, result: Forecast, due: datetime.date, margin: datetime.timedelta
) -> bool:
    """Whether a target is at risk after ``result``, having been (``was``) or not. It enters
    when not met and the forecast is missing (no progress) or after ``due``; it leaves when met
    or the forecast is before ``due - margin``; between the two it stays as it was."""
    if result.met:
        return False
    if result.no_progress or result.on is None or result.on > due:
        return True
    if result.on < due - margin:
        return False
    return was
