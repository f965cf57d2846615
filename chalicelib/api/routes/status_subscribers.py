"""Status page subscribers: the public subscribe, confirm and unsubscribe routes, and the
managers' list, count and remove.

Public routes carry no bearer. `POST /status/{slug}/subscribe` takes the page's form
(application/x-www-form-urlencoded: answered with HTML pages, a problem shown next to its field)
or JSON (answered with JSON outside the envelope, errors as the other public JSON routes); it
counts against the caller address's `status_subscribe` bucket, and the address named against its
own hourly budget (chalicelib/subscriber/service.py). The confirm and unsubscribe links open a
page with one button (GET changes nothing: mail scanners follow links); the button POSTs to the
same URL, and so does a mail client's RFC 8058 one-click unsubscribe
(`List-Unsubscribe=One-Click`), whatever body it sends. These count against `public_status`: a
mail provider's one-click POSTs come from few addresses. The request pipeline charges both
buckets before a handler runs; a form post's errors, that 429 included, are answered as pages
(`_form_error_page`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qs

from chalice.app import Request, Response

from chalicelib.api.credential_kinds import PUBLIC
from chalicelib.api.error_render import ErrorFamily, public_headers
from chalicelib.api.operation import Call, Handler, OperationGroup, per_address, query_lists
from chalicelib.api.validation import parse_body, single_values
from chalicelib.errors import AppError, NotFound, PayloadTooLarge, RateLimited, ValidationFailed
from chalicelib.oncall.models import DeletedV1
from chalicelib.pagination import Page, paginate
from chalicelib.settings import Settings
from chalicelib.statuspage.pages import public_url
from chalicelib.subscriber import service
from chalicelib.subscriber.links import LinkPurpose
from chalicelib.subscriber.models import (
    LinkQuery,
    SubscribeAccepted,
    SubscriberCountV1,
    SubscribeRequest,
    SubscriberListQuery,
    SubscriberV1,
)

api = OperationGroup(__name__, tag="status-subscribers")

BASE = "/status/{slug}"
MANAGED = "/api/v1/status-pages/{page_id}/subscribers"
FORM_TYPE = "application/x-www-form-urlencoded"
MAX_FORM_BYTES = 16 * 1024
HTML = "text/html; charset=utf-8"
ACCEPTED = (
    "If the address can be subscribed, a confirmation email is on its way; nothing else is sent until it is confirmed."
)
_LINK_ERRORS = " A token we did not sign for this purpose: 400; a confirm link whose subscriber expired or left: 404."


def _headers(content_type: str, extra: Mapping[str, str] | None = None) -> dict[str, str | list[str]]:
    # Never cached; a token in the URL is not sent on to other sites.
    return {
        **(extra or {}),
        **public_headers(content_type),
        "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer",
    }


def _html(body: str, status: int, extra: Mapping[str, str] | None = None) -> Response:
    return Response(body=body, status_code=status, headers=_headers(HTML, extra))


def _is_form(request: Request) -> bool:
    return str(request.headers.get("content-type") or "").split(";")[0].strip().lower() == FORM_TYPE


def _form_as_json(request: Request) -> bytes:
    """The form's fields as the JSON body the model reads: `email`, `component_ids` (repeated), `url`."""
    raw = request.raw_body or b""
    body = raw.encode() if isinstance(raw, str) else raw
    if len(body) > MAX_FORM_BYTES:
        raise PayloadTooLarge("The form is larger than 16 KiB.")
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=200)
    except (UnicodeDecodeError, ValueError):
        raise ValidationFailed("The form is not UTF-8 form-encoded fields.") from None
    document: dict[str, Any] = {"email": (fields.get("email") or [""])[0]}
    document["component_ids"] = [value for value in fields.get("component_ids", []) if value]
    if (fields.get("url") or [""])[0].strip():
        document["url"] = fields["url"][0]
    return json.dumps(document).encode()


def _problems(error: ValidationFailed) -> dict[str, str]:
    """Each field's first problem, by the form's field name (`component_ids.2` -> `component_ids`)."""
    found: dict[str, str] = {}
    details = error.details if isinstance(error.details, dict) else {}
    for problem in details.get("fields") or []:
        name = str(problem.get("field", "")).split(".")[0]
        message = str(problem.get("message", "is invalid"))
        if name == "email":
            message = "Enter an email address like name@example.com."
        found.setdefault(name if name in ("email", "component_ids", "url") else "form", message)
    return found or {"form": error.message}


