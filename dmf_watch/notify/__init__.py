"""Delivery: the morning's report and summary reach people by mail or chat; alerts follow the
design's policy (one on a change of state, never every day). After `dmf_watch/reports/` in the data flow.

  notify.config    notify.toml routing + destination URLs from the environment or dlt secrets
  notify.redact    keeps destination credentials out of every text we store or print
  notify.policy    which alerts a day raises (computed from the warehouse + notify.alert_state)
  notify.messages  the Korean daily, weekly, alert and test messages (text for chat, HTML for mail)
  notify.deliver   apprise delivery with bounded retries; the demo's outbox
  notify.day       `dmf notify` / the step of `dmf run`: never raises, never sends twice
  notify.store     the `notify` schema (alerts, alert_state, deliveries), written only here
"""
