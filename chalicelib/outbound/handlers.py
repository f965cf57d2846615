"""Consumers of the outbound webhooks on the events queue.

`outbound.fanout` follows every domain message an event comes from (next to the other consumers
of `incident.created` and friends; dispatch retries it alone when it fails), `outbound.deliver`
runs one delivery attempt, `outbound.owner_notice` emails the owner of a disabled subscription.
"""

from __future__ import annotations

from chalicelib.outbound import delivery, fanout
from chalicelib.outbound.events import DOMAIN_MESSAGE_TYPES
from chalicelib.queue.consumers import handles

FANOUT_CONSUMER = "outbound.fanout"

for _message_type in DOMAIN_MESSAGE_TYPES:
    handles(_message_type, name=FANOUT_CONSUMER)(fanout.handle)

handles(delivery.DELIVER, name="outbound.deliver")(delivery.handle)
handles(delivery.SUBSCRIPTION_DISABLED, name="outbound.owner_notice")(delivery.notify_owner)
