"""The console's request pipeline: one place for the session cookie, CSRF, permissions and errors.

Every console route is a GET page or a POST action registered through `ConsoleBlueprint`:
- A page without a live session redirects to the sign-in page (which brings the person back).
- A POST must carry the form's CSRF token: the session's own token, or, before sign-in, an HMAC
  of a pre-session cookie. A missing or wrong token is 403 and nothing happens.
- An action names the scope it needs, the same scope as the API operation it mirrors; a person
  whose role lacks it gets 403 (templates hide the buttons too, through `can`).
- An action's bad input (400, 404, 409) re-renders its page with the message and that status;
  other errors are rendered as the console's error page by chalicelib.api.error_render.
- Success is a 303 redirect (post/redirect/get) with a notice key the next page shows.

Handlers call the same service functions as the API's routes: a rule lives in its domain once.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from chalice.app import Request, Response
from pydantic import BaseModel, ValidationError

from chalicelib import clock, templates
from chalicelib.api import ratelimits
from chalicelib.api.error_render import ErrorFamily, console_headers
from chalicelib.api.routing import ApiBlueprint, query_lists, raw_operation, source_ip
from chalicelib.api.validation import fields_from
from chalicelib.auth.principal import Principal
from chalicelib.auth.scopes import ROLE_SCOPES, ROLES
from chalicelib.console import sessions
from chalicelib.console.sessions import ConsoleSession
from chalicelib.directory.users import User, get_user, zone_of
from chalicelib.errors import AppError, Forbidden, NotFound, PayloadTooLarge, ValidationFailed
from chalicelib.settings import get_settings
from chalicelib.zones import DEFAULT_ZONE

ModelT = TypeVar("ModelT", bound=BaseModel)

MAX_FORM_BYTES = 64 * 1024
CSRF_FIELD = "csrf_token"
FORM_TYPE = "application/x-www-form-urlencoded"
# Errors a handler raises that its action answers on its own page, so the person can correct
# the form (the CSRF and permission checks before the handler always get the error page).
FORM_ERRORS = (400, 401, 403, 404, 409, 429)
CSRF_REFUSED = "This form has expired or did not come from Tocsin. Reload the page and try again."
NOTICES: dict[str, str] = {}  # notice key -> message; each page module adds its own


def session_cookie_name() -> str:
    # __Host-: the browser accepts it only from a secure origin, for the whole host, no Domain.
    return "__Host-tocsin_session" if get_settings().secure_cookies else "tocsin_session"


def pre_session_cookie_name() -> str:
    return "__Host-tocsin_pre" if get_settings().secure_cookies else "tocsin_pre"


def app_path(suffix: str = "") -> str:
    """A path under the console's root (PUBLIC_APP_URL's path, `/app` by default)."""
    root = urlsplit(get_settings().app_url()).path.rstrip("/") or ""
    return root + suffix


def cookie(name: str, value: str, *, max_age: int | None = None) -> str:
    parts = [f"{name}={value}", "Path=/", "HttpOnly", "SameSite=Lax"]
    if get_settings().secure_cookies:
        parts.append("Secure")
    if max_age is not None:
        parts.append(f"Max-Age={max_age}")
    return "; ".join(parts)


def cookies_of(request: Request) -> dict[str, str]:
    jar: dict[str, str] = {}
    for part in str(request.headers.get("cookie") or "").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name and name not in jar:
            jar[name] = value.strip()
    return jar


@dataclass
class Ctx:
    """What a console handler receives."""

    request: Request
    path: dict[str, str]
    now: datetime
    query: dict[str, list[str]]
    form: dict[str, list[str]] = field(default_factory=dict)
    principal: Principal | None = None
    user: User | None = None
    session: ConsoleSession | None = None
    csrf_token: str = ""
    set_cookies: list[str] = field(default_factory=list)

    @property
    def organization_id(self) -> str:
        assert self.principal is not None
        return self.principal.organization_id

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
    body = templates.render(
        page.template,
        title=page.title,
        section=page.section,
        user=ctx.user,
        role=ctx.principal.role if ctx.principal else None,
        can=ctx.can,
        csrf_token=ctx.csrf_token,
        app=app_path(),
        notice=NOTICES.get(notice_key) if notice_key else None,
        error=error,
        error_fields=_fields_of(error),
        viewer_zone=ctx.zone,  # every time on the page is shown in it (macros.html `when`)
        **page.context,
    )
    headers: dict[str, str | list[str]] = {**console_headers()}
    if ctx.set_cookies:
        headers["Set-Cookie"] = ctx.set_cookies
    return Response(body=body, status_code=status or page.status, headers=headers)


def _fields_of(error: AppError | None) -> list[dict[str, str]]:
    """The per-field problems of a validation error, so each form field can show its own."""
    details = error.details if error is not None else None
    fields = details.get("fields") if isinstance(details, dict) else None
    return list(fields) if isinstance(fields, list) else []


def _redirect(ctx: Ctx, target: Redirect) -> Response:
    location = target.location
    if target.notice:
        location += ("&" if "?" in location else "?") + urlencode({"done": target.notice})
    headers: dict[str, str | list[str]] = {**console_headers(), "Location": location}
    if ctx.set_cookies:
        headers["Set-Cookie"] = ctx.set_cookies
    return Response(body="", status_code=303, headers=headers)


def _principal(session: ConsoleSession) -> tuple[Principal, User] | None:
    """The person as the directory says now: a deactivated user is signed out on their next request."""
    try:
        person = get_user(organization_id=session.organization_id, user_id=session.user_id)
    except NotFound:
        return None
    if not person.is_active:
        return None
    role = person.role if person.role in ROLE_SCOPES else ROLES[-1]
    principal = Principal(
        organization_id=session.organization_id,
        credential_kind="session",
        scopes=ROLE_SCOPES[role],
        user_id=person.user_id,
        role=role,
        email=person.email,
        name=person.name,
        display_name=person.email,
    )
    return principal, person


def pre_session_token(pre_session: str) -> str:
    """The CSRF token of a form shown before sign-in: bound to the browser's pre-session cookie."""
    secret = get_settings().api_key_hmac_secret.encode()
    return hmac.new(secret, b"console-csrf:" + pre_session.encode(), hashlib.sha256).hexdigest()


