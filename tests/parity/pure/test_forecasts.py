"""A target's forecast equals the documented formula (docs/targets.md): today + ceil(remaining /
rate), the rate the least-squares slope of the passing count over the last N weeks; "no
progress" when the rate is zero, negative or unmeasurable; hysteresis at the due date."""

import datetime
import math
import random
import statistics

from parity.pure.forecasts import DayCount, Forecast, at_risk_next, forecast, goal_of

TODAY = datetime.date(2026, 12, 6)


def _days(values: list[int]) -> list[DayCount]:
    start = TODAY - datetime.timedelta(days=len(values) - 1)
    return [DayCount(start + datetime.timedelta(days=i), v) for i, v in enumerate(values)]


def test_a_steady_burn_down_lands_where_the_formula_says():
    points = _days([800 + 5 * i for i in range(28)])  # 935 today, 5 a day
    result = forecast(points=points, score=0.95, denominator=1000, today=TODAY, weeks=4)
    assert (result.goal, result.passing, result.remaining) == (950, 935, 15)
    assert math.isclose(result.rate, 5.0)
    assert result.on == TODAY + datetime.timedelta(days=3)
    assert result.steering == 0.935
    assert not result.met and not result.no_progress


def test_a_seeded_noisy_burn_down_equals_the_formula_by_another_hand():
    rng = random.Random(47)
    values = [600 + 3 * i + rng.randint(-15, 15) for i in range(70)]  # ten weeks
    points = _days(values)
    result = forecast(points=points, score=0.9, denominator=1000, today=TODAY, weeks=4)
    recent = points[-28:]  # the last four weeks: days after today - 28 days
    slope, _ = statistics.linear_regression(
        [(p.day - TODAY).days for p in recent], [p.passing for p in recent]
    )
    remaining = 900 - values[-1]
    assert math.isclose(result.rate, slope)
    assert result.points == 28
    assert result.on == TODAY + datetime.timedelta(days=math.ceil(remaining / slope))


def test_flat_or_falling_is_no_progress_and_forecasts_no_date():
    for values in ([900] * 20, [900 - i for i in range(20)], [900, 910, 890, 905, 880]):
        result = forecast(points=_days(values), score=0.95, denominator=1000, today=TODAY, weeks=4)
        assert result.no_progress and result.on is None, values


def test_one_point_is_no_progress_and_none_is_no_progress():
    assert forecast(points=_days([10]), score=1, denominator=20, today=TODAY, weeks=4).no_progress
    empty = forecast(points=[], score=1, denominator=20, today=TODAY, weeks=4)
    assert empty.no_progress and empty.passing is None and empty.steering is None


def test_old_points_are_left_out_of_the_rate():
    # Climbing ten weeks ago, flat for the last four: no progress now.
    values = [500 + 10 * i for i in range(42)] + [910] * 28
    result = forecast(points=_days(values), score=0.95, denominator=1000, today=TODAY, weeks=4)
    assert result.no_progress


def test_met_is_not_no_progress_and_steering_is_capped():
    result = forecast(points=_days([990] * 5), score=0.95, denominator=900, today=TODAY, weeks=4)
    assert result.met and not result.no_progress and result.remaining == 0
    assert result.steering == 1.0


def test_the_goal_rounds_up_but_not_by_a_floats_last_bit():
    assert goal_of(score=0.9, denominator=1000) == 900
    assert goal_of(score=0.9, denominator=1001) == 901


def _at(on: datetime.date | None, *, met: bool = False) -> Forecast:
    return Forecast(
        goal=1, passing=0, remaining=0 if met else 1, steering=0, rate=1, on=on, met=met,
        no_progress=on is None and not met, points=2,
    )  # fmt: skip


def test_at_risk_has_hysteresis_around_the_due_date():
    due, margin = datetime.date(2027, 3, 1), datetime.timedelta(days=7)
    late, early = due + datetime.timedelta(days=1), due - datetime.timedelta(days=8)
    hover = due - datetime.timedelta(days=3)  # inside the margin
    assert at_risk_next(was=False, result=_at(late), due=due, margin=margin)
    assert at_risk_next(was=True, result=_at(hover), due=due, margin=margin)  # stays
    assert not at_risk_next(was=False, result=_at(hover), due=due, margin=margin)  # stays out
    assert not at_risk_next(was=True, result=_at(early), due=due, margin=margin)
    assert at_risk_next(was=False, result=_at(None), due=due, margin=margin)  # no progress
    assert not at_risk_next(was=True, result=_at(None, met=True), due=due, margin=margin)
    # A forecast hovering on either side of the due date flips it once, not every day.
    states, was = [], False
    for offset in (1, -1, 2, -2, 1, -3):
        was = at_risk_next(
            was=was, result=_at(due + datetime.timedelta(days=offset)), due=due, margin=margin
        )
        states.append(was)
    assert states == [True] * 6
