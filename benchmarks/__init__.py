"""quantscope's benchmarks: ratios measured side by side in one run (``python -m benchmarks``).

Not timed tests: each ``bench_*`` module measures a few ways of doing the same work and reports
ratios against the targets of its issue; README.md holds the figures, docs/benchmarks.md the
method and the history.
"""
