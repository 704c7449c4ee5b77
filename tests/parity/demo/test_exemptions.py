"""The demo's exemptions come from the real lists: the runner scripts' commented-out lines and
PyTorch/XLA's DISABLED_TORCH_TESTS, imported as a project imports them, and they name the very
tests the demo uploads."""

import io
import json

from parity.demo.scenario.plan import UPSTREAM_DIR
from parity.management.commands.load_demo import DEMO_RULES, FIXTURE, Command
from parity.models import Triage
from parity.pure.globs import key_matches
from parity.pure.normalize.runner_ids import runner_identity

ISSUE_8796 = "https://github.com/pytorch/xla/issues/8796"


def test_the_demo_imports_tracked_and_intended_exemptions_from_the_real_lists(project):
    project.normalization_rules = DEMO_RULES
    project.save()
    fixture = json.loads(FIXTURE.read_text())

    Command(stdout=io.StringIO())._exempt(project, fixture)

    triages = {
        t.match: t for t in Triage.objects.select_related("issue").prefetch_related("backends")
    }
    profiler = triages["test/test_profiler.py"]
    assert (profiler.kind, profiler.issue.url) == ("tracked", ISSUE_8796)
    assert sorted(b.name for b in profiler.backends.all()) == ["cpu", "gpu"]
    oom = triages["examples/eager/train_decoder_only_eager.py"]
    assert (oom.kind, oom.note) == ("intended", "test/neuron/run_tests.sh comments it out: OOM")
    upstream = [t for t in triages.values() if t.match.startswith("**::")]
    assert len(upstream) >= 50 and {t.kind for t in upstream} == {"intended"}


def test_each_disabled_upstream_test_of_the_demo_is_named_by_an_exemption(project):
    project.normalization_rules = DEMO_RULES
    project.save()
    fixture = json.loads(FIXTURE.read_text())
    Command(stdout=io.StringIO())._exempt(project, fixture)
    regexes = list(Triage.objects.exclude(match="").values_list("match_regex", flat=True))

    for test in fixture["upstream"]["tests"]:
        # The key ingest gives the demo's upload of this test.
        key = runner_identity(
            {"classname": test["class"], "name": test["test"], "file": UPSTREAM_DIR + test["file"]},
            project.normalization(),
        ).key
        assert any(key_matches(regex, key) for regex in regexes), key
