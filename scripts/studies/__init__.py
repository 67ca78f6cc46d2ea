"""Studies: probes and statistics behind findings in runs/ (not imported by the library)."""
