"""DMF Watch: the MFDS Drug Master File registry, watched every morning."""
