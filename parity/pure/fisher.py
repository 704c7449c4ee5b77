"""Fisher's exact test on a 2x2 table, one-sided, in plain Python (no scipy at runtime).

The table is ``[[a, b], [c, d]]``: a compare view's ``[[sample failures, sample passes],
[basis failures, basis passes]]``. With the margins fixed, ``a`` follows the hypergeometric
distribution; ``fisher_greater`` is the chance of ``a`` or more (the sample fails more often
than the basis by chance alone), ``fisher_less`` of ``a`` or fewer. They equal
``scipy.stats.fisher_exact(table, alternative="greater" | "less")[1]`` (tests/parity/pure).
Each term is computed through log-factorials (``math.lgamma``), so counts in the thousands
neither overflow nor lose the tail.
"""

import math


def _log_choose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _log_pmf(x: int, *, row: int, col: int, total: int) -> float:
    """log P(a = x) for a row sum ``row``, first-column sum ``col`` and grand ``total``."""
    return _log_choose(col, x) + _log_choose(total - col, row - x) - _log_choose(total, row)


def _tail(a: int, b: int, c: int, d: int, *, upper: bool) -> float:
    for n in (a, b, c, d):
        if n < 0:
            raise ValueError(f"a 2x2 table holds counts, not {n}")
    row, col, total = a + b, a + c, a + b + c + d
    low, high = max(0, row + col - total), min(row, col)
    xs = range(a, high + 1) if upper else range(low, a + 1)
    logs = [_log_pmf(x, row=row, col=col, total=total) for x in xs]
    if not logs:
        return 1.0
    top = max(logs)  # summed relative to the largest term: exp never underflows them all
    p = math.exp(top) * math.fsum(math.exp(v - top) for v in logs)
    return min(1.0, p)


def fisher_greater(a: int, b: int, c: int, d: int) -> float:
    """One-sided p-value that ``a`` is larger than chance makes it: P(X >= a)."""
    return _tail(a, b, c, d, upper=True)


def fisher_less(a: int, b: int, c: int, d: int) -> float:
    """One-sided p-value that ``a`` is smaller than chance makes it: P(X <= a)."""
    return _tail(a, b, c, d, upper=False)
