"""``python -m quantscope``: the ``quantscope`` command line (``quantscope.cli``)."""

from quantscope.cli import main

raise SystemExit(main())
