"""The dlt pipelines of DMF Watch: `pipelines/mfds`, the MFDS DMF source and its loader."""
