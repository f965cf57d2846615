"""The console's pages and actions: one place for its page answers, forms, confirmations and errors.

Every console route is a GET page or a POST action registered through `ConsolePages`, an
operation of the request pipeline (chalicelib.api.pipeline) like any route:
- its credential is the browser's session (chalicelib.console.visits): a page without a live
  session redirects to the sign-in page (which brings the person back); a POST must carry the
  form's CSRF token (403 and nothing happens otherwise). The pipeline charges the session's or
  the address's bucket;
- an action names the scope it needs, the same scope as the API operation it mirrors; a person
  whose role lacks it gets 403 (templates hide the buttons too, through `can`);
- an action's bad input (400, 404, 409) re-renders its page with the message and that status;
  other errors are rendered as the console's error page by chalicelib.api.error_render;
- success is a 303 redirect (post/redirect/get) with a notice key the next page shows.

Handlers call the same service functions as the API's routes: a rule lives in its domain once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit

from chalice.app import Request, Response
from pydantic import BaseModel, ValidationError

from chalicelib import templates
from chalicelib.api.credential_kinds import CredentialKind
from chalicelib.api.error_render import ErrorFamily, console_headers
from chalicelib.api.operation import CREDENTIAL_BUCKET, Call, OperationGroup, query_lists
from chalicelib.api.validation import fields_from
from chalicelib.auth.principal import Principal
from chalicelib.console.form_problems import Labels, form_labels, headline, label_on_page, labelled
from chalicelib.console.sessions import ConsoleSession
from chalicelib.console.visits import (
    CONSOLE_SESSION,
    CONSOLE_SESSION_OR_ANONYMOUS,
    CSRF_FIELD,
    Visit,
    app_path,
    redirect,
    route_path,
    safe_next,
)
from chalicelib.directory.users import User, zone_of
from chalicelib.errors import AppError, ValidationFailed
from chalicelib.settings import Settings
from chalicelib.zones import DEFAULT_ZONE

ModelT = TypeVar("ModelT", bound=BaseModel)

# Errors a handler raises that its action answers on its own page, so the person can correct
# the form (the CSRF and permission checks before the handler always get the error page).
FORM_ERRORS = (400, 401, 403, 404, 409, 429)
NOTICES: dict[str, str] = {}  # notice key -> message; each page module adds its own


@dataclass
class Ctx:
    """What a console handler receives."""

    request: Request
    path: dict[str, str]
    now: datetime
    settings: Settings  # the request's, read once by the pipeline (`Call.settings`)
    query: dict[str, list[str]]
    form: dict[str, list[str]] = field(default_factory=dict)
    principal: Principal | None = None
    user: User | None = None
    session: ConsoleSession | None = None
    csrf_token: str = ""
    set_cookies: list[str] = field(default_factory=list)
    visit: Visit | None = None  # what the page's credential kind verified (an email link's visit carries the link)

    @property
    def organization_id(self) -> str:
        assert self.principal is not None
        return self.principal.organization_id

    @property
    def item(self) -> dict[str, Any]:
        """The caller's organization and every path parameter, as the domain functions name them
        (the key the API's resources pass: chalicelib.api.resource)."""
        return {"organization_id": self.organization_id, **self.path}

    @property
    def signed_in(self) -> Principal:
        assert self.principal is not None
        return self.principal

    def can(self, scope: str) -> bool:
        return self.principal is not None and scope in self.principal.scopes

    @property
    def zone(self) -> str:  # the zone the person reads times in; UTC before sign-in
        return zone_of(self.user) if self.user is not None else DEFAULT_ZONE

    def arg(self, name: str, default: str = "") -> str:
        values = self.query.get(name)
        return values[0] if values else default

    def value(self, name: str, default: str = "") -> str:
        values = self.form.get(name)
        return values[0].strip() if values else default

    def values(self, name: str) -> list[str]:
        return [value.strip() for value in self.form.get(name, []) if value.strip()]

    def model(self, model: type[ModelT], data: Mapping[str, Any]) -> ModelT:
        """Validate form data through the API's own request model (the same rules, the same errors)."""
        try:
            return model.model_validate(dict(data))
        except ValidationError as error:
            raise ValidationFailed.for_fields(fields_from(error)) from None


@dataclass
class Page:
    template: str
    title: str
    section: str = ""
    context: dict[str, Any] = field(default_factory=dict)
    status: int = 200
    # Field path -> the label the form shows for it (or a function answering it), so a problem is
    # named as the person reads it; a path without one is put in words (console/form_problems.py).
    labels: Labels | None = None
    zone: str | None = None  # the zone its times are shown in, when not the viewer's (an email link's recipient's)


@dataclass
class Redirect:
    location: str
    notice: str | None = None


@dataclass(frozen=True)
class Confirmation:
    """What an irreversible action asks before it acts."""

    question: str  # "Revoke this API key?"
    consequence: str  # what happens, in the person's terms
    button: str  # the button that acts: "Revoke key"


CONFIRM_FIELD = "confirm"

Answer = Page | Redirect
Handler = Callable[[Ctx], Answer]


def render_page(ctx: Ctx, page: Page, *, error: AppError | None = None, status: int | None = None) -> Response:
    notice_key = ctx.arg("done")
    problems = labelled(_fields_of(error), page.labels)

    def render() -> str:
        return templates.render(
            page.template,
            title=page.title,
            section=page.section,
            user=ctx.user,
            role=ctx.principal.role if ctx.principal else None,
            can=ctx.can,
            csrf_token=ctx.csrf_token,
            app=app_path(settings=ctx.settings),
            notice=NOTICES.get(notice_key) if notice_key else None,
            error=error,
            # Each with its `label`; the form's fields mark the ones they show, the layout lists the rest.
            error_fields=problems,
            error_headline=headline(error, problems) if error is not None else None,
            viewer_zone=page.zone or ctx.zone,  # every time on the page is shown in it (macros.html `when`)
            **page.context,
        )

    body = render()
    if _relabel(problems, body):
        body = render()  # a refused form only: the problems listed at the top, by the form's own labels
    headers: dict[str, str | list[str]] = {**console_headers()}
    if ctx.set_cookies:
        headers["Set-Cookie"] = ctx.set_cookies
    return Response(body=body, status_code=status or page.status, headers=headers)


def _relabel(problems: list[dict[str, Any]], body: str) -> bool:
    """Name each problem the page lists at the top (no field showed it, the page gave no label) as
    the rendered form labels its input; True when one changed."""
    unlabelled = [problem for problem in problems if problem["guessed"] and not problem["shown"]]
    if not unlabelled:
        return False
    on_page = form_labels(body)
    changed = False
    for problem in unlabelled:
        found = label_on_page(str(problem.get("field")), on_page)
        if found:
            problem["label"], changed = found, True
    return changed


def _fields_of(error: AppError | None) -> list[dict[str, str]]:
    """The per-field problems of a validation error, so each form field can show its own."""
    details = error.details if error is not None else None
    fields = details.get("fields") if isinstance(details, dict) else None
    return list(fields) if isinstance(fields, list) else []


def _redirect(ctx: Ctx, target: Redirect) -> Response:
    location, hash_mark, fragment = target.location.partition("#")
    if target.notice:  # the query goes before a fragment (#swaps), or the notice would be lost
        location += ("&" if "?" in location else "?") + urlencode({"done": target.notice})
    location += hash_mark + fragment
    return redirect(location, ctx.set_cookies)


class ConsolePages:
    """The console's pages and actions of one module."""

    def __init__(self, import_name: str, notices: Mapping[str, str] | None = None) -> None:
        self.operations = OperationGroup(import_name, tag="console")
        NOTICES.update(notices or {})

    def page(
        self, path: str, *, anonymous: bool = False, credential: CredentialKind | None = None
    ) -> Callable[[Handler], Handler]:
        """A GET. `anonymous`: shown before sign-in too; `credential`: another kind of visit (one that
        carries a capability token, e.g. an email link)."""
        return self._register(
            "GET", path, scope=None, anonymous=anonymous, on_error=None, confirm=None, credential=credential
        )

    def action(
        self,
        path: str,
        *,
        scope: str | None,
        on_error: Handler | None = None,
        anonymous: bool = False,
        confirm: Confirmation | None = None,
        credential: CredentialKind | None = None,
    ) -> Callable[[Handler], Handler]:
        """A POST. `scope`: what the role needs (None: any signed-in person, e.g. their own profile).
        `confirm`: an action that cannot be undone asks first (a page with the consequence and a
        second button), so a stray tap on a phone changes nothing. `anonymous`, `credential`: as
        for `page`."""
        return self._register(
            "POST",
            path,
            scope=scope,
            anonymous=anonymous,
            on_error=on_error,
            confirm=confirm,
            credential=credential,
        )

    def _register(
        self,
        method: str,
        path: str,
        *,
        scope: str | None,
        anonymous: bool,
        on_error: Handler | None,
        confirm: Confirmation | None,
        credential: CredentialKind | None,
    ) -> Callable[[Handler], Handler]:
        kind = credential or (CONSOLE_SESSION_OR_ANONYMOUS if anonymous else CONSOLE_SESSION)

        def register(handler: Handler) -> Handler:
            def answer(call: Call) -> Response:
                return _answer(call, handler, on_error=on_error, confirm=confirm)

            self.operations.raw(
                method,
                "/app" + path,
                operation_id="console_" + handler.__name__,
                summary=(handler.__doc__ or handler.__name__).strip().splitlines()[0],
                credential=kind,
                bucket=CREDENTIAL_BUCKET,
                scope=scope,
                family=ErrorFamily.CONSOLE,
                content_type="text/html",
                documented=False,
            )(answer)
            return handler

        return register


def ctx_of(request: Request, path: Mapping[str, str], now: datetime, settings: Settings, visit: Visit) -> Ctx:
    """What a handler receives, from the visit the console's credential kind verified."""
    return Ctx(
        request=request,
        path=dict(path),
        now=now,
        settings=settings,
        query=query_lists(request),
        form=visit.form,
        principal=visit.principal,
        user=visit.user,
        session=visit.session,
        csrf_token=visit.csrf_token,
        set_cookies=visit.set_cookies,
        visit=visit,
    )


def _answer(call: Call, handler: Handler, *, on_error: Handler | None, confirm: Confirmation | None) -> Response:
    """A page or an action of a visit the pipeline admitted: asks first where the action says so,
    then the handler's page or redirect; its form's own mistakes on its page."""
    request = call.request
    ctx = ctx_of(request, call.path, call.now, call.settings, call.credential)
    if request.method == "POST" and confirm is not None and ctx.value(CONFIRM_FIELD) != "yes":
        return render_page(ctx, _confirmation_page(ctx, confirm))
    try:
        answer = handler(ctx)
    except AppError as error:
        if request.method != "POST" or on_error is None or error.status not in FORM_ERRORS:
            raise
        response = render_page(ctx, _page_of(on_error(ctx)), error=error, status=error.status)
        response.headers.update(error.headers)
        return response
    if isinstance(answer, Redirect):
        return _redirect(ctx, answer)
    return render_page(ctx, answer)


def _confirmation_page(ctx: Ctx, confirm: Confirmation) -> Page:
    """The question, the posted fields again (hidden) with confirm=yes, and a way back."""
    referer = urlsplit(str(ctx.request.headers.get("referer") or ""))
    back = safe_next(referer.path + ("?" + referer.query if referer.query else ""), settings=ctx.settings)
    fields = [
        (name, value)
        for name, values in ctx.form.items()
        if name not in (CSRF_FIELD, CONFIRM_FIELD)
        for value in values
    ]
    action = route_path(ctx.request, ctx.path)
    return Page(
        "console/confirm.html",
        confirm.question,
        context={"confirm": confirm, "action": app_path(action, settings=ctx.settings), "fields": fields, "back": back},
    )


def _page_of(answer: Answer) -> Page:
    if isinstance(answer, Page):
        return answer
    raise ValueError("an action's error page must be a Page")
