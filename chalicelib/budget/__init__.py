"""The outbound budget: every message that leaves Tocsin (SMS, calls, emails, Slack and the chat
channels) is counted per destination, per person and per organization before it is sent
(docs/SECURITY.md, "The outbound budget").

- `destinations`: the destination a counter counts (E.164 numbers, mailboxes: `+tag`, case, Gmail dots);
- `limits`: the named limits, their windows, the deployment's values and an owner's lowered ones;
- `rules`: which counters a message charges (by its purpose), and the sliding-window arithmetic;
- `service`: `spend` (conditional counters in DynamoDB, never over a limit however sends race),
  and an organization's lowered limits (GET/PATCH /api/v1/settings/limits).

The channels' side (what a refusal does: a digest for a page, a 429 for a request, a log line for
a worker) is chalicelib/notification/gate.py and chalicelib/notification/page_budget.py.
"""