def _read_form(request: Request) -> dict[str, list[str]]:
    raw = request.raw_body or b""
    if isinstance(raw, str):
        raw = raw.encode()
    if len(raw) > MAX_FORM_BYTES:
        raise PayloadTooLarge("The form is larger than 64 KiB.")
    content_type = str(request.headers.get("content-type") or "").split(";")[0].strip().lower()
    if raw and content_type != FORM_TYPE:
        raise ValidationFailed(f"Forms are sent as {FORM_TYPE}.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationFailed("The form is not UTF-8.") from None
    try:
        return parse_qs(text, keep_blank_values=True, max_num_fields=500)
    except ValueError:
        raise ValidationFailed("The form has too many fields.") from None


class ConsoleBlueprint:
    """The console routes of one module."""

    def __init__(self, import_name: str, notices: Mapping[str, str] | None = None) -> None:
        self.api = ApiBlueprint(import_name, tag="console")
        NOTICES.update(notices or {})

    def page(self, path: str, *, anonymous: bool = False) -> Callable[[Handler], Handler]:
        return self._register("GET", path, scope=None, anonymous=anonymous, on_error=None, confirm=None)

    def action(
        self,
        path: str,
        *,
        scope: str | None,
        on_error: Handler | None = None,
        anonymous: bool = False,
        confirm: Confirmation | None = None,
    ) -> Callable[[Handler], Handler]:
        """A POST. `scope`: what the role needs (None: any signed-in person, e.g. their own profile).
        `confirm`: an action that cannot be undone asks first (a page with the consequence and a
        second button), so a stray tap on a phone changes nothing."""
        return self._register("POST", path, scope=scope, anonymous=anonymous, on_error=on_error, confirm=confirm)

    def _register(
        self,
        method: str,
        path: str,
        *,
        scope: str | None,
        anonymous: bool,
        on_error: Handler | None,
        confirm: Confirmation | None,
    ) -> Callable[[Handler], Handler]:
        full_path = "/app" + path

        def register(handler: Handler) -> Handler:
            def view(request: Request, path_params: dict[str, str]) -> Response:
                return _run(
                    request, path_params, handler, scope=scope, anonymous=anonymous, on_error=on_error, confirm=confirm
                )

            raw_operation(
                self.api,
                method,
                full_path,
                operation_id="console_" + handler.__name__,
                summary=(handler.__doc__ or handler.__name__).strip().splitlines()[0],
                error_family=ErrorFamily.CONSOLE,
                response_content_type="text/html",
                documented=False,
            )(view)
            return handler

        return register


def _run(
    request: Request,
    path_params: dict[str, str],
    handler: Handler,
    *,
    scope: str | None,
    anonymous: bool,
    on_error: Handler | None,
    confirm: Confirmation | None = None,
) -> Response:
    now = clock.now()
    ctx = Ctx(request=request, path=dict(path_params), now=now, query=query_lists(request))
    jar = cookies_of(request)
    session = sessions.resume(jar.get(session_cookie_name(), ""), now=now)
    resolved = _principal(session) if session is not None else None
    if session is not None and resolved is not None:
        ctx.session, (ctx.principal, ctx.user) = session, resolved
        ctx.csrf_token = session.csrf_token
        ratelimits.charge_principal(ctx.principal, now)
    else:
        ratelimits.charge_anonymous(source_ip(request), now)
        if not anonymous:
            return _to_sign_in(ctx, request, path_params)
        pre_session = jar.get(pre_session_cookie_name(), "")
        if len(pre_session) < 20:
            pre_session = secrets.token_urlsafe(24)
            ctx.set_cookies.append(cookie(pre_session_cookie_name(), pre_session))
        ctx.csrf_token = pre_session_token(pre_session)
    if request.method == "POST":
        ctx.form = _read_form(request)
        sent = (ctx.form.get(CSRF_FIELD) or [""])[0]
        if not sent or not hmac.compare_digest(sent.encode(), ctx.csrf_token.encode()):
            raise Forbidden(CSRF_REFUSED)
        if ctx.principal is not None and scope is not None:
            ctx.principal.require(scope)
        if confirm is not None and ctx.value(CONFIRM_FIELD) != "yes":
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


def _route_path(request: Request, path_params: dict[str, str]) -> str:
    """The path asked for, below the console's root, rebuilt from the route and its parameters (the
    request's own path carries API Gateway's stage prefix, the route does not)."""
    here = str((request.context or {}).get("resourcePath") or "").removeprefix("/app")
    for name, value in path_params.items():
        here = here.replace("{" + name + "}", quote(value, safe=""))
    return here


def _confirmation_page(ctx: Ctx, confirm: Confirmation) -> Page:
    """The question, the posted fields again (hidden) with confirm=yes, and a way back."""
    referer = urlsplit(str(ctx.request.headers.get("referer") or ""))
    back = safe_next(referer.path + ("?" + referer.query if referer.query else ""))
    fields = [
        (name, value)
        for name, values in ctx.form.items()
        if name not in (CSRF_FIELD, CONFIRM_FIELD)
        for value in values
    ]
    action = _route_path(ctx.request, ctx.path)
    return Page(
        "console/confirm.html",
        confirm.question,
        context={"confirm": confirm, "action": app_path(action), "fields": fields, "back": back},
    )


def _page_of(answer: Answer) -> Page:
    if isinstance(answer, Page):
        return answer
    raise ValueError("an action's error page must be a Page")


def _to_sign_in(ctx: Ctx, request: Request, path_params: dict[str, str]) -> Response:
    """No live session: to the sign-in page, which brings a GET back to where it was."""
    target = app_path("/sign-in")
    if request.method == "GET":
        here = _route_path(request, path_params)
        query = urlencode(query_lists(request), doseq=True)
        target += "?" + urlencode({"next": app_path(here) + ("?" + query if query else "")})
    return _redirect(ctx, Redirect(target))


def safe_next(value: str) -> str:
    """A sign-in's `next`: only a path inside the console (never another site: no open redirect)."""
    root = app_path()
    if value.startswith(root + "/") and not value.startswith("//") and "\\" not in value:
        return value
    return app_path("/incidents")
