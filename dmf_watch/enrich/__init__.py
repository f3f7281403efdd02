"""The AI layer: asks the `agy` CLI (Google Antigravity, headless) for Korean text on facts SQL
already settled. Optional and non-fatal: every public function returns a value, never raises,
and writes only to the `enrichment` schema and `state/`.

Entry points (each takes `settings: settings.config.Settings` and `as_of: date`):
  enrich.daily.enrich_day          daily briefing + per-event comments + anomaly notes + alias proposals
  enrich.anomaly.explain_anomaly   re-explain a past day's fired signals
  enrich.weekly.enrich_week        weekly commentary (off unless weekly_enabled = true)
  enrich.drift.diagnose_load_drift API field-path diagnosis of a drift-rejected load (drift_enabled)
  enrich.doctor.run_doctor         checks: binary, model, deny block, workspace, assets, breaker, budget
  enrich.proposals                 list_proposals / show_proposal / decide / overdue_proposals
  enrich.badges.BADGE_TEXT         skip_reason -> Korean dashboard badge

Configuration: `dmf_watch/enrich/agy.toml` ([enrich]), overridden by `<state_dir>/agy.toml`;
`DMF_AI_DISABLED=1` switches the layer off; `DMF_AGY_BINARY` names the executable.
Design: ../shared/seed/agy-integration-patterns.ko.md (§2–§13).
"""
