"""The ``quantscope`` command line: one module per command group, ``main`` in ``cli.main``.

``quantscope = "quantscope.cli:main"`` is the console script's entry point, kept stable.
"""

from quantscope.cli.main import main

__all__ = ["main"]
