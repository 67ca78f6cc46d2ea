"""Benchmarks: latency and throughput ratios measured in one run (scripts, never timed tests)."""
