"""The emulator's SQS reads the clock once per look at a queue, not once per message and attribute.

moto 5.2 filters a queue's messages on every ReceiveMessage (and every wake-up of a long poll)
with two clock reads per message (`visible`, `delayed`), and each clock read builds two datetimes
and imports `datetime.UTC` again. Worse, for every message it hands out it checks the retention
period through `get_queue_attributes`, which computes all of the queue's attributes three times,
each time counting the visible, delayed and in-flight messages with one or two clock reads per
message. Tocsin's timers are delayed SQS messages (an escalation step, an SLA, a snooze), so a
stack that has opened a few hundred incidents holds hundreds of delayed messages in the timer
queue, and every message a worker received cost thousands of clock reads: profiled on the
contract sweep, about a third of the emulator's busy time.

Here `Queue.messages` reads the clock once per call and the retention check reads the one
attribute it needs. Which messages a receive returns is unchanged: the same comparisons
(`now > visible_at`, `now >= delayed_until`, `sent + retention > now`) against the same fields;
tests/service/test_moto_sqs.py holds them to moto's own on visible, delayed, in-flight and expired
messages.

Applied by the emulator process (chalicelib/local/moto_server.py) and the test suite's in-process
moto (tests/emulator.py), like chalicelib/local/moto_responses.py.
"""

from __future__ import annotations

from typing import Any


def cheaper_sqs_polls() -> None:
    """Idempotent."""
    from moto.core.utils import unix_time, unix_time_millis
    from moto.sqs import models

    if getattr(vars(models.Queue)["messages"].fget, "tocsin_one_clock_read", False):
        return

    def messages(self: Any) -> list[Any]:
        now = unix_time_millis()
        return [m for m in self._messages if now > m.visible_at and now >= m.delayed_until]

    def is_message_valid_based_on_retention_period(self: Any, queue_name: str, message: Any) -> bool:
        retention_period = int(self.get_queue(queue_name).message_retention_period)
        return bool(retention_period + message.sent_timestamp / 1000 > unix_time())

    getter: Any = messages
    getter.tocsin_one_clock_read = True
    models.Queue.messages = property(getter)  # type: ignore[method-assign,assignment]
    models.SQSBackend.is_message_valid_based_on_retention_period = (  # type: ignore[method-assign]
        is_message_valid_based_on_retention_period
    )
