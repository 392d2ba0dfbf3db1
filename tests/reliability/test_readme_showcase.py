"""The README's optimizer showcase is what the code computes (issue 21).

The README shows the optimizer's most confident recommendation (quant 3, seed 7) beside its
signal and its replayed effect with intervals; ``tools/readme_showcase.py`` computes it. This
test runs the tool on the seed-7 sandbox and compares its text with the README's, so the
README cannot drift from the code (about 420 requests and 17 s: a reliability test).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from _helpers import reset_quota

from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer

pytestmark = pytest.mark.reliability

ROOT = Path(__file__).resolve().parents[2]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "readme_showcase", ROOT / "tools" / "readme_showcase.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_readme_showcase_is_what_the_code_computes(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    tool = _tool()
    reset_quota(sandbox)
    with Client(
        sandbox.url, sandbox.keys["enterprise"], cache_dir=str(tmp_path), progress=False
    ) as c:
        table = tool.showcase(c)
    row = table.iloc[0]
    # the measurement: -10 trades, +0.3 points, -$801.85 on a claim of 0.528 -> 0.765
    assert (row["quant_id"], row["market_cap_class"], row["criterion"]) == (
        3,
        "MID_CAP",
        "smart_money_buys",
    )
    assert row["effect_d_trades"] == -10
    assert row["effect_d_total_pnl_usd"] == pytest.approx(-801.85, abs=0.005)
    assert row["effect_d_win_rate_lo"] < 0 < row["effect_d_win_rate_hi"]
    assert tool.text(table) == tool.in_readme()
