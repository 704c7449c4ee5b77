"""Derive the compact demo fixture (``parity/demo/fixture.json``) from the real PyTorch/XLA data.

Run from the repository root::

    .venv/bin/python -m parity.demo.build_fixture [--shared DIR] [--out FILE]

``DIR`` is the team's shared folder (default ``../shared``); the data is read from
``DIR/data/pytorch-xla`` (see its README). The fixture lets ``make demo`` run on a machine
without that folder, so it keeps only what the demo scenario needs, re-shaped:

- ``backends``: per demo backend, the ACTIVE test files of its runner scripts with the shard
  function (or, on TPU, the script) that runs each. CPU, TPU (all five scripts that
  ``_tpu_ci.yml`` runs) and Neuron are read at HEAD; GPU at the last GPU-era commit, as the
  data README says. Their test/ files are checked against the data's own snapshot lists.
- ``files``: per test file, its entry point and every class and test name of
  ``tests_inventory.tsv`` (no cap: 1.6k names fit easily; the scenario caps per run).
- ``gpu_era_tests``: names that only the GPU-era skip rows know (files deleted since).
- ``skips``: the rows of ``skips.tsv`` that skip something in the demo, each with the
  backends it applies to, found by evaluating its condition against each backend's runner
  environment (see ``fixture.conditions``); ``unresolved`` names backends where it depends
  on a test parameter.
- ``upstream``: device-parameterized upstream tests (``TestViewOpsXLA.test_x_xla_float32``)
  sampled from ``disabled_tests_sample.tsv``, with the backends that disable each.
- ``expected_overlap``: |A|, |B| and |A∩B| of test files for every backend pair.

The work is done in the ``parity.demo.fixture`` package; this module is the command, and keeps
its public names importable from here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from parity.demo.fixture.assemble import fixture_build
from parity.demo.fixture.conditions import RunEnv
from parity.demo.fixture.dump import fixture_dumps
from parity.demo.fixture.overlap import expected_overlap, overlap_files
from parity.demo.fixture.skips import skip_applies

__all__ = [
    "RunEnv",
    "expected_overlap",
    "fixture_build",
    "fixture_dumps",
    "main",
    "overlap_files",
    "skip_applies",
]

REPO_DIR = Path(__file__).resolve().parents[2]
DEFAULT_SHARED = REPO_DIR.parent / "shared"
DEFAULT_OUT = Path(__file__).resolve().parent / "fixture.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="shared folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="fixture to write")
    args = parser.parse_args(argv)
    data_dir = args.shared / "data" / "pytorch-xla"
    if not (data_dir / "backends.json").is_file():
        print(f"no PyTorch/XLA data at {data_dir}", file=sys.stderr)
        return 2
    text = fixture_dumps(fixture_build(data_dir=data_dir))
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text.encode()) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
