"""Consumers of subscriber notices on the events queue (imported by chalicelib/workers/handlers.py).

`subscriber.notices` follows the public changes (next to outbound's fan-out of
`status_page.incident_updated`; dispatch retries each consumer alone), `subscriber.notice_batch`
sends one batch, `subscriber.webhook_deliver` runs one webhook attempt, and
`subscriber.webhook_removed` emails the address of a webhook removed after failures, and
`subscriber.page_deleted` forgets the followers of a deleted page.
"""

from __future__ import annotations

from chalicelib.queue.consumers import handles
from chalicelib.queue.messages import Message
from chalicelib.settings import Settings
from chalicelib.statuspage.announcements import (
    STATUS_PAGE_INCIDENT_UPDATED_MESSAGE,
    STATUS_PAGE_MAINTENANCE_CHANGED_MESSAGE,
)
from chalicelib.statuspage.pages import STATUS_PAGE_DELETED_MESSAGE
from chalicelib.subscriber import notice_webhooks, notices, repository

for _message_type in (STATUS_PAGE_INCIDENT_UPDATED_MESSAGE, STATUS_PAGE_MAINTENANCE_CHANGED_MESSAGE):
    handles(_message_type, name="subscriber.notices")(notices.handle_change)

handles(notices.NOTICE_BATCH, name="subscriber.notice_batch")(notices.handle_batch)
handles(notices.WEBHOOK_DELIVER, name="subscriber.webhook_deliver")(notice_webhooks.handle)
handles(notice_webhooks.WEBHOOK_REMOVED, name="subscriber.webhook_removed")(notice_webhooks.notify_removed)


@handles(STATUS_PAGE_DELETED_MESSAGE, name="subscriber.page_deleted")
def forget_followers(message: Message, settings: Settings) -> None:
    repository.forget_page(str(message.payload["page_id"]))
