"""The dlt pipelines of DMF Watch: `dmf_watch/pipelines/mfds`, the MFDS DMF source and its loader."""
