import datetime

import pytest

from parity.pure.weeks import BadWeek, Week

UTC = datetime.UTC


def test_an_iso_week_runs_from_monday_to_the_next_monday_utc():
    week = Week.parse("2026-W14")
    assert (week.start, week.end) == (
        datetime.datetime(2026, 3, 30, tzinfo=UTC),
        datetime.datetime(2026, 4, 6, tzinfo=UTC),
    )
    assert (week.monday, week.sunday) == (datetime.date(2026, 3, 30), datetime.date(2026, 4, 5))
    assert (str(week.previous), str(week.next)) == ("2026-W13", "2026-W15")


def test_weeks_across_a_year_end():
    assert Week.parse("2026W01").monday == datetime.date(2025, 12, 29)
    assert str(Week.of(datetime.date(2025, 12, 31))) == "2026-W01"
    assert str(Week.parse("2026-W01").previous) == "2025-W52"
    assert str(Week.parse("2026-W53").next) == "2027-W01"  # 2026 has 53 weeks


def test_the_beat_on_monday_morning_sends_the_week_just_ended():
    monday_8am = datetime.datetime(2026, 4, 6, 8, tzinfo=UTC)
    assert str(Week.last_complete(monday_8am)) == "2026-W14"
    # An aware time elsewhere is read in UTC: still Sunday 5 April there.
    sunday_night = datetime.datetime(
        2026, 4, 6, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=2))
    )
    assert str(Week.of(sunday_night)) == "2026-W14"


@pytest.mark.parametrize("text", ["2026-14", "W14", "2025-W53", "2026-W00", "last week"])
def test_not_a_week(text):
    with pytest.raises(BadWeek):
        Week.parse(text)
