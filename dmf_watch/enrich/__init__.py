"""The AI layer: asks the `agy` CLI (Google Antigravity, headless) for Korean text on facts SQL
already settled. Optional and non-fatal: every public function returns a value, never raises,
and writes only to the `enrichment` schema and `state/`.

Entry points (each takes a `dmf_watch.core.config.Settings`, the steps also `as_of: date`):
  dmf_watch.enrich.daily_briefing.enrich_day     daily briefing + per-event comments + anomaly notes + alias proposals
  dmf_watch.enrich.anomaly.explain_anomaly       re-explain a past day's fired signals
  dmf_watch.enrich.weekly_briefing.enrich_week   weekly commentary (off unless weekly_enabled = true)
  dmf_watch.enrich.drift.diagnose_load_drift     API field-path diagnosis of a drift-rejected load (drift_enabled)
  dmf_watch.enrich.agy_checks.run_doctor         checks: binary, model, deny block, workspace, assets, breaker, budget
  dmf_watch.enrich.proposals                     list_proposals / show_proposal / decide / overdue_proposals
  dmf_watch.enrich.badges.BADGE_TEXT             skip_reason -> Korean dashboard badge

Configuration: `dmf_watch/enrich/agy.toml` ([enrich]), overridden by `<state_dir>/agy.toml`;
`DMF_AI_DISABLED=1` switches the layer off; `DMF_AGY_BINARY` names the executable.
What agy is asked, what it may never do and how its failures show: docs/ai-layer.md.
"""
