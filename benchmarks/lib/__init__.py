"""The benchmarks' library: workloads, suites, methods, records and shared helpers.

Imported by the entry points (``benchmarks/bench_*.py``), the studies and the tools; it
imports none of them. Not part of convexagg, and never imported by its tests.
"""
