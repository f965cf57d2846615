"""The one request pipeline: every routed request, whatever its family, is answered here.

1. admission (chalicelib.api.admission): the operation's bucket, its credential kind, its scope;
2. the input: an API operation's body and query parsed into its models (chalicelib.api.validation),
   a body refused where none is expected, unknown query parameters refused; a raw operation reads
   its own (a provider's format, a form);
3. the handler, at most once per Idempotency-Key where the operation is `idempotent`
   (chalicelib.api.idempotent);
4. the envelope: an API operation's data in the success envelope; a raw operation's Response;
5. an error raised anywhere above, an unexpected exception included, rendered once: by the
   operation's own error page if it has one, else in its family (chalicelib.api.error_render).
   Chalice would turn any exception that reaches it into its own 500;
6. the admission's rate-limit headers on the answer, errors included, once;
7. the family's after-answer steps (`after_answer`): what must see every answer of a family, with
   what the handler left for them (`call.outcome`): each integration's event log
   (chalicelib.api.event_log) is one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chalice.app import Request, Response

from chalicelib import clock
from chalicelib.api import envelope
from chalicelib.api.admission import Admission, admit
from chalicelib.api.credential_kinds import Inbound
from chalicelib.api.error_render import ErrorFamily, render
from chalicelib.api.operation import BoundOperation, Call, Envelope, Operation, Result, query_lists
from chalicelib.api.validation import check_no_body, parse_body, parse_query
from chalicelib.errors import AppError, InternalError, ServiceUnavailable, ValidationFailed
from chalicelib.settings import get_settings
from chalicelib.store import throttled

logger = logging.getLogger("tocsin.api")


@dataclass(frozen=True)
class Answered:
    """What an after-answer step sees: the operation, its admission, the answer and its error."""

    operation: Operation
    admission: Admission
    response: Response
    error: AppError | None
    outcome: Any = None  # what the handler left on its call (None when it did not run)


AfterAnswer = Callable[[Answered], None]
_AFTER_ANSWER: dict[ErrorFamily, list[AfterAnswer]] = {}


def after_answer(*families: ErrorFamily) -> Callable[[AfterAnswer], AfterAnswer]:
    """Run a step after every answer of these families, errors included. A failing step is logged
    and changes nothing: the answer is already made."""

    def register(step: AfterAnswer) -> AfterAnswer:
        for family in families:
            _AFTER_ANSWER.setdefault(family, []).append(step)
        return step

    return register


def answer(entry: BoundOperation, request: Request, path_params: dict[str, str]) -> Response:
    operation = entry.operation
    # The request's entry point: the clock and the settings are read once here and handed down.
    admission = Admission(Inbound(request, path_params, clock.now(), get_settings()))
    error: AppError | None = None
    call: Call | None = None  # the handler's, once admitted: it may leave an outcome for step 7
    try:
        response = admit(operation, admission) or _respond(entry, call := call_of(admission))
    except AppError as refused:
        error = refused
    except Exception as unexpected:
        error = unexpected_error(operation.operation_id, unexpected, message=operation.unexpected)
    if error is not None:
        error = error.with_headers(admission.rate_headers())
        response = _render(operation, admission.inbound, error)
    else:
        response.headers.update(admission.rate_headers())
    _run_after_answer(Answered(operation, admission, response, error, call.outcome if call is not None else None))
    return response


def unexpected_error(where: str, error: Exception, message: str | None = None) -> AppError:
    """The answer to an exception no code expected, for every route family: 503
    SERVICE_UNAVAILABLE (with Retry-After) when DynamoDB kept throttling or failing transiently
    after botocore's retries, else 500 INTERNAL_ERROR (with `message`). Logged."""
    if throttled(error):
        logger.warning("storage throttled in %s", where, exc_info=error)
        return ServiceUnavailable()
    logger.error("unhandled error in %s", where, exc_info=error)
    return InternalError(message)


def call_of(admission: Admission) -> Call:
    """What the handler of an admitted request receives."""
    inbound = admission.inbound
    return Call(
        principal=admission.principal,
        body=None,
        query=None,
        path=dict(inbound.path),
        request=inbound.request,
        now=inbound.now,
        settings=inbound.settings,
        credential=admission.credential,
    )


def _respond(entry: BoundOperation, call: Call) -> Response:
    operation = entry.operation
    if operation.envelope is Envelope.RAW:
        response = entry.handler(call)
        if not isinstance(response, Response):
            raise TypeError(f"{operation.operation_id} is raw: its handler must answer a Response")
        return response
    _parse_input(operation, call)
    result = _run_handler(entry, call)
    if isinstance(result, Response):
        return result
    if isinstance(result, Result):
        return envelope.success_response(result.data, status=result.status or operation.status, headers=result.headers)
    return envelope.success_response(result, status=operation.status)


def _parse_input(operation: Operation, call: Call) -> None:
    raw_body, params = call.request.raw_body, query_lists(call.request)
    if operation.body is None:
        check_no_body(raw_body)
    else:
        call.body = parse_body(operation.body, raw_body)
    if operation.query is not None:
        call.query = parse_query(operation.query, params)
    elif params:
        # Unknown parameters are refused rather than silently ignored.
        names = sorted(params)
        raise ValidationFailed.for_fields([{"field": n, "message": "unknown query parameter"} for n in names])


def _run_handler(entry: BoundOperation, call: Call) -> Any:
    if entry.operation.idempotent is None:
        return entry.handler(call)
    from chalicelib.api.idempotent import create_once

    return create_once(call, entry.operation, lambda: envelope.to_jsonable(entry.handler(call)))


def _render(operation: Operation, inbound: Inbound, error: AppError) -> Response:
    path_params = dict(inbound.path)
    if operation.error_page is not None:
        own = operation.error_page(inbound.request, path_params, error, inbound.settings)
        if own is not None:
            return own
    return render(operation.family, error, path_params, app_url=inbound.settings.app_url())


def _run_after_answer(answered: Answered) -> None:
    for step in _AFTER_ANSWER.get(answered.operation.family, ()):
        try:
            step(answered)
        except Exception:
            logger.exception("after-answer step %s failed", getattr(step, "__name__", step))
