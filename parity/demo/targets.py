"""The demo's targets (docs/targets.md): one per pytorch-xla backend but the reference, set after
the history loads, so each denominator is that backend's expected tests today and the trend page
draws each target and its forecast from the four weeks of snapshots."""

import datetime

from parity.models import Project
from parity.services.targets import TargetRejected, TargetRequest, target_create

# (backend, score, days from today, note), set where the demo's four weeks leave each backend:
# GPU gains about a test a day and is on track; TPU gains one every two weeks, too slow for its
# date (at risk); Neuron loses tests (no progress).
DEMO_TARGETS = (
    ("gpu", 0.70, 45, "GPU: the CUDA runner's skips triaged before the release branch"),
    ("tpu", 0.46, 60, "TPU: the op tests its runner skips, by the quarter's end"),
    ("neuron", 0.35, 120, "Neuron's runner takes the upstream op tests"),
)


def demo_targets_set(project: Project, *, today: datetime.date) -> int:
    """Set the demo's targets on ``project``; returns how many were set (a backend without a
    score yet, as with ``load_demo --days 1``, gets none)."""
    made = 0
    for backend, score, days, note in DEMO_TARGETS:
        if project.backend_named(backend) is None:
            continue
        request = TargetRequest(
            backend=backend,
            score=score,
            due=today + datetime.timedelta(days=days),
            note=note,
        )
        try:
            target_create(project=project, request=request)
        except TargetRejected:  # no scored run yet
            continue
        made += 1
    return made
