"""The shaped-report generator (``tests/e2e/shapes.py``) against the real parser and normalizer:
what its manifest says is what ingest will see. Pure: no stack, no database."""

import gzip
from collections import Counter

import pytest

from parity.pure.junit import iter_cases
from parity.pure.normalize.ids import TestIdentifier
from tests.e2e.shapes import LAYOUTS, shaped_write


def _read(path):
    identify = TestIdentifier()
    with gzip.open(path) as stream:
        cases = list(iter_cases(stream))
    identities = [
        identify(classname=c.classname, name=c.name, file=c.file, folder_hint=None) for c in cases
    ]
    return cases, identities


@pytest.mark.parametrize("layout", LAYOUTS)
def test_manifest_is_what_the_parser_and_normalizer_see(tmp_path, layout):
    manifest = shaped_write(tmp_path / "r.xml.gz", cases=6_000, files=300, layout=layout)

    cases, identities = _read(manifest.path)

    outcomes = Counter(c.outcome for c in cases)
    assert len(cases) == manifest.cases == 6_000
    assert len({i.key for i in identities}) == manifest.tests  # every case a distinct test
    assert len({i.file for i in identities}) == 300
    assert all(i.file.startswith("test/") and i.file.endswith(".py") for i in identities)
    assert {"total": len(cases), **outcomes} == {
        label: n for label, n in manifest.expected_counts().items() if n
    }
    assert 0.03 < manifest.counts["skipped"] / 6_000 < 0.07
    assert 0.005 < manifest.counts["failed"] / 6_000 < 0.02


def test_device_suffixes_are_stripped_to_one_test_across_devices(tmp_path):
    xla = shaped_write(tmp_path / "xla.xml.gz", cases=2_000, files=40, device="xla")
    cpu = shaped_write(tmp_path / "cpu.xml.gz", cases=2_000, files=40, device="cpu")

    xla_keys = {i.key for i in _read(xla.path)[1]}
    cpu_keys = {i.key for i in _read(cpu.path)[1]}

    assert xla_keys == cpu_keys
    assert not any("xla" in key.lower() for key in xla_keys)


def test_interleaved_reports_open_new_files_until_the_end(tmp_path):
    manifest = shaped_write(tmp_path / "r.xml.gz", cases=20_000, files=400)

    _, identities = _read(manifest.path)

    first_seen = {}
    for position, identity in enumerate(identities):
        first_seen.setdefault(identity.file, position)
    assert max(first_seen.values()) > 0.8 * len(identities)


def test_same_arguments_same_bytes_and_a_later_run_only_changes_durations(tmp_path):
    one = shaped_write(tmp_path / "a.xml.gz", cases=3_000, files=50, seed=3)
    two = shaped_write(tmp_path / "b.xml.gz", cases=3_000, files=50, seed=3)
    later = shaped_write(tmp_path / "c.xml.gz", cases=3_000, files=50, seed=3, run=1)

    assert gzip.decompress(one.path.read_bytes()) == gzip.decompress(two.path.read_bytes())
    first, nightly = _read(one.path)[0], _read(later.path)[0]
    assert [(c.classname, c.name, c.outcome) for c in first] == [
        (c.classname, c.name, c.outcome) for c in nightly
    ]
    assert [c.duration for c in first] != [c.duration for c in nightly]
    assert later.counts == one.counts


def test_shards_hold_distinct_files_and_configurations_their_own_outcomes(tmp_path):
    first = shaped_write(tmp_path / "1.xml.gz", cases=2_000, files=50, seed=1)
    second = shaped_write(tmp_path / "2.xml.gz", cases=2_000, files=50, seed=2, first_file=50)
    other = shaped_write(tmp_path / "o.xml.gz", cases=2_000, files=50, seed=1, outcome_seed=9)

    files = [{i.file for i in _read(m.path)[1]} for m in (first, second)]
    assert len(files[0]) == len(files[1]) == 50
    assert not files[0] & files[1]
    (mine, my_ids), (theirs, their_ids) = _read(first.path), _read(other.path)
    assert [i.key for i in my_ids] == [i.key for i in their_ids]  # the same tests
    assert [c.outcome for c in mine] != [c.outcome for c in theirs]
