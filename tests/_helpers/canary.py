"""A pickle canary: proof that a stored value was unpickled where nothing may be."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class Canary:
    """Unpickling this makes the directory ``path``: the test then finds it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.makedirs, (str(self.path),))
