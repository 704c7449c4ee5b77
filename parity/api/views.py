"""The parity read API and triage endpoints: validate the query, call one selector or service,
return its serialization. Reads come from the engine's roll-up tables."""

from dataclasses import replace

from django.http import HttpResponse, HttpResponseNotModified
from django.shortcuts import get_object_or_404
from django.utils.http import parse_etags
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from parity import result_reads, selectors
from parity.api import serializers as s
from parity.api.serializers.manifest import attributes_from_query
from parity.models import Backend, Project, Reason, TestCase, Triage
from parity.models.reasons import ReasonKind
from parity.pure.normalize.runner_ids import RunnerIdError
from parity.services.exemption_lists import exemption_list_record
from parity.services.run_splits import run_split_pin
from parity.services.triage import TriageRejected, TriageRequest, triage_create, triage_delete
from parity.web.access import (
    ProjectAccess,
    django_user,
    principal_of,
    project_for_request,
    run_for_request,
)
from parity.web.openapi import ID_PATH, SLUG_PATH, error_responses
from parity.web.replica import reads_primary


def _query(serializer_class, request: Request):
    query = serializer_class(data=request.query_params.dict())
    query.is_valid(raise_exception=True)
    return query


class ParityView(APIView):
    permission_classes = [ProjectAccess]

    @extend_schema(
        parameters=[SLUG_PATH, s.ParityQuery],
        responses={200: s.ParitySerializer, **error_responses(400, 401, 403, 404, 429)},
        summary="Each backend's parity with the reference, and the file heatmap",
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_for_request(request, slug)
        query = _query(s.ParityQuery, request).validated_data
        aligned = (
            result_reads.aligned_view(project=project, cells=True) if query["aligned"] else None
        )
        overview = selectors.parity_overview(
            project=project, by_dir=query["dir"], aligned=aligned, files=query["files"]
        )
        return Response(s.ParitySerializer(overview).data)


class GapPagination(LimitOffsetPagination):
    """Limit and offset, the window read by ``gaps_window``: only the backends it spans are
    sorted. The aligned view's list is paged as any list."""

    def paginate_queryset(self, queryset, request, view=None):
        if isinstance(queryset, list):
            return super().paginate_queryset(queryset, request, view)
        self.request = request
        self.limit = self.get_limit(request)
        self.offset = self.get_offset(request)
        self.count, page = selectors.gaps_window(queryset, offset=self.offset, limit=self.limit)
        return page

    def get_paginated_response(self, data):
        response = super().get_paginated_response(data)
        unrun = getattr(self, "suites", None)
        if unrun is not None:  # the open list's suites never run, each one row
            response.data["suites"] = s.UnrunSuiteSerializer(unrun, many=True).data
        return response

    def get_paginated_response_schema(self, schema):
        schema = super().get_paginated_response_schema(schema)
        schema["properties"]["suites"] = {
            "type": "array",
            "description": "Suites the reference runs that a backend never ran or excludes, "
            "one row each: their tests' missing gaps there are left out of results (list "
            "them with ?suite=). Absent from the aligned view.",
            "items": {
                "type": "object",
                "properties": {
                    "suite": {"type": "string"},
                    "backend": {"type": "string"},
                    "status": {"type": "string", "enum": ["never_ran", "excluded"]},
                    "missing": {"type": "integer"},
                    "reason": {"type": "string"},
                    "issue_url": {"type": "string"},
                },
            },
        }
        return schema


class GapListView(generics.ListAPIView):
    permission_classes = [ProjectAccess]
    serializer_class = s.GapSerializer
    pagination_class = GapPagination

    @extend_schema(
        parameters=[SLUG_PATH, s.GapsQuery],
        responses={200: s.GapSerializer(many=True), **error_responses(400, 401, 403, 404, 429)},
        summary="Open gaps, or the gaps fixed since a day",
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        self.project = project_for_request(self.request, self.kwargs["slug"])
        query = _query(s.GapsQuery, self.request)
        self.aligned = query.validated_data["aligned"]
        self.suites = []
        if self.aligned:
            data = query.validated_data
            return result_reads.aligned_view(
                project=self.project,
                numbers=False,
                gaps=True,
                backend=data.get("backend"),
                state=data.get("state"),
            ).gaps
        folded, self.suites = selectors.gaps_folded(project=self.project, query=query.gaps_query())
        return selectors.gaps_list(project=self.project, query=folded)

    def paginate_queryset(self, queryset):
        self.paginator.suites = None if self.aligned else self.suites
        page = super().paginate_queryset(queryset)
        if page and not self.aligned:  # the page's code owners, in one query
            selectors.gaps_owners_attach(page, project=self.project)
            selectors.gaps_also_failing_attach(page, project=self.project)
            selectors.gaps_suite_attach(page, project=self.project)
        return page

    def get_serializer_class(self):
        # get_queryset, which reads ?aligned=, runs first.
        return s.AlignedGapSerializer if getattr(self, "aligned", False) else s.GapSerializer


class SkipReasonListView(APIView):
    permission_classes = [ProjectAccess]

    @extend_schema(
        parameters=[SLUG_PATH],
        responses={200: s.SkipReasonListSerializer, **error_responses(401, 403, 404, 429)},
        summary="Skip reasons of the current runs, with their counts per backend",
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_for_request(request, slug)
        found = selectors.skip_reasons_current(project=project)
        body = {
            "count": len(found.reasons),
            "untracked": sum(r.untracked for r in found.reasons),
            "no_reason": found.no_reason,
            "results": found.reasons,
        }
        return Response(s.SkipReasonListSerializer(body).data)


class SkipReasonTrendView(APIView):
    permission_classes = [ProjectAccess]

    @extend_schema(
        parameters=[SLUG_PATH, ID_PATH, s.TrendQuery],
        responses={200: s.ReasonTrendSerializer, **error_responses(400, 401, 403, 404, 429)},
        summary="A skip reason's daily counts, its last 90 days (?days=)",
    )
    def get(self, request: Request, slug: str, pk: int) -> Response:
        project = project_for_request(request, slug)
        window = _query(s.TrendQuery, request).validated_data["days"]
        reason = get_object_or_404(Reason, project=project, pk=pk, kind=ReasonKind.SKIP)
        days = selectors.reason_trend(project=project, reason=reason, days=window)
        body = {"id": reason.pk, "reason": reason.text, "days": days}
        return Response(s.ReasonTrendSerializer(body).data)


class TestListView(generics.ListAPIView):
    __test__ = False  # not a pytest test class
    permission_classes = [ProjectAccess]
    serializer_class = s.TestCaseSerializer

    @extend_schema(
        parameters=[SLUG_PATH, s.TestsQuery],
        responses={
            200: s.TestCaseSerializer(many=True),
            **error_responses(400, 401, 403, 404, 429),
        },
        summary="Search tests by canonical ID",
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        project = project_for_request(self.request, self.kwargs["slug"])
        q = _query(s.TestsQuery, self.request).validated_data["q"]
        return selectors.testcases_search(project=project, q=q)


class TestDetailView(APIView):
    __test__ = False
    permission_classes = [ProjectAccess]

    @extend_schema(
        parameters=[SLUG_PATH, ID_PATH],
        responses={200: s.TestCaseHistorySerializer, **error_responses(401, 403, 404, 429)},
        summary="A test on every backend, run by run",
    )
    def get(self, request: Request, slug: str, pk: int) -> Response:
        project = project_for_request(request, slug)
        test = get_object_or_404(TestCase, project=project, pk=pk)
        history = result_reads.testcase_history(project=project, test=test)
        body = s.TestCaseHistorySerializer(history).data
        lines = selectors.compare_states_of_test(project=project, test=test)
        body["compare"] = s.TestInViewSerializer(lines, many=True).data
        return Response(body)


# CI asks right after it saw its uploads done (on the primary): a replica behind would judge a
# run without its last results.
@reads_primary
class RunVerdictView(APIView):
    permission_classes = [ProjectAccess]

    @extend_schema(
        parameters=[ID_PATH, s.VerdictQuery],
        responses={200: s.VerdictSerializer, **error_responses(400, 401, 403, 404, 429)},
        summary="CI verdict: the gaps a run opens against its backend's previous current run",
    )
    def get(self, request: Request, pk: int) -> Response:
        run = run_for_request(request, pk)
        query = _query(s.VerdictQuery, request).validated_data
        limit, offset = query["gaps_limit"], query["gaps_offset"]
        verdict = result_reads.run_verdict_of_shard(
            run=run, shard=query["shard"], gaps_limit=limit, gaps_offset=offset
        )
        gaps_next = (
            replace_query_param(request.build_absolute_uri(), "gaps_offset", offset + limit)
            if limit > 0 and offset + limit < verdict.gaps_total
            else None
        )
        return Response(s.VerdictSerializer(verdict, context={"gaps_next": gaps_next}).data)


# A triage made over the API is listed at once (its client keeps no cookie of the write).
@reads_primary
class TriageListView(generics.ListAPIView):
    permission_classes = [ProjectAccess]
    serializer_class = s.TriageSerializer

    @extend_schema(
        parameters=[SLUG_PATH, s.TriagesQuery],
        responses={
            200: s.TriageSerializer(many=True),
            **error_responses(400, 401, 403, 404, 429),
        },
        summary="Triages, newest first, each with whether it is stale",
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        project = project_for_request(self.request, self.kwargs["slug"])
        name = _query(s.TriagesQuery, self.request).validated_data.get("backend")
        backend = _backend(project, name) if name else None
        return selectors.triages_list(project=project, backend=backend)

    @extend_schema(
        parameters=[SLUG_PATH],
        request=s.TriageCreateSerializer,
        responses={201: s.TriageSerializer, **error_responses(400, 401, 403, 404, 415, 429)},
        summary="Triage a gap, a test or a whole reason: link an issue, or mark it intended",
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for_request(request, slug)
        body = s.TriageCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            triage = triage_create(
                project=project,
                request=TriageRequest(**body.validated_data),
                user=django_user(request),
            )
        except TriageRejected as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(s.TriageSerializer(triage).data, status=status.HTTP_201_CREATED)


class TriageDetailView(APIView):
    permission_classes = [ProjectAccess]

    @extend_schema(
        parameters=[SLUG_PATH, ID_PATH],
        request=None,
        responses={
            204: OpenApiResponse(description="Removed."),
            **error_responses(401, 403, 404, 429),
        },
        summary="Remove a triage",
    )
    def delete(self, request: Request, slug: str, pk: int) -> Response:
        project = project_for_request(request, slug)
        triage = get_object_or_404(Triage, project=project, pk=pk)
        triage_delete(triage=triage, user=django_user(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class FilesRenderer(BaseRenderer):
    """``?format=files``: a manifest's files as text/plain, one path a line (for shell loops)."""

    media_type = "text/plain"
    format = "files"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        if "files" not in data:  # an error: its message, as text
            return "".join(f"{value}\n" for value in data.values()).encode()
        return "".join(f"{path}\n" for path in data["files"]).encode()


class ManifestView(APIView):
    permission_classes = [ProjectAccess]
    renderer_classes = [JSONRenderer, FilesRenderer]

    @extend_schema(
        parameters=[SLUG_PATH, s.ManifestQuery],
        responses={
            200: s.ManifestSerializer,
            304: OpenApiResponse(description="Unchanged since the ETag sent in If-None-Match."),
            **error_responses(400, 401, 403, 404, 429),
        },
        summary="What CI runs on a backend: its exemptions and the test files to run",
    )
    def get(self, request: Request, slug: str) -> HttpResponse:
        project = project_for_request(request, slug)
        query = _query(s.ManifestQuery, request).validated_data
        named = _backend(project, query["backend"])
        attributes = attributes_from_query(request.query_params.getlist("attr"))
        backend = selectors.backend_for_attributes(
            project=project, backend=named, attributes=attributes or {}
        )
        manifest = selectors.manifest_build(project=project, backend=backend, attributes=attributes)
        split = None
        if query["run"]:
            token = principal_of(request).token
            split = run_split_pin(
                project=project,
                backend=named,  # the family the shards name, not a variant one of them created
                key=query["run"],
                files=manifest.files,
                durations=manifest.durations,
                create=token is not None and token.may_upload_to(named),
            )
        if split is not None:
            manifest = replace(manifest, files=split.files, durations=split.durations)
        exemption_list_record(backend=backend, manifest=manifest)
        etag = f'"{manifest.etag}-{request.accepted_renderer.format}"'
        if etag in parse_etags(request.headers.get("If-None-Match", "")):
            return HttpResponseNotModified(headers={"ETag": etag})
        body = manifest.as_dict()
        body["split"] = {"run": split.key, "pinned_at": split.created_at} if split else None
        return Response(s.ManifestSerializer(body).data, headers={"ETag": etag})


class ManifestResolveView(APIView):
    permission_classes = [ProjectAccess]
    reads_by_post = True  # it only asks: anyone may on a public project

    @extend_schema(
        parameters=[SLUG_PATH],
        request=s.ResolveRequestSerializer,
        responses={200: s.ResolveSerializer, **error_responses(400, 401, 403, 404, 415, 429)},
        summary="Which of a runner's tests a backend's exemptions name, with the skip message",
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for_request(request, slug, reading=True)
        body = s.ResolveRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        attributes = body.validated_data["attributes"]
        backend = selectors.backend_for_attributes(
            project=project,
            backend=_backend(project, body.validated_data["backend"]),
            attributes=attributes or {},
        )
        tests = body.validated_data["tests"]
        manifest = selectors.manifest_build(project=project, backend=backend, attributes=attributes)
        try:
            exempted = selectors.manifest_resolve(
                project=project, backend=backend, tests=tests, exemptions=manifest.exemptions
            )
        except RunnerIdError as exc:
            raise ValidationError({"tests": [str(exc)]}) from None
        answer = {
            "backend": backend.name,
            "version": exemption_list_record(backend=backend, manifest=manifest),
            "count": len(exempted),
            "exempted": exempted,
        }
        return Response(s.ResolveSerializer(answer).data)


def _backend(project: Project, name: str) -> Backend:
    backend = project.backend_named(name)
    if backend is None:
        raise ValidationError(
            {"backend": [f"Unknown backend '{name}'. Known: {project.backend_names()}."]}
        )
    return backend
