"""The delivery kernel: everything that leaves Tocsin is claimed, attempted, retried and recorded here.

It sits in the store layer (it imports only chalicelib.store and the base modules), so every
domain that sends can use it:

- `claims`: a unit of work taken once with a conditional write, run, then settled or released
  (`run_once`). Notification deliveries (pages, rule steps, handoff notices, verification
  codes, subscription confirmations), inbound SMS replies, status-page notice emails and the
  Idempotency-Key lease all use it; a retry is SQS delivering the message again.
- `attempts`: deliveries with a retry schedule of their own, claimed per attempt on their record
  (`run`, `begin`): outbound webhook subscriptions and status-page webhook followers.
- `schedule` (pure): retry schedules as data, what an answer leads to, when a message is due.
- `http_post`: the one POST to a customer's URL: target checked (`targets`, SSRF), signed
  (`signature`), sent with a timeout, answer classified (delivered, retryable, final).
- `webhook`: the schedule and event headers both kinds of Tocsin webhook send.

Adding a channel (Microsoft Teams, Mattermost, ntfy, Pushover, Discord, Google Chat, ...) is a
renderer and a sender, never a new state machine:
- To reach a person (a page, a rule step, a handoff notice): in chalicelib/notification, a
  renderer from `channels.Notification` to the channel's body, and a `channels.Channel` whose
  `send` posts it and returns a `DeliveryResult` (an incoming-webhook URL the customer gave is
  posted with `http_post.post(url, body, secret=None)`: a retryable answer is a provider
  failure, a final one a refusal). Register it in `notification.service.default_channels` (and
  `notification.notices.send_notice` for plain notices), with its name in `channels.ChannelName`
  and a contact method type in `contact/rules.py`. The page path claims the delivery id
  (`notification.deliveries`), so the new channel is sent once per message and retried by
  redelivery like the others.
- To follow events on a schedule of its own (as webhook subscriptions do): a `ScheduledDelivery`
  subclass naming its record, recipient, sender (`http_post.post` with the body the delivery
  fixed) and give-up hook; `attempts.begin` writes each delivery and `attempts.run` is the
  consumer of its attempt messages.
"""
