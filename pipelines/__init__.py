"""DMF Watch: the `dmf` command, the MFDS dlt source and the MFDS-compatible simulator."""
