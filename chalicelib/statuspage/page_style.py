"""The look of every public status page: status colours, the one stylesheet and the CSP that
hashes it (the page loads nothing and runs no script). Split from page_html, which decides what
the page says; the unit tests check every text/background pair here for WCAG AA contrast."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

from chalicelib.statuspage.subscribe_form import form_css
from chalicelib.statuspage.uptime_html import UPTIME_CSS


@dataclass(frozen=True)
class StatusStyle:
    label: str  # component badge text
    headline: str  # overall banner text
    icon: str  # decorative, hidden from screen readers
    text: str  # badge text colour, WCAG AA (>= 4.5:1) on `background`
    background: str
    accent: str  # banner edge; decoration only, the text carries the meaning


STATUS_STYLES: dict[str, StatusStyle] = {
    "operational": StatusStyle("Operational", "All systems operational", "✓", "#0f5132", "#d1e7dd", "#198754"),
    "degraded_performance": StatusStyle(
        "Degraded performance", "Degraded performance", "!", "#5c4400", "#fff3cd", "#e0a800"
    ),
    "partial_outage": StatusStyle("Partial outage", "Partial system outage", "◐", "#7a2e0b", "#ffe5d0", "#fd7e14"),
    "major_outage": StatusStyle("Major outage", "Major system outage", "✕", "#842029", "#f8d7da", "#dc3545"),
    "under_maintenance": StatusStyle(
        "Under maintenance", "Maintenance in progress", "⚙", "#084298", "#cfe2ff", "#0d6efd"
    ),
    "unknown": StatusStyle("Unknown", "Status unknown", "?", "#41464b", "#e2e3e5", "#6c757d"),
}
# Base text colours, each pair checked for AA contrast by the unit tests.
PAGE_BACKGROUND, CARD_BACKGROUND, TAG_BACKGROUND = "#f6f8fa", "#ffffff", "#eaeef2"
TEXT, MUTED, LINK = "#1f2328", "#57606a", "#0a58ca"
BUTTON_TEXT, PROBLEM = "#ffffff", "#842029"  # the subscribe form's button (on LINK) and problems
TEXT_PAIRS = (
    *((fg, bg) for fg in (TEXT, MUTED, LINK, PROBLEM) for bg in (PAGE_BACKGROUND, CARD_BACKGROUND)),
    (TEXT, TAG_BACKGROUND),
    (BUTTON_TEXT, LINK),
)

_STATUS_CSS = "".join(
    f".st-{key}{{color:{s.text};background:{s.background};border-color:{s.accent}}}" for key, s in STATUS_STYLES.items()
)
_FORM_CSS = form_css(
    text=TEXT, field=CARD_BACKGROUND, border=MUTED, accent=LINK, on_accent=BUTTON_TEXT, problem=PROBLEM
)
_CSS = (
    f":root{{color-scheme:light}}*{{box-sizing:border-box}}"
    f"body{{margin:0;font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;"
    f"color:{TEXT};background:{PAGE_BACKGROUND}}}"
    f"a{{color:{LINK}}}.wrap{{max-width:52rem;margin:0 auto;padding:0 1rem}}"
    f".skip{{position:absolute;left:-100vw}}.skip:focus{{left:1rem;top:.5rem;background:{CARD_BACKGROUND};padding:.5rem}}"
    f"header{{background:{CARD_BACKGROUND};border-bottom:1px solid #d0d7de}}header .wrap{{padding:1rem}}"
    "h1{font-size:1.5rem;margin:0;overflow-wrap:anywhere}h2{font-size:1.25rem;margin:2rem 0 .75rem}"
    "h3,h4{font-size:1.05rem;margin:0;overflow-wrap:anywhere}h4{font-size:1rem}p{margin:.25rem 0}"
    ".banner{margin:1.5rem 0 0;padding:1rem 1.25rem;border-radius:.5rem;border-left:.5rem solid}"
    ".headline{font-size:1.25rem;font-weight:700;margin:0}.banner a{color:inherit}"
    f".card{{background:{CARD_BACKGROUND};border:1px solid #d0d7de;border-radius:.5rem;padding:1rem;margin:0 0 1rem}}"
    ".plain{list-style:none;margin:0;padding:0}.row{display:flex;flex-wrap:wrap;align-items:center;"
    "justify-content:space-between;gap:.25rem .5rem;padding:.6rem 0;border-top:1px solid #d0d7de}"
    ".card>.plain>li:first-child>.row,.card>.plain>.row:first-child{border-top:0}"
    ".row>.badge{margin-left:auto}.group>.plain{padding-left:.75rem}.name{overflow-wrap:anywhere}"
    ".badge{display:inline-block;padding:.1rem .5rem;border-radius:1rem;font-size:.875rem;font-weight:600;"
    f"white-space:nowrap;border:1px solid}}.tag{{color:{TEXT};background:{TAG_BACKGROUND};border-color:#d0d7de}}"
    f".meta{{color:{MUTED};font-size:.875rem}}.badges{{display:flex;flex-wrap:wrap;gap:.4rem;margin:.4rem 0}}"
    ".updates>li{padding:.6rem 0 0;margin-top:.6rem;border-top:1px solid #d0d7de}"
    ".body{white-space:pre-line;overflow-wrap:anywhere}summary{cursor:pointer;margin-top:.5rem}"
    f"footer{{color:{MUTED};font-size:.875rem;padding:2rem 1rem}}"
    # Phones: tighter boxes so a component name and its badge still share a line.
    "@media (max-width:30rem){.card{padding:.75rem}.badge{font-size:.8125rem}"
    ".banner{padding:.75rem 1rem;border-left-width:.375rem}}" + _STATUS_CSS + UPTIME_CSS + _FORM_CSS
)
_STYLE_HASH = base64.b64encode(hashlib.sha256(_CSS.encode()).digest()).decode()
# For the route's Content-Security-Policy header: the page loads nothing and runs no script.
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; img-src data:; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
# The one stylesheet of every public status page (the subscribe pages use it too).
STYLESHEET = _CSS
