"""Delivery: the morning's report and summary reach people by mail or chat; an alert goes out on
a change of state, never every day (docs/delivery.md). After `dmf_watch/reports/` in the data flow.

  dmf_watch.notify.destinations  notify.toml routing + destination URLs from the environment or dlt secrets
  dmf_watch.notify.redact        keeps destination credentials out of every text we store or print
  dmf_watch.notify.policy        which alerts a day raises (computed from the warehouse + notify.alert_state)
  dmf_watch.notify.messages      the Korean daily, weekly, alert and test messages (text for chat, HTML for mail)
  dmf_watch.notify.deliver       apprise delivery with bounded retries; the demo's outbox
  dmf_watch.notify.day           `dmf notify` / the step of `dmf run`: never raises, never sends twice
  dmf_watch.notify.ledger        the `notify` schema (alerts, alert_state, deliveries), written only here
  dmf_watch.notify.state_ledger  the alert ledger in the state folder, for mornings the warehouse itself fails
"""
