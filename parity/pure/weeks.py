"""ISO weeks in UTC: Monday 00:00 to the next Monday 00:00. Pure; no Django."""

import datetime
import re
from dataclasses import dataclass

_ISO_WEEK = re.compile(r"^(\d{4})-?W(\d{2})$", re.IGNORECASE)


class BadWeek(ValueError):
    """Not an ISO week like 2026-W14."""


@dataclass(frozen=True, order=True)
class Week:
    year: int
    number: int

    @classmethod
    def parse(cls, text: str) -> "Week":
        match = _ISO_WEEK.match(text.strip())
        if match is None:
            raise BadWeek(f"'{text}' is not an ISO week like 2026-W14.")
        year, number = int(match[1]), int(match[2])
        try:
            datetime.date.fromisocalendar(year, number, 1)
        except ValueError as exc:
            raise BadWeek(f"{year} has no week {number}.") from exc
        return cls(year, number)

    @classmethod
    def of(cls, moment: datetime.datetime | datetime.date) -> "Week":
        """The week holding ``moment`` (an aware datetime is read in UTC)."""
        if isinstance(moment, datetime.datetime):
            moment = moment.astimezone(datetime.UTC).date()
        year, number, _ = moment.isocalendar()
        return cls(year, number)

    @classmethod
    def last_complete(cls, now: datetime.datetime) -> "Week":
        """The latest week that has ended by ``now``: on Monday morning, the one just ended."""
        return cls.of(now).previous

    @property
    def monday(self) -> datetime.date:
        return datetime.date.fromisocalendar(self.year, self.number, 1)

    @property
    def sunday(self) -> datetime.date:
        return self.monday + datetime.timedelta(days=6)

    @property
    def start(self) -> datetime.datetime:
        return datetime.datetime.combine(self.monday, datetime.time(), tzinfo=datetime.UTC)

    @property
    def end(self) -> datetime.datetime:
        """Exclusive: the next week's start."""
        return self.start + datetime.timedelta(days=7)

    @property
    def previous(self) -> "Week":
        return Week.of(self.monday - datetime.timedelta(days=7))

    @property
    def next(self) -> "Week":
        return Week.of(self.monday + datetime.timedelta(days=7))

    def __str__(self) -> str:
        return f"{self.year}-W{self.number:02d}"
