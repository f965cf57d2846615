"""Notifications: one channel interface (email through SES, Slack through its Web API), and the
service that pages a person on channels and records the outcome on the incident's timeline.
What was sent is read back in the local stage only, by chalicelib/local/outbox.py."""
