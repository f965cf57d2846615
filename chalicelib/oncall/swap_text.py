"""The words of the notices about a swap request: asked (to the schedule's other members), taken
and expired (to the requester). Pure. Times in the reader's zone, named; the short text fits one
SMS (chalicelib.oncall.handoff_text's forms and rules)."""

from __future__ import annotations

from typing import Literal

from chalicelib.oncall.handoff_text import NoticeText, fit_short_text, long_time, short_name, short_time
from chalicelib.oncall.swap_rules import SwapRequest
from chalicelib.oncall.wallclock import zone_for

SwapNoticeKind = Literal["asked", "taken", "expired"]


def render_swap_notice(
    kind: SwapNoticeKind,
    request: SwapRequest,
    *,
    schedule_name: str,
    time_zone: str,
    requester_name: str,
    taker_name: str | None = None,
) -> NoticeText:
    zone = zone_for(time_zone)
    start, end = request.start.astimezone(zone), request.end.astimezone(zone)
    span = f"{short_time(start)} to {short_time(end)} ({time_zone})"
    lines = [f"From: {long_time(start)}", f"Until: {long_time(end)}"]
    note = [f"Note: {request.note}"] if request.note else []
    # A person's name in the short text: in GSM-7, and braces kept out of the template's reach.
    asker = short_name(requester_name).replace("{", "(").replace("}", ")")
    taker = short_name(taker_name or "Someone").replace("{", "(").replace("}", ")")
    if kind == "asked":
        subject = f"{requester_name} asks for cover on {schedule_name}: {span}"
        text = [
            f"{requester_name} asks someone to cover their on-call shift on the schedule {schedule_name}.",
            *lines,
            *note,
        ]
        text.append("Open the schedule to take it: you are then on call for that time.")
        short = f"Tocsin: {asker} asks for cover on " + "{name} " + f"{span}. Open Tocsin to take it."
    elif kind == "taken":
        subject = f"{taker_name} covers your shift on {schedule_name}: {span}"
        text = [f"{taker_name} took your cover request on the schedule {schedule_name}: they are on call for:", *lines]
        short = f"Tocsin: {taker} covers your shift on " + "{name} " + f"{span}."
    else:
        subject = f"Nobody took your cover request on {schedule_name}: you are on call {span}"
        text = [f"Nobody took your cover request on the schedule {schedule_name}. You are still on call for:", *lines]
        short = "Tocsin: nobody took your cover request on {name}. You are on call " + f"{span}."
    text.append(f"Times are in {time_zone}.")
    return NoticeText(subject, "\n".join(text), fit_short_text(short, schedule_name))