def _form_fields(request: Request) -> dict[str, list[str]]:
    """The form's fields as posted (none when the form itself could not be read)."""
    try:
        document = json.loads(_form_as_json(request))
    except AppError:
        return {}
    return {name: value if isinstance(value, list) else [value] for name, value in document.items()}


def _form_error_page(request: Request, path: Mapping[str, str], error: AppError, settings: Settings) -> Response | None:
    """A form post's error as a page: the form again (400), or the page's other error pages. A JSON
    request's errors are the family's (None)."""
    if not _is_form(request):
        return None
    from chalicelib.statuspage import page_html, public
    from chalicelib.statuspage.subscribe_form import subscribe_form
    from chalicelib.subscriber import pages

    slug = path["slug"]
    fields = _form_fields(request) if isinstance(error, ValidationFailed) else {}
    view = public.load_view(slug) if not isinstance(error, RateLimited) else None
    if isinstance(error, RateLimited):
        return _html(
            pages.too_many("", public_url(slug, settings=settings), error.headers.get("Retry-After")),
            429,
            error.headers,
        )
    if view is None or isinstance(error, NotFound):
        return _html(page_html.render_not_found(slug), 404, error.headers)
    name, url = view.structure.page.name or slug, public_url(slug, settings=settings)
    if not isinstance(error, ValidationFailed):
        return _html(page_html.render_error("Could not subscribe", error.message), error.status, error.headers)
    form = subscribe_form(
        public.components(view),
        action=pages.SUBSCRIBE_ACTION,
        email=(fields.get("email") or [""])[0],
        chosen=fields.get("component_ids", []),
        problems=_problems(error),
    )
    return _html(pages.form_again(name, url, form), 400, error.headers)


@api.raw(
    "POST",
    BASE + "/subscribe",
    operation_id="subscribeToStatusPage",
    credential=PUBLIC,
    bucket=per_address("status_subscribe"),
    family=ErrorFamily.PUBLIC_JSON,
    error_page=_form_error_page,
    summary="Follow a status page: by email, or with a webhook (double opt-in)",
    body=SubscribeRequest,
    response=SubscribeAccepted,
    status=202,
    errors=(400, 404, 413, 429),
    description="Unauthenticated. JSON here; the page's own form posts the same fields as "
    f"{FORM_TYPE} and gets HTML pages back (a problem shown next to its field, 400). A new or pending "
    "address gets one confirmation email with a signed link; a confirmed one gets nothing. The answer is the "
    "same either way. 429 with Retry-After past the caller address's `status_subscribe` budget, or past the "
    "email address's budget of subscribe requests per hour (all pages).",
)
def subscribe(call: Call) -> Response:
    slug, form = call.path["slug"], _is_form(call.request)
    if query_lists(call.request):
        names = sorted(query_lists(call.request))
        raise ValidationFailed.for_fields([{"field": n, "message": "unknown query parameter"} for n in names])
    body = parse_body(SubscribeRequest, _form_as_json(call.request) if form else call.request.raw_body)
    wanted = service.SubscribeInput(email=body.email, component_ids=list(body.component_ids), url=body.url)
    name = service.subscribe(slug=slug, wanted=wanted, now=call.now, settings=call.settings)
    if form:
        from chalicelib.subscriber import pages

        return _html(pages.check_inbox(name, public_url(slug, settings=call.settings)), 202)
    answer = SubscribeAccepted(accepted=True, message=ACCEPTED).model_dump(mode="json")
    return Response(body=json.dumps(answer), status_code=202, headers=_headers("application/json"))


# ---------------------------------------------------------------- the links in the emails


def _token(request: Request) -> str | None:
    params = query_lists(request)
    unknown = sorted(set(params) - {"token"})
    if unknown:
        raise ValidationFailed.for_fields([{"field": n, "message": "unknown query parameter"} for n in unknown])
    return single_values(params).get("token")


def _link(call: Call, purpose: LinkPurpose, *, act: bool) -> Response:
    """A link's page: GET shows its one button (or where things stand); POST does what it says."""
    from chalicelib.subscriber import pages

    slug, now = call.path["slug"], call.now
    token = _token(call.request)
    try:
        if not act:
            seen = service.preview(token, purpose, now, settings=call.settings)
            if seen.outcome is None:
                return _html(
                    pages.button_page(seen.page_name, public_url(slug, settings=call.settings), purpose, token or ""),
                    200,
                )
        elif purpose == "confirm":
            seen = service.confirm(token, now, settings=call.settings)
        else:
            seen = service.unsubscribe(token, now, settings=call.settings)
    except service.LinkNotValid as refused:
        return _html(pages.link_problem(refused.status), refused.status)
    assert seen.outcome is not None
    return _html(
        pages.outcome_page(seen.page_name, public_url(slug, settings=call.settings), seen.outcome, seen.webhook_secret),
        200,
    )


