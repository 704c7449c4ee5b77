"""Targets over the read API (docs/targets.md): the project's targets with their progress and
forecast (anyone who reads the project), and setting or removing one (its maintainers)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from parity import selectors
from parity.api.serializers.targets import TargetCreateSerializer, TargetSerializer
from parity.models import Target
from parity.services.targets import TargetRejected, TargetRequest, target_create, target_delete
from parity.web.access import ProjectAccess, django_user, project_for_request
from parity.web.openapi import ID_PATH, SLUG_PATH, error_responses


class TargetListView(APIView):
    permission_classes = [ProjectAccess]

    @extend_schema(
        parameters=[SLUG_PATH],
        responses={200: TargetSerializer(many=True), **error_responses(401, 403, 404, 429)},
        summary="Targets, each with its progress and forecast",
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_for_request(request, slug)
        rows = selectors.targets_progress(project=project)
        return Response(TargetSerializer(rows, many=True).data)

    @extend_schema(
        parameters=[SLUG_PATH],
        request=TargetCreateSerializer,
        responses={201: TargetSerializer, **error_responses(400, 401, 403, 404, 415, 429)},
        summary="Set a target on a backend (maintainers): its denominator is fixed now",
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for_request(request, slug)
        body = TargetCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            target = target_create(
                project=project,
                request=TargetRequest(**body.validated_data),
                user=django_user(request),
            )
        except TargetRejected as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        rows = selectors.targets_progress(project=project, backends=[target.backend.name])
        row = next(r for r in rows if r.target.pk == target.pk)
        return Response(TargetSerializer(row).data, status=status.HTTP_201_CREATED)


class TargetDetailView(APIView):
    permission_classes = [ProjectAccess]

    @extend_schema(
        parameters=[SLUG_PATH, ID_PATH],
        request=None,
        responses={
            204: OpenApiResponse(description="Removed."),
            **error_responses(401, 403, 404, 429),
        },
        summary="Remove a target (maintainers)",
    )
    def delete(self, request: Request, slug: str, pk: int) -> Response:
        project = project_for_request(request, slug)
        target_delete(target=get_object_or_404(Target, project=project, pk=pk))
        return Response(status=status.HTTP_204_NO_CONTENT)
