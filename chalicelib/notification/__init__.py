"""Notifications: one channel interface (email through SES, Slack through its Web API), and the
service that pages a person on channels and records the outcome on the incident's timeline.
The local stage records what was sent as it leaves (chalicelib/local/outbox.py); nothing here knows."""