def _link_operation(
    method: str, purpose: LinkPurpose, operation_id: str, summary: str, description: str
) -> Callable[[Handler], Handler]:
    """A link's page: no credential (the link's token is checked by the service: a refused one is
    a page that says why), the caller address's `public_status` bucket."""
    return api.raw(
        method,
        f"{BASE}/{purpose}",
        operation_id=operation_id,
        credential=PUBLIC,
        bucket=per_address("public_status"),
        family=ErrorFamily.PUBLIC_HTML,
        content_type="text/html",
        query=LinkQuery,
        summary=summary,
        errors=(400, 404, 429),
        description=description + _LINK_ERRORS + " Never cached.",
    )


@_link_operation(
    "GET",
    "confirm",
    "showStatusConfirmLink",
    "A confirmation link's page (text/html): one button that confirms",
    "Following the link changes nothing; the page's button POSTs to the same URL.",
)
def show_confirm(call: Call) -> Response:
    return _link(call, "confirm", act=False)


@_link_operation(
    "POST",
    "confirm",
    "confirmStatusSubscription",
    "Confirm a subscription (the confirmation page's button; text/html)",
    "Idempotent: a second POST answers that it was confirmed already. Any body is ignored.",
)
def confirm(call: Call) -> Response:
    return _link(call, "confirm", act=True)


@_link_operation(
    "GET",
    "unsubscribe",
    "showStatusUnsubscribeLink",
    "An unsubscribe link's page (text/html): one button that unsubscribes",
    "Following the link changes nothing; the page's button POSTs to the same URL.",
)
def show_unsubscribe(call: Call) -> Response:
    return _link(call, "unsubscribe", act=False)


@_link_operation(
    "POST",
    "unsubscribe",
    "unsubscribeFromStatusPage",
    "Unsubscribe (the page's button, or a mail client's RFC 8058 one-click POST; text/html)",
    "Deletes the subscriber and its address guard in one transaction. Idempotent: a second POST answers "
    "that it was removed already. Any body is ignored (RFC 8058 sends List-Unsubscribe=One-Click).",
)
def unsubscribe(call: Call) -> Response:
    return _link(call, "unsubscribe", act=True)


# ---------------------------------------------------------------- managers


@api.operation(
    "GET",
    MANAGED,
    operation_id="listStatusSubscribers",
    summary="List a status page's subscribers, oldest first",
    scope="status:read",
    query=SubscriberListQuery,
    response=Page[SubscriberV1],
    errors=(400, 404),
    description="Filters: status (pending | confirmed), kind (email | webhook). Pending subscribers whose "
    "confirmation expired are not listed.",
)
def list_subscribers(call: Call) -> Any:
    query: SubscriberListQuery = call.query
    found = service.list_subscribers(
        organization_id=call.principal.organization_id,
        page_id=call.path["page_id"],
        status=query.status,
        kind=query.kind,
        now=call.now,
    )
    return paginate([SubscriberV1.of(s) for s in found], limit=query.limit, offset=query.offset)


@api.operation(
    "GET",
    MANAGED + "/count",
    operation_id="countStatusSubscribers",
    summary="Count a status page's subscribers by status and kind",
    scope="status:read",
    response=SubscriberCountV1,
    errors=(404,),
)
def count_subscribers(call: Call) -> SubscriberCountV1:
    counted = service.count_subscribers(
        organization_id=call.principal.organization_id, page_id=call.path["page_id"], now=call.now
    )
    return SubscriberCountV1(**counted)


@api.operation(
    "DELETE",
    MANAGED + "/{subscriber_id}",
    operation_id="deleteStatusSubscriber",
    summary="Remove a subscriber (it is told nothing)",
    scope="status:write",
    response=DeletedV1,
    errors=(404, 409),
    description="Deletes the subscriber and its address guard in one transaction; the address may subscribe again.",
)
def delete_subscriber(call: Call) -> DeletedV1:
    subscriber_id = call.path["subscriber_id"]
    service.remove_subscriber(
        organization_id=call.principal.organization_id,
        page_id=call.path["page_id"],
        subscriber_id=subscriber_id,
        now=call.now,
    )
    return DeletedV1(id=subscriber_id, deleted=True)
