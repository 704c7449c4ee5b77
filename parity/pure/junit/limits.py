"""How much of a report the parser keeps or accepts, so that no upload can hold a worker."""

from __future__ import annotations

from dataclasses import dataclass, fields

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True)
class ParseLimits:
    """The defaults fit every real report we have seen, with a wide margin."""

    # A message (a message attribute, or the text of <failure>, <skipped>, …) keeps this many
    # bytes and ends with "… [truncated, N bytes in all]"; the rest is never held in memory.
    max_message_bytes: int = 64 * KiB
    # A longer testcase name, classname or file, or suite name, is refused rather than cut: a
    # cut name would merge different tests. Real names reach 100,000 characters.
    max_name_chars: int = 256 * KiB
    # One tag with its attributes (after messages are cut), comment or processing instruction.
    # Expat 2.5 rescans an unfinished token on every chunk it is fed, so the time a token costs
    # grows with its square: at this cap a token costs a worker little, at a few times it a
    # worker is held for minutes (bench/token_bench.py).
    max_token_bytes: int = 16 * MiB

    def __post_init__(self) -> None:
        for field in fields(self):
            if getattr(self, field.name) < 1:
                raise ValueError(f"ParseLimits.{field.name} must be at least 1")


DEFAULT_LIMITS = ParseLimits()
