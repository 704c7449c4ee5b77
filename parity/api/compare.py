"""Compare views over the read API: the project's list and one view's kept report, its tests a
page at a time with their state and sentence (``parity.selectors.compare_kept``).
docs/compare-views.md."""

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param
from rest_framework.views import APIView

from parity import selectors
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
        summary="One compare view's kept report: a page of its tests, each with its counts, "
        "state and sentence",
    )
    def get(self, request: Request, slug: str, name: str) -> Response:
        project = project_for_request(request, slug)
        query = CompareQuery(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        state = query.validated_data.get("state")
        limit, offset = query.validated_data["limit"], query.validated_data["offset"]
        view = selectors.compare_view_of(project=project, name=name)
        if view is None:
            raise Http404("No such compare view.")
        report = selectors.compare_kept(
            view=view, state=CompareState(state) if state else None, offset=offset, limit=limit
        )
        url = request.build_absolute_uri()
        after = offset + limit
        data = {
            "view": report.view,
            "computed_at": report.computed_at,
            "since": report.since,
            "sample_runs": report.sample_runs,
            "basis_runs": report.basis_runs,
            "counts": {},
            "total": report.total,
            "next": replace_query_param(url, "offset", after) if after < report.total else None,
            "previous": (
                None
                if offset == 0
                else remove_query_param(url, "offset")
                if offset <= limit
                else replace_query_param(url, "offset", offset - limit)
            ),
            "rows": report.rows,
        }
        body = CompareReportSerializer(data, context={"request": request}).data
        body["counts"] = {s.value: n for s, n in report.counts.items()}
        return Response(body)
