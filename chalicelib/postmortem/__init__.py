"""Postmortems: one per incident, draft -> in_review -> published, structured content rendered to safe HTML.

`rules` is pure (moves, numbers, response-timeline prefill, HTML escaping); `service` writes the
postmortem, its per-incident guard and the incident's timeline entry in one transaction.
"""
