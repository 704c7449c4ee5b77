"""A deterministic CI history for the pytorch-xla demo, built from ``fixture.json``.

``demo_uploads(fixture, end=date)`` yields, for each of ``days`` days and each backend, the
1-3 files its CI run would upload: JUnit XML written with junitparser, or a zip of an xmlrunner
``test-reports`` folder. Nothing here touches Django, the clock or the network, and the same
arguments always give the same bytes (every choice comes from ``SEED``).

How it mirrors the data (see the README of the shared ``data/pytorch-xla`` folder):

- Each backend runs the active files of its runner (fixture ``backends``), once per file.
  A file's tests are the inventory's, capped at ``MAX_TESTS_PER_FILE`` (the first in inventory
  order). The cap only trims test_core_aten_ops.py (491 tests): a day is then ~1.36k (CPU),
  ~1.0k (GPU), ~0.85k (TPU) and ~0.5k (Neuron) cases, ~104k over 28 days.
- Name shapes follow the README's table: unittest files as xmlrunner writes them
  (``classname="TestFoo" file="test/x.py"``), absl files as absltest does
  (``classname="__main__.TestFoo"``, a skip is ``status="notrun" result="suppressed"`` with no
  reason), the TPU ``python -m unittest`` file with its module (``test_mat_mul_precision.X``).
  In a zip each file's XML sits in ``test-reports/python-unittest/test.dir.test_x/``, the
  folder being the only file hint absl cases carry. Scripts with no per-test results
  (``torch_xla.launch`` programs, examples) get one case named ``main`` for their exit status,
  so every file a runner lists shows up; Neuron's runner names a file that does not exist,
  which errors every night.
- Skips come from the fixture's real rows, with their reason verbatim; on some days a
  backend's converter words them like pytest (``test/x.py:12: Skipped: <reason>``). TPU and
  Neuron upload XML a merge step writes from the runners' logs, which keeps the reason
  absltest prints (``[  SKIPPED ] TestFoo.test_x - <reason>``); the CPU and GPU zips hold
  absltest's own XML, whose skips give none.
- Device-parameterized upstream tests (``TestViewOpsXLA.test_x_xla_float32``, file
  ``../../test/test_view_ops.py`` as the runner invokes it) run on all four backends under the
  same names, skipped (``skipped on XLA``) where that backend's DISABLED_TORCH_TESTS key lists
  them. Really only CPU (until 2025-08) and GPU ran them; the demo also runs them on TPU and
  Neuron (with the CPU key: Neuron has none) so one logical test can be followed everywhere.

What changes over the days is listed by ``demo_events`` (``stories``); the days below are
those of the default 28 (day 0 four weeks ago, day 27 today), each a share of the window:

- Tracked gaps, from the real skips whose message cites an issue on a test CPU passes: TPU
  skips test_assume_pure.py's ``test_assume_pure_complex_module`` ("Bug: …/issues/8974") all
  along, and ``test_assume_pure_einsum_grads`` ("Bug: …/issues/8975") from day 23; GPU skips
  two tests of one file with its real "TODO(…/issues/9017): Get these tests working on GPU"
  from day 21.
- A coverage drop and its recovery: GPU's CI shard ``run_xla_op_tests2`` (20 files, 132
  tests) does not run on days 8-11 and runs again from day 12.
- A reason that appears and disappears: the real "temporarily skipping this test until CI
  issue is resolved" skips six tests of one TPU file on days 5-11.
- Gaps that open for good (a TPU failure on day 9, a Neuron skip on day 18) or close (a TPU
  failure on day 5, a GPU OOM on day 15), three chronic failures, and a file Neuron stops
  running on day 14.
- On top, a seeded coin makes one test of a backend other than CPU fail for a single day
  about one day in three.

Modules: ``cases`` (backends, seed, cases and outcomes), ``plan`` (what each backend runs),
``events`` (what an event changes on a day), ``stories`` (the events the demo plays),
``timing`` (durations), ``junit`` (the XML and zips) and ``uploads`` (``demo_uploads`` and
``DemoUpload``).
"""

from parity.demo.scenario.cases import BACKENDS, SEED, Case, Outcome
from parity.demo.scenario.events import ScenarioEvent
from parity.demo.scenario.plan import upstream_disabled
from parity.demo.scenario.stories import demo_events
from parity.demo.scenario.uploads import BRANCH, DemoUpload, demo_uploads

__all__ = [
    "BACKENDS",
    "BRANCH",
    "SEED",
    "Case",
    "DemoUpload",
    "Outcome",
    "ScenarioEvent",
    "demo_events",
    "demo_uploads",
    "upstream_disabled",
]
