"""The study report (``qs.report``, ``df.quant.report``, ``quantscope report``) on the sandbox.

Two reports of quant 1 are written once for the module, each with a fresh cache of its own
(the same inputs): they must be the same bytes, hold every section, show the analytics'
values, refer to nothing outside the file, and load in Chromium without any request but the
file itself. Quota: a report over the client's share is refused, having sent only the
trades' pages.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest
from _helpers import quota_left
from _helpers.chromium import open_page

import quantscope as qs
from quantscope import analytics
from quantscope._errors import QuotaShareExceededError
from quantscope._http.client import Client
from quantscope.backtest._guards import wilson
from quantscope.backtest.uncertainty import rate_interval
from quantscope.cli import main
from quantscope.reporting import cells as C
from quantscope.reporting import report_trades
from quantscope.reporting.sections import SECTIONS
from quantscope.sandbox.serve import SandboxServer

# Two cold reports (about 40 s each here: 860 requests and the figures) for the module.
pytestmark = pytest.mark.slow

QUANT = 1
CRITERIA = ["smart_money_buys"]


def _client(server: SandboxServer, cache: Path, **kwargs: object) -> Client:
    return Client(
        server.url, server.keys["enterprise"], cache_dir=str(cache), progress=False, **kwargs
    )


@pytest.fixture(scope="module")
def written(
    own_sandbox: SandboxServer, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path, Path]:
    """Two reports of the same world, each from a cold cache of its own; and run 1's cache."""
    out = tmp_path_factory.mktemp("reports")
    paths = []
    for run in (1, 2):
        cache = tmp_path_factory.mktemp(f"cache{run}")
        with _client(own_sandbox, cache) as client:
            paths.append(qs.report(QUANT, out / f"run{run}.html", criteria=CRITERIA, client=client))
        if run == 1:
            first_cache = cache
    return paths[0], paths[1], first_cache


def _rows(page: str, table: str) -> dict[str, list[str]]:
    """A table of the page by its ``data-table`` name: row label -> cell texts (unescaped)."""
    found = re.search(rf'<table data-table="{re.escape(table)}">(.*?)</table>', page, re.S)
    assert found, f"no table {table}"
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", found.group(1), re.S):
        label = re.search(r'<th scope="row">(.*?)</th>', row, re.S)
        if label:
            cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            rows[_unescape(label.group(1))] = [_unescape(c) for c in cells]
    return rows


def _unescape(text: str) -> str:
    return html.unescape(text)


def test_same_world_same_bytes(written: tuple[Path, Path, Path]) -> None:
    first, second, _ = written
    assert first.read_bytes() == second.read_bytes()
    assert len(first.read_bytes()) > 100_000  # figures are inside it


def test_every_section_is_there_in_order(written: tuple[Path, Path, Path]) -> None:
    page = written[0].read_text()
    places = [
        page.index(f'<section id="{s.key}"><h2>{html.escape(s.title)}</h2>') for s in SECTIONS
    ]
    assert places == sorted(places)
    for figure in ("equity.equity", "breakdowns.roi_distribution", "playbook.pass_rate"):
        assert f'data-figure="{figure}"' in page
    assert 'data-table="thresholds.what_if_smart_money_buys_DEGEN_CAP"' in page
    assert 'data-table="thresholds.walk_forward_smart_money_buys"' in page
    assert 'data-table="screen.ranking"' in page


def test_no_upper_bound_and_both_questions_named(written: tuple[Path, Path, Path]) -> None:
    """Issue 21: "-59.6 pts (UPPER BOUND)" stood beside a replayed -0.8; the filter figure
    bounds nothing. Both questions are named with backtest.questions' labels instead."""
    from quantscope.backtest.questions import QUESTION_LABELS, QUESTION_NOTES

    page = _unescape(written[0].read_text())
    assert "upper bound" not in page.lower()
    for question in ("effect", "signal"):
        assert QUESTION_LABELS[question] in page
        assert QUESTION_NOTES[question] in page


