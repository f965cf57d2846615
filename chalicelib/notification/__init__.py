"""Notifications: one channel interface (email through SES, Slack through its Web API), the
service that pages a person on channels and records the outcome on the incident's timeline,
and the local stage's outbox (what was sent, readable at GET /local/outbox)."""
