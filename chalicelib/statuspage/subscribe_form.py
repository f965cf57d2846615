"""The subscribe form's view: which components a reader may pick, grouped as the status page
shows them, with what was typed and each field's problem. Pure; laid out by the `subscribe`
macro of chalicelib/templates/statuspage/parts.html."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SubscribeChoice:
    component_id: object  # a form value (escaped), never an element id
    name: object
    checked: bool


@dataclass(frozen=True)
class SubscribeGroup:
    name: object
    choices: list[SubscribeChoice]


@dataclass(frozen=True)
class SubscribeSection:
    name: object
    choices: list[SubscribeChoice]
    groups: list[SubscribeGroup]


@dataclass(frozen=True)
class SubscribeForm:
    """The subscribe form: `action` is relative to the page showing it; `problems` by field name."""

    action: str
    email: str
    sections: list[SubscribeSection]
    problems: dict[str, str]
    open_choices: bool  # the component choice starts unfolded (a choice was made, or it has a problem)


def subscribe_form(
    components: Mapping[str, Any],
    *,
    action: str,
    email: str = "",
    chosen: Iterable[str] = (),
    problems: Mapping[str, str] | None = None,
) -> SubscribeForm:
    """The form for a components document (components.json's shape), grouped as the page shows them."""
    picked = set(chosen)

    def choices(members: Iterable[Mapping[str, Any]]) -> list[SubscribeChoice]:
        return [SubscribeChoice(c.get("component_id"), c.get("name"), c.get("component_id") in picked) for c in members]

    sections = []
    for section in components.get("sections") or []:
        groups = [
            SubscribeGroup(group.get("name"), choices(group.get("components") or []))
            for group in section.get("groups") or []
            if group.get("components")
        ]
        own = choices(section.get("components") or [])
        if own or groups:
            sections.append(SubscribeSection(section.get("name"), own, groups))
    found = dict(problems or {})
    return SubscribeForm(action, email, sections, found, bool(picked) or "component_ids" in found)


def form_css(*, text: str, field: str, border: str, accent: str, on_accent: str, problem: str) -> str:
    """The form's rules in the page's stylesheet: real controls, visible focus, problems in words.
    The colours come from chalicelib/statuspage/page_html.py, whose TEXT_PAIRS lists each pair
    for the contrast test."""
    return (
        "label{display:block;font-weight:600;margin:.75rem 0 .25rem}"
        f"input[type=email]{{width:100%;max-width:26rem;font:inherit;padding:.5rem;color:{text};"
        f"background:{field};border:1px solid {border};border-radius:.375rem}}"
        "fieldset{border:1px solid #d0d7de;border-radius:.375rem;margin:.5rem 0;"
        "padding:.25rem .75rem .5rem;min-width:0}"
        "legend{font-weight:600;padding:0 .25rem;overflow-wrap:anywhere}"
        "label.check{display:flex;gap:.5rem;align-items:flex-start;font-weight:400;margin:.35rem 0;"
        "overflow-wrap:anywhere}"
        "label.check input{margin-top:.3rem;flex:none}"
        f"button{{font:inherit;font-weight:600;color:{on_accent};background:{accent};border:1px solid {accent};"
        "border-radius:.375rem;padding:.5rem 1rem;margin-top:.75rem;cursor:pointer}"
        "button:focus-visible,input:focus-visible,summary:focus-visible"
        f"{{outline:3px solid {accent};outline-offset:2px}}"
        f".problem{{color:{problem};font-weight:600}}"
    )
