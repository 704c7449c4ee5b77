"""The suites matrix over the read API: the page's ``p/<slug>/suites/`` as JSON, from the same
selector (docs/suites.md)."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from parity import selectors
from parity.api.serializers.suites import SuiteMatrixSerializer
from parity.web.access import ProjectAccess, project_for_request
from parity.web.openapi import SLUG_PATH, error_responses


class SuiteMatrixView(APIView):
    permission_classes = [ProjectAccess]

    @extend_schema(
        parameters=[SLUG_PATH],
        responses={200: SuiteMatrixSerializer, **error_responses(401, 403, 404, 429)},
        summary="Suites × backends: whether each suite runs on each backend, and its health",
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_for_request(request, slug)
        return Response(SuiteMatrixSerializer(selectors.suite_matrix(project=project)).data)
