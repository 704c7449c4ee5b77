"""The heatmap ranks its rows on plain numbers (``cell_standing``) and builds cells only for the
page it shows: each standing must be what the built cell (``CellCounts``) says, under every
score definition, or the page would sort rows in an order its cells contradict."""

import itertools

import pytest

from parity.pure.scores import KINDS, Definition
from parity.selectors.heatmap import CellCounts, cell_standing

DEFINITIONS = [
    Definition(kind=kind, counts_intended=intended, counts_not_applicable=not_applicable)
    for kind, intended, not_applicable in itertools.product(KINDS, (False, True), (False, True))
]


@pytest.mark.parametrize("definition", DEFINITIONS, ids=lambda d: d.label)
def test_a_cells_standing_is_what_its_built_cell_says(definition):
    for passed, gaps, intended, pending, not_applicable, rerun, is_reference in itertools.product(
        (0, 1, 5), (0, 1, 3), (0, 1, 3), (0, 2), (0, 1), (0, 1), (False, True)
    ):
        if intended > gaps:
            continue
        cell = CellCounts(
            backend="tpu",
            passed=passed,
            reference_passed=passed + gaps,
            gaps=gaps,
            intended=intended,
            pending=pending,
            not_applicable=not_applicable,
            rerun=rerun,
            is_reference=is_reference,
            definition=definition,
        )
        built = (cell.counted_gaps, cell.parity, cell.parity is not None or cell.gaps > 0)
        assert (
            cell_standing(
                gaps=gaps,
                intended=intended,
                compared=cell.compared,
                is_reference=is_reference,
                definition=definition,
            )
            == built
        ), cell