def test_headline_values_are_the_analytics_values(
    written: tuple[Path, Path, Path], own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    with _client(own_sandbox, tmp_path) as client:
        trades = qs.load_trades(QUANT, client=client)  # executed trades: the report's basis
    metrics = analytics.summary(trades)
    rows = _rows(written[0].read_text(), "headline.metrics")
    assert rows["trades"][0] == C.count(metrics["trades"]) == "838"
    assert rows["win_rate"][0].startswith(C.share(analytics.win_rate(trades)) + " [")
    # its interval resamples whole tokens (backtest.uncertainty), as every research row's does;
    # it was Wilson's, which takes 838 trades of 43 tokens as independent
    closed = trades[(trades["status"] == "Closed").fillna(False).to_numpy(bool)]
    pnl = closed["pnl_usd"].to_numpy(dtype=np.float64, na_value=np.nan)
    counted = ~np.isnan(pnl)
    _, lo, hi = rate_interval(pnl[counted] > 0, closed["token_id"].to_numpy(object)[counted])
    assert rows["win_rate"][0].endswith(C.interval(lo, hi))
    wilson_lo, wilson_hi = wilson(np.array([int(metrics["wins"])]), np.array([int(counted.sum())]))
    assert hi - lo > 1.2 * (wilson_hi[0] - wilson_lo[0])  # clustered: wider than Wilson
    said = re.search(r"The win rate's interval is ([^.]*)", _unescape(written[0].read_text()))
    assert said
    assert "whole tokens" in said.group(1)
    assert "Wilson" not in said.group(1)
    assert rows["total_pnl_usd"][0] == C.usd(metrics["total_pnl_usd"])
    assert rows["max_drawdown"][0] == C.share(metrics["max_drawdown"])
    chains = _rows(written[0].read_text(), "breakdowns.chain")
    by_chain = analytics.by(trades, "chain")
    assert {k: v[0] for k, v in chains.items()} == {
        str(k): C.count(v) for k, v in by_chain["trades"].items()
    }


def _header(page: str, table: str) -> list[str]:
    found = re.search(rf'data-table="{re.escape(table)}">.*?<thead>(.*?)</thead>', page, re.S)
    assert found, table
    return [_unescape(c) for c in re.findall(r"<th[^>]*>(.*?)</th>", found.group(1))]


def test_recommendations_show_effect_and_signal_with_intervals(
    written: tuple[Path, Path, Path], own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    """Each optimizer claim beside its replayed effect and signal, each change with the
    interval of backtest.uncertainty and the trades and tokens it rests on."""
    from quantscope import backtest as bt

    with _client(own_sandbox, written[2]) as client:
        recs = qs.load_recommendations(QUANT, client=client)
        features = bt.trade_features(qs.load_trades(QUANT, client=client), client=client)
    checks = bt.crosscheck(recs, features).set_index("recommendation_id")
    page = written[0].read_text()
    rows = _rows(page, "recommendations.table")
    assert len(rows) == len(recs) == 14
    columns = _header(page, "recommendations.table")[1:]
    for rec_id, check in checks.iterrows():
        row = dict(zip(columns, rows[f"#{rec_id}"], strict=True))
        rec = recs.set_index("recommendation_id").loc[rec_id]
        sample = features[(features["market_cap_class"] == rec["market_cap_class"]).to_numpy()]
        new, old = [float(rec["new_threshold"])], float(rec["old_threshold"])
        effect = bt.what_if_intervals(sample, rec["criterion"], new, current=old).iloc[0]
        signal = bt.what_if_intervals(
            sample, rec["criterion"], new, current=old, rule="filter"
        ).iloc[0]
        assert row["effect: trades"] == C.signed_count(check["trades_change_replay"])
        assert row["effect: win rate [95 %]"] == (
            f"{C.points(check['win_rate_change_replay'])} "
            f"{C.interval(effect['d_win_rate_lo'], effect['d_win_rate_hi'], 'points')}"
        )
        assert row["effect: PnL [95 %]"].endswith(
            C.interval(effect["d_total_pnl_usd_lo"], effect["d_total_pnl_usd_hi"], "signed_usd")
        )
        assert row["signal: win rate [95 %]"] == (
            f"{C.points(signal['d_win_rate'])} "
            f"{C.interval(signal['d_win_rate_lo'], signal['d_win_rate_hi'], 'points')}"
        )
        assert row["service claim (signal)"] == C.points(check["win_rate_change_service"])
        assert row["trades"] == C.count(check["sample_size_client"])
        assert row["tokens"] == C.count(sample["token_id"].nunique())


def test_the_screen_ranks_criteria_with_adjusted_p_values_and_the_search(
    written: tuple[Path, Path, Path], own_sandbox: SandboxServer
) -> None:
    from quantscope import backtest as bt

    with _client(own_sandbox, written[2]) as client:
        features = bt.trade_features(qs.load_trades(QUANT, client=client), client=client)
    screened = bt.screen(features)
    meta = screened.attrs["screen"]
    page = _unescape(written[0].read_text())
    assert (
        f"({meta['hypotheses']} hypotheses, {meta['combos_searched']:,} threshold "
        "combinations searched)" in page
    )
    rows = _rows(written[0].read_text(), "screen.ranking")
    assert len(rows) == len(screened) == meta["hypotheses"]
    columns = _header(written[0].read_text(), "screen.ranking")[1:]
    best = screened.sort_values(["p_value", "p_raw"]).iloc[0]
    first = dict(zip(columns, next(iter(rows.values())), strict=True))
    assert next(iter(rows)) == f"{best['market_cap_class']} / {best['criterion']}"
    assert first["p (adjusted)"] == f"{best['p_value']:.3f}"
    assert first["significant"] == "yes"
    assert first["signal: win rate kept - dropped [95 %]"] == (
        f"{C.points(best['signal'])} {C.interval(best['signal_lo'], best['signal_hi'], 'points')}"
    )
    # the criteria no training set could split are named, not dropped silently
    for untested in meta["untested"]:
        assert f"{untested['market_cap_class']} / {untested['criterion']}" in page


def test_folds_and_what_if_rows_carry_intervals(written: tuple[Path, Path, Path]) -> None:
    """Issue 21: "MID_CAP fold 2 -5.5 pts" on 54 test trades stood bare."""
    page = written[0].read_text()
    name = "thresholds.walk_forward_smart_money_buys"
    header = _header(page, name)
    table = re.search(rf'data-table="{re.escape(name)}">(.*?)</table>', page, re.S)
    assert table
    folds = [
        dict(
            zip(
                header, [_unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)], strict=True
            )
        )
        for row in re.findall(r"<tr>(.*?)</tr>", table.group(1), re.S)
        if "<td" in row
    ]
    assert len(folds) >= 6
    for fold in folds:
        found = re.fullmatch(
            r"([+-]\d+\.\d) pts \[([+-]\d+\.\d) pts, ([+-]\d+\.\d) pts\]",
            fold["out of sample, effect: win rate [95 %]"],
        )
        assert found, fold
        value, lo, hi = (float(g) for g in found.groups())
        assert lo <= value <= hi, fold  # an interval around its estimate, not a point
        assert lo < hi, fold
        tokens, trades = fold["test tokens"], fold["test_trades"].replace(",", "")
        assert tokens.isdigit(), fold
        assert trades.isdigit(), fold
        assert 0 < int(tokens) <= int(trades), fold
    what_if = _rows(page, "thresholds.what_if_smart_money_buys_MID_CAP")
    columns = _header(page, "thresholds.what_if_smart_money_buys_MID_CAP")[1:]
    for cells in what_if.values():
        row = dict(zip(columns, cells, strict=True))
        assert row["effect: win rate [95 %]"].count("[") == 1
        assert row["signal: trades kept"].replace(",", "").isdigit()


def test_the_headline_sharpe_carries_its_sample_and_probabilistic_sharpe(
    written: tuple[Path, Path, Path], own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    """Issue 21: "Sharpe 22.0 over 69 days (8 losing days)" with no caveat."""
    with _client(own_sandbox, tmp_path) as client:
        metrics = analytics.summary(qs.load_trades(QUANT, client=client))
    page = _unescape(written[0].read_text())
    rows = _rows(written[0].read_text(), "headline.metrics")
    assert rows["losing_days"][0] == C.count(metrics["losing_days"]) == "8"
    assert rows["days"][0] == "69"
    assert rows["psr"][0] == C.probability(metrics["psr"])
    assert "Sharpe 22.02 over 69 days (8 losing days); probabilistic Sharpe ratio" in page
    assert "Short sample: the Sharpe of 22.02 and the Sortino rest on 69 days with 8 losing" in page


def test_nothing_outside_the_file_is_referred_to(written: tuple[Path, Path, Path]) -> None:
    page = written[0].read_text()
    assert not re.search(r"https?://", page)
    references = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert references
    assert all(r.startswith(("data:image/png;base64,", "#")) for r in references), references
    assert "<script" not in page
    assert "<link" not in page
    assert "@import" not in page


def test_it_loads_in_chromium_without_a_request(written: tuple[Path, Path, Path]) -> None:
    url = written[0].resolve().as_uri()
    with open_page(url) as visit:
        images = visit.page.eval_on_selector_all(
            "img", "els => els.map(e => e.complete && e.naturalWidth > 0)"
        )
        sections = visit.page.eval_on_selector_all("section", "els => els.map(e => e.id)")
        boxes = visit.page.eval_on_selector_all(
            "table",
            """els => els.map(t => {
                const box = t.parentElement, column = box.closest('section');
                return [t.dataset.table, box.className, getComputedStyle(box).overflowX,
                        box.scrollWidth, box.clientWidth, column.clientWidth,
                        box.getBoundingClientRect().right <= column.getBoundingClientRect().right];
            })""",
        )
    # Issue 24: the recommendations table (1,423 px in a 1,200 px column) was clipped. Every
    # table is in a box of its own that fits the column and scrolls sideways when it is wider.
    assert boxes, boxes
    assert all(b[1] == "scroll" and b[2] == "auto" and b[6] for b in boxes), boxes
    wide = {b[0] for b in boxes if b[3] > b[4]}
    assert "recommendations.table" in wide
    assert all(b[4] <= b[5] for b in boxes)
    assert visit.requests == [url]  # the file itself, nothing else (data: images send none)
    assert visit.failed == []
    assert visit.console_errors == []
    assert images
    assert all(images)
    assert sections == [s.key for s in SECTIONS]


def test_a_warm_run_differs_only_in_what_it_cost(
    written: tuple[Path, Path, Path], own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    first, _, cache = written
    with _client(own_sandbox, cache) as client:
        again = qs.report(QUANT, tmp_path / "warm.html", criteria=CRITERIA, client=client)
    old, new = first.read_text(), again.read_text()
    cost = re.compile(r'<table data-table="overview\.(facts|cost)">.*?</table>', re.S)
    assert old != new
    assert cost.sub("", old) == cost.sub("", new)
    assert _rows(new, "overview.facts")["requests sent for this report"] == ["0"]


def test_over_the_quota_share_it_is_refused_with_the_cost(
    own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    before = quota_left(own_sandbox, "enterprise")
    with _client(own_sandbox, tmp_path, quota_share=0.05) as client:
        with pytest.raises(QuotaShareExceededError, match="confirm=True") as refused:
            qs.report(QUANT, tmp_path / "r.html", client=client)
        trades = qs.load_trades(QUANT, trading_status="all", client=client)
    pages = trades.attrs["quantscope"]["pages"]
    # The trades' pages, and the first page of the evaluations (priced with probe=True: it
    # tells how many pages follow): nothing else was sent.
    assert before - quota_left(own_sandbox, "enterprise") == pages + 1
    assert refused.value.needed > 800
    assert refused.value.endpoint == "report"
    assert not (tmp_path / "r.html").exists()


def test_the_accessor_writes_the_same_report_from_a_frame(
    written: tuple[Path, Path, Path], own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    first, _, cache = written
    with _client(own_sandbox, cache) as client:
        trades = qs.load_trades(QUANT, trading_status="all", client=client)
        path = trades.quant.report(tmp_path / "frame.html", criteria=CRITERIA, client=client)
        bare = trades.quant.report(tmp_path / "bare.html", load=False)
    page = path.read_text()
    assert "quantscope report: Atlas (quant 1)" in page
    for table in ("headline.metrics", "breakdowns.token", "recommendations.table"):
        assert _rows(page, table) == _rows(first.read_text(), table), table
    sparse = bare.read_text()
    assert _rows(sparse, "headline.metrics") == _rows(first.read_text(), "headline.metrics")
    assert "No playbook in this report" in sparse


def test_the_command_line_writes_a_report(
    written: tuple[Path, Path, Path],
    own_sandbox: SandboxServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("QUANTSCOPE_URL", own_sandbox.url)
    monkeypatch.setenv("QUANTSCOPE_API_KEY", own_sandbox.keys["enterprise"])
    monkeypatch.setenv("QUANTSCOPE_CACHE_DIR", str(written[2]))
    target = tmp_path / "cli.html"
    assert (
        main(["report", "--quant", "1", "--criteria", "smart_money_buys", "-o", str(target)]) == 0
    )
    assert capsys.readouterr().out.strip() == str(target)
    assert _rows(target.read_text(), "headline.metrics") == _rows(
        written[0].read_text(), "headline.metrics"
    )
    assert main(["report", "--quant", "1", "-o", str(tmp_path / "x.txt")]) == 2  # usage
    assert "expected .html or .htm, got '.txt'" in capsys.readouterr().err


def test_a_bad_criterion_is_refused_from_the_playbook_before_the_trades(
    own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    """``qs.report`` loaded the trades and every detail (~860 requests on a cold cache, 3.6 s
    warm) before the research section said the key was unknown; now the playbook alone
    decides, before the trades: 1 request on a cold cache, one line naming the known keys."""
    left = quota_left(own_sandbox, "enterprise")
    with (
        _client(own_sandbox, tmp_path / "cache") as client,
        pytest.raises(qs.UnknownCriterionError) as bad,
    ):
        qs.report(
            QUANT, tmp_path / "bad.html", criteria=["smart_money_buy", *CRITERIA], client=client
        )
    assert quota_left(own_sandbox, "enterprise") == left - 1  # the playbook, nothing more
    assert not (tmp_path / "bad.html").exists()
    message = str(bad.value)
    assert "\n" not in message
    assert message.startswith("criteria smart_money_buy: not in the playbook of quant 1")
    assert "did you mean 'smart_money_buys'" in message
    assert bad.value.unknown == ("smart_money_buy",)
    assert "smart_money_buys" in bad.value.known
    assert isinstance(bad.value, ValueError)  # a bad argument, as Python says it


# --- issue 24: the tear-sheet figures, the benchmark, tables that scroll, progress ------------


def test_every_table_scrolls_inside_its_own_box(written: tuple[Path, Path, Path]) -> None:
    """The recommendations table was 1,423 px in a 1,200 px column, clipped: each table now sits
    in a box that scrolls sideways (the table itself stays a table)."""
    page = written[0].read_text()
    tables = re.findall(r"(.{0,40})<table data-table=\"([^\"]+)\">", page)
    assert len(tables) > 15
    assert all(before.endswith('<div class="scroll">') for before, _ in tables), tables
    assert page.count('<div class="scroll">') == len(tables)
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    assert style
    assert re.search(r"div\.scroll \{[^}]*overflow-x: auto", style.group(1))
    assert not re.search(r"table \{[^}]*display: block", style.group(1))


def test_the_returns_section_shows_the_tear_sheet_figures_of_the_daily_returns(
    written: tuple[Path, Path, Path], own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    """Issue 24: beside quantstats' tear sheet the report lacked CAGR, volatility, VaR/CVaR,
    Calmar, skew, kurtosis, best and worst day and the monthly table; its figures are those of
    analytics.return_metrics over daily_returns() (equal to quantstats: test_analytics_returns)."""
    with _client(own_sandbox, tmp_path) as client:
        trades = qs.load_trades(QUANT, client=client)
    returns = analytics.daily_returns(trades)
    m = analytics.return_metrics(returns)
    page = written[0].read_text()
    rows = _rows(page, "returns.figures")
    assert rows["cagr"][0] == C.share(m["cagr"])
    assert rows["volatility"][0] == C.share(m["volatility"]) == "46.4%"
    assert rows["sharpe"][0] == C.ratio(m["sharpe"]) == "19.54"  # quantstats' 19.5
    assert rows["psr"][0] == C.probability(m["psr"])  # beside the Sharpe
    assert rows["var_95"][0] == C.share(m["var_95"])
    assert rows["cvar_95"][0] == C.share(m["cvar_95"])
    assert rows["calmar"][0] == C.ratio(m["calmar"])
    assert rows["skew"][0] == C.ratio(m["skew"])
    assert rows["kurtosis"][0] == C.ratio(m["kurtosis"])
    assert "EXCESS kurtosis" in rows["kurtosis"][1]
    assert rows["best_day"][0] == f"{C.share(m['best_day'])} ({C.day(m['best_day_date'])})"
    assert rows["worst_day"][0] == f"{C.share(m['worst_day'])} ({C.day(m['worst_day_date'])})"
    assert "historical value at risk, 95 %" in rows["var_95"][1]
    monthly = _rows(page, "returns.monthly")
    table = analytics.monthly_returns(returns)
    assert monthly["2026"] == [C.share(v) for v in table.loc[2026]]
    assert monthly["2026"][0] == "n/a"
    assert monthly["2026"][-1] == C.share(m["total_return"])
    text = _unescape(page)
    assert "Short sample: CAGR " in text
    assert "(probabilistic Sharpe ratio > 99.9%)" in text
    assert "the headline's (22.02, PSR > 99.9%) is over the daily PnL" in text
    assert "No benchmark: pass benchmark=" in text


def test_a_benchmark_token_is_priced_loaded_and_shown_beside_with_progress(
    written: tuple[Path, Path, Path],
    own_sandbox: SandboxServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A token id as benchmark: its candles are one more load of the report (warm cache: the
    rest is read from it), beta, alpha and correlation, and its own CAGR and volatility.
    Issue 24: a cold report was silent for 12-27 s; it names each stage on stderr (the
    loaders' progress module)."""
    with _client(own_sandbox, written[2]) as client:
        trades = qs.load_trades(QUANT, client=client)
        token = int(trades["token_id"].dropna().iloc[0])
        capsys.readouterr()
        path = qs.report(
            QUANT, tmp_path / "bench.html", client=client, benchmark=token, progress=True
        )
        shown = capsys.readouterr()
        candles = qs.load_ohlcv(token, client=client)
    assert shown.out == ""
    stages = ("trades", "details", "benchmark", "recommendations", "returns", "writing the page")
    for stage in stages:
        assert f"report: {stage}" in shown.err, stage
    page = path.read_text()
    greeks = analytics.benchmark_metrics(
        analytics.daily_returns(trades), candles.pipe(analytics.candle_returns)
    )
    rows = _rows(page, "returns.greeks")
    assert rows["beta"][0] == C.ratio(greeks["beta"])
    assert rows["correlation"][0] == C.ratio(greeks["correlation"])
    assert rows["alpha"][0] == C.share(greeks["alpha"])
    beside = _rows(page, "returns.benchmark")
    assert beside["cagr"] == [
        _rows(page, "returns.figures")["cagr"][0],
        C.share(greeks["benchmark_cagr"]),
    ]
    assert beside["volatility"][1] == C.share(greeks["benchmark_volatility"])
    assert f"benchmark (token {token})" in _header(page, "returns.benchmark")
    endpoints = _rows(page, "overview.cost")
    assert any("ohlcv" in e for e in endpoints), endpoints


def test_a_benchmark_series_from_a_frame_no_progress_and_bad_ones_refused_before_a_request(
    written: tuple[Path, Path, Path],
    own_sandbox: SandboxServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with _client(own_sandbox, written[2]) as client:
        trades = qs.load_trades(QUANT, client=client)
    returns = analytics.daily_returns(trades)
    half = (returns.iloc[::2] * 0.5).rename("half the account")
    capsys.readouterr()
    written_path = report_trades(
        trades, tmp_path / "s.html", load=False, benchmark=half, progress=False
    )
    assert capsys.readouterr().err == ""  # progress=False: not a word
    page = written_path.read_text()
    greeks = _rows(page, "returns.greeks")
    assert greeks["paired_days"][0] == C.count(len(half))
    assert greeks["beta"][0] == "2.00"  # r = 2 b there
    assert greeks["correlation"][0] == "1.00"
    assert "benchmark (half the account)" in _header(page, "returns.benchmark")
    assert f"covers {len(half)} of the {len(returns)} days" in _unescape(page)
    with pytest.raises(ValueError, match="a token id as benchmark= is loaded"):
        report_trades(trades, tmp_path / "t.html", load=False, benchmark=7)
    with pytest.raises(ValueError, match="benchmark= is daily returns"):
        report_trades(trades, tmp_path / "t.html", load=False, benchmark="SPY")
    with pytest.raises(ValueError, match=r"give a path ending in \.html"):
        qs.report(QUANT, tmp_path / "r.pdf")  # refused before any client is looked for
    assert not (tmp_path / "t.html").exists()
