"""Compare views over the read API: the project's list and one view's report, every test with
its state and sentence (read from the window's results, ``parity.result_reads.compare_report``).
docs/compare-views.md."""

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from parity import result_reads, selectors
from parity.api.serializers.compare import (
    CompareQuery,
    CompareReportSerializer,
    CompareViewSerializer,
)
from parity.pure.compare import CompareState
from parity.web.access import ProjectAccess, project_for_request
from parity.web.openapi import SLUG_PATH, error_responses

NAME_PATH = OpenApiParameter(
    "name", str, OpenApiParameter.PATH, pattern=r"^[-a-zA-Z0-9_]+$", description="A compare view."
)


class CompareViewListView(generics.ListAPIView):
    permission_classes = [ProjectAccess]
    serializer_class = CompareViewSerializer
    pagination_class = None

    @extend_schema(
        parameters=[SLUG_PATH],
        responses={200: CompareViewSerializer(many=True), **error_responses(401, 403, 404, 429)},
        summary="Compare views: a sample variant judged against a basis by Fisher's exact test",
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        project = project_for_request(self.request, self.kwargs["slug"])
        return selectors.compare_views_of(project=project)


class CompareReportView(APIView):
    permission_classes = [ProjectAccess]

    @extend_schema(
        parameters=[SLUG_PATH, NAME_PATH, CompareQuery],
        responses={200: CompareReportSerializer, **error_responses(400, 401, 403, 404, 429)},
        summary="One compare view's report: each test's counts, state and sentence",
    )
    def get(self, request: Request, slug: str, name: str) -> Response:
        project = project_for_request(request, slug)
        query = CompareQuery(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        state = query.validated_data.get("state")
        view = selectors.compare_view_of(project=project, name=name)
        if view is None:
            raise Http404("No such compare view.")
        report = result_reads.compare_report(
            view=view, state=CompareState(state) if state else None
        )
        body = CompareReportSerializer(report, context={"request": request}).data
        body["counts"] = {s.value: n for s, n in report.counts.items()}
        return Response(body)
