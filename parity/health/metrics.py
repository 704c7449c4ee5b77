"""``/metrics`` in Prometheus' text format (docs/health.md), off unless ``PARITY_METRICS_TOKEN``
is set. Two parts:

- request counts and latencies, counted by ``RequestMetricsMiddleware`` in each web process,
  and task times (``parity.telemetry.task_metrics``) in each worker process. Under gunicorn's and
  Celery's several processes each writes its own files in ``PROMETHEUS_MULTIPROC_DIR`` and a
  scrape sums them (``parity.telemetry.prometheus``); without that directory a scrape would see
  only the process that answered it.
- parity's own numbers, read when scraped (``ParityCollector``) from Postgres and the broker,
  so every process answers the same and no worker needs to export anything.
"""

import os
import time
from collections.abc import Callable, Iterator

import redis
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from parity.selectors import operations
from parity.telemetry import prometheus  # noqa: F401  (multiprocess files before any metric)
from parity.telemetry.heartbeat import broker_redis

REQUESTS = Counter("parity_http_requests", "HTTP requests answered", ["method", "view", "status"])
LATENCY = Histogram(
    "parity_http_request_seconds",
    "Time to answer an HTTP request",
    ["method", "view"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)


class RequestMetricsMiddleware:
    """Counts and times each request by its URL pattern's name (a bounded label set; a path no
    pattern matches counts as ``unmatched``). Placed first, so probes count too."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = request.resolver_match
        view = (match.view_name or "unnamed") if match else "unmatched"
        LATENCY.labels(request.method, view).observe(time.perf_counter() - started)
        REQUESTS.labels(request.method, view, str(response.status_code)).inc()
        return response


class ParityCollector:
    def collect(self) -> Iterator[Metric]:
        uploads = GaugeMetricFamily(
            "parity_uploads", "Uploads not done, by status", labels=["status"]
        )
        for status, count in operations.uploads_by_status().items():
            uploads.add_metric([status], count)
        yield uploads
        ingest = operations.ingest_times_recent()
        yield GaugeMetricFamily(
            "parity_ingest_recent", "Uploads received in the last hour and done", ingest.count
        )
        yield GaugeMetricFamily(
            "parity_ingest_recent_mean_seconds",
            "Mean ingest time of the uploads received in the last hour",
            ingest.mean_seconds,
        )
        yield GaugeMetricFamily(
            "parity_ingest_recent_max_seconds",
            "Longest ingest time of the uploads received in the last hour",
            ingest.max_seconds,
        )
        lag = operations.tracker_sync_lag_seconds()
        if lag is not None:
            yield GaugeMetricFamily(
                "parity_tracker_sync_lag_seconds",
                "Seconds since the least recently synced tracking issue was read",
                lag,
            )
        yield CounterMetricFamily(
            "parity_digests_sent", "Digest emails sent", operations.digests_sent()
        )
        yield from _queue_depth()


def _queue_depth() -> Iterator[Metric]:
    """Messages waiting per Celery queue (kombu keeps a queue as a Redis list); nothing with
    eager tasks or the broker out of reach (``/readyz`` names that)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return
    queues = list(settings.CELERY_TASK_QUEUES or [settings.CELERY_TASK_DEFAULT_QUEUE])
    try:
        client = broker_redis()
        depths = [client.llen(queue) for queue in queues]
    except redis.RedisError:
        return
    family = GaugeMetricFamily("parity_queue_depth", "Tasks waiting", labels=["queue"])
    for queue, depth in zip(queues, depths, strict=True):
        family.add_metric([queue], depth)
    yield family


def metrics_text() -> bytes:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        requests = CollectorRegistry()
        multiprocess.MultiProcessCollector(requests)
    else:
        requests = REGISTRY
    own = CollectorRegistry()
    own.register(ParityCollector())
    return generate_latest(requests) + generate_latest(own)
