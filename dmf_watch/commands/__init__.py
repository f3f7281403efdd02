"""The `dmf` command: the CLI and the day's sequence (load, build, AI briefing, reports, delivery), the demo and its ground-truth comparison."""
