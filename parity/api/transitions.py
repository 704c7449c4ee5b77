"""Version transitions over the read API: the project's list, newest first, and one transition
with its tests of each kind (read from the two runs' results, ``limit`` of each list from
``offset``). docs/transitions.md."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from parity import result_reads, selectors
from parity.api.serializers.transitions import (
    MovedListSerializer,
    TransitionDetailSerializer,
    TransitionQuery,
    TransitionSerializer,
)
from parity.web.access import ProjectAccess, project_for_request
from parity.web.openapi import ID_PATH, SLUG_PATH, error_responses


class TransitionListView(generics.ListAPIView):
    permission_classes = [ProjectAccess]
    serializer_class = TransitionSerializer

    @extend_schema(
        parameters=[SLUG_PATH],
        responses={200: TransitionSerializer(many=True), **error_responses(401, 403, 404, 429)},
        summary="Version transitions, newest first: a variant's run attributes changed",
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        project = project_for_request(self.request, self.kwargs["slug"])
        return selectors.transitions_list(project=project)


class TransitionDetailView(APIView):
    permission_classes = [ProjectAccess]

    @extend_schema(
        parameters=[SLUG_PATH, ID_PATH, TransitionQuery],
        responses={200: TransitionDetailSerializer, **error_responses(400, 401, 403, 404, 429)},
        summary="One version transition: its Fail→Pass, Pass→Fail, New and Gone tests",
    )
    def get(self, request: Request, slug: str, pk: int) -> Response:
        project = project_for_request(request, slug)
        query = TransitionQuery(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        kind, limit, offset = (query.validated_data.get(k) for k in ("kind", "limit", "offset"))
        transition = selectors.transition_get(project=project, pk=pk)
        if transition is None:
            raise Http404("No such transition.")
        detail = result_reads.transition_detail(
            transition=transition,
            offsets=dict.fromkeys(transition.counts, offset),
            limit=limit,
        )
        lists = [lst for lst in detail.lists if kind in (None, lst.kind)]
        body = TransitionSerializer(transition, context={"request": request}).data
        body["expired"] = detail.expired
        body["lists"] = MovedListSerializer(lists, many=True).data
        return Response(body)
