"""Every frame and Series quantscope returns, declared once: columns, sources, kinds, units.

``docs/frames.md`` is generated from these specs (``python -m quantscope._typed.schemas``) and a
test keeps it in step. Ratios are fractions here whatever scale the service used: a spec field in
percent gets ``scale=0.01``. A spec whose doc says "a Series" describes a one-record answer
(counts, statistics, a write's result): ``_typed.frames.series_of`` turns the record into a Series
whose index is the spec's column names, so no loader casts a value by hand.

A spec's ``required`` names the columns whose source field the API spec promises a value in
every record (its field tables: not "optional", not "or null", not a text left empty while a
trade is open); a record lacking one is counted and warned about (``_typed.frames.Columns``).
Specs of the dashboard, the playbook and the signals promise nothing here: their sources
describe those fields loosely ("if served", "set for BUY and SELL").
"""

from __future__ import annotations

from quantscope._typed.frames import Col, FrameSpec

PCT = 0.01  # percent on the wire -> fraction in the frame

# The enumerations' whole sets (sorted): the API spec's values ("States and transitions",
# the field tables), completed where the spec says "not shown" by docs/service-contract.md's
# decisions. A categorical column takes its categories from here, whatever rows were loaded.
CHAINS = ("BASE", "BSC", "SOLANA")
CHAIN_KEYS = ("all", "base", "bsc", "solana")  # the keys of byChain (signal stats)
TRADE_STATUSES = ("Closed", "Open")
TRADE_RESULTS = ("Breakeven", "Loss", "Profit")
DECISIONS = ("APPROVE", "DELAY", "RECOMMEND", "REJECT")
EVALUATION_TYPES = ("TOKEN_BUY", "TOKEN_SELL", "TOKEN_STATUS")
ACTIONS = ("BUY", "SELL")
OPERATORS = ("V_GTE_T", "V_GT_T", "V_LTE_T", "V_LT_T")
STAGES = ("BUY", "SCREENING", "SELL", "WATCH")
MARKET_CAP_CLASSES = ("DEGEN_CAP", "LOW_CAP", "MID_CAP")
CONFIG_TYPES = ("BUY", "BUYING", "SCANNING")  # BUY: on recommendations
INTERVALS = ("noTime",)


def _every(columns: tuple[Col, ...], *but: str) -> tuple[str, ...]:
    """The names of ``columns`` except ``but``: a spec's ``required`` columns."""
    unknown = set(but) - {c.name for c in columns}
    if unknown:
        raise ValueError(f"not columns: {sorted(unknown)}")
    return tuple(c.name for c in columns if c.name not in but)


_TRADES_COLUMNS = (
    Col("trade_id", "id", "int", "trade identifier"),
    Col("quant_name", "quant_name", "category", "the quant that traded"),
    Col("token_id", "token_id", "int", "token identifier"),
    Col("token_symbol", "token_symbol", "string"),
    Col("token_name", "token_name", "string"),
    Col("chain", "token_chain", "category", "SOLANA, BASE or BSC", categories=CHAINS),
    Col("token_address", "token_address", "string"),
    Col("opened_at", "open_date", "trade_date", "UTC"),
    Col("closed_at", "close_date", "trade_date", "UTC; missing while the position is open"),
    Col("duration_s", "duration", "number_text", "holding time in seconds"),
    Col("status", "status", "category", "Open or Closed", categories=TRADE_STATUSES),
    Col("result", "result", "category", "Profit, Loss or Breakeven", categories=TRADE_RESULTS),
    Col("buy_cost_usd", "buy_cost_usd", "number_text", "USD spent"),
    Col("sell_revenue_usd", "sell_revenue_usd", "number_text", "USD received (0 while open)"),
    Col("pnl_usd", "pnl_usd", "number_text", "profit or loss in USD (marked while open)"),
    Col("roi", "roi", "number_text", "pnl over cost, fraction", PCT),
    Col("native_spent", "eth_sol_spent", "number_text", "native coin spent (SOL/ETH/BNB)"),
    Col("native_received", "eth_sol_received", "number_text", "native coin received"),
    Col("tokens_bought", "tokens_bought", "number_text"),
    Col("tokens_sold", "tokens_sold", "number_text"),
    Col("avg_buy_price_native", "avg_buy_price_solOrEth", "number_text", "in native coin"),
    Col(
        "decision",
        "metadata.llmValidation.decision",
        "category",
        "model validation: APPROVE, DELAY, REJECT, RECOMMEND",
        categories=DECISIONS,
    ),
    Col("wait_until", "metadata.llmValidation.waitUntil", "iso", "end of a delay, UTC"),
    Col(
        "validation_confidence",
        "metadata.llmValidation.confidence",
        "float",
        "model validation confidence",
    ),
    Col("validated_at", "metadata.llmValidation.validatedAt", "iso", "UTC"),
    Col("evaluation_id", "latest_evaluation.id", "int", "the evaluation that bought"),
    Col("evaluation_type", "latest_evaluation.type", "category", categories=EVALUATION_TYPES),
    Col("evaluation_passed", "latest_evaluation.passed", "bool"),
    Col("ai_score", "latest_evaluation.ai_score", "float", "0-100"),
    Col("internal_score", "latest_evaluation.internal_score", "float", "0-100"),
    Col("evaluated_at", "latest_evaluation.timestamp", "iso", "UTC"),
    Col("detection_price_usd", "latest_evaluation.detection_price", "float"),
    Col("token_price_usd", "price", "number_text", "token price now"),
    Col("token_change_24h", "price_change", "number_text", "token 24 h change, fraction", PCT),
    Col("token_volume_24h_usd", "volume24h", "number_text", "token 24 h volume now"),
)

TRADES = FrameSpec(
    "trades",
    _TRADES_COLUMNS,
    doc="One row per trade (GET /api/trades, every page).",
    required=_every(
        _TRADES_COLUMNS,
        "closed_at",
        "decision",
        "wait_until",
        "validation_confidence",
        "validated_at",
    ),
)

TRADE_DETAIL_EXTRA = (
    Col("duration_s", "duration_seconds", "int", "holding time in seconds"),
    Col("buy_cost_usd", "buy_cost_usd_raw", "float", "USD spent (exact)"),
    Col("sell_revenue_usd", "sell_revenue_usd_raw", "float", "USD received (exact)"),
    Col("pnl_usd", "pnl_usd_raw", "float", "exact"),
    Col("roi", "roi_raw", "float", "fraction", PCT),
    Col("native_spent", "eth_sol_spent_raw", "float"),
    Col("native_received", "eth_sol_received_raw", "float"),
    Col("tokens_bought", "tokens_bought_raw", "float"),
    Col("tokens_sold", "tokens_sold_raw", "float"),
    Col("avg_buy_price_native", "avg_buy_price_solOrEth_raw", "float"),
    Col("token_price_usd", "price_raw", "float"),
    Col("token_change_24h", "price_change_raw", "float", "fraction", PCT),
    Col("token_volume_24h_usd", "volume24h_raw", "float"),
    Col("token_market_cap_usd", "marketCap_raw", "float"),
    Col("token_liquidity_usd", "liquidity_raw", "float"),
)


def _trade_detail() -> FrameSpec:
    # Detail rows carry exact _raw twins: they replace the parsed display strings.
    extra = {c.name: c for c in TRADE_DETAIL_EXTRA}
    cols = [extra.pop(c.name, c) for c in TRADES.columns]
    return FrameSpec(
        "trade",
        (*cols, *extra.values()),
        doc="One trade (GET /api/trades/{id}).",
        required=TRADES.required,
    )


TRADE_DETAIL = _trade_detail()

_TRANSACTIONS_COLUMNS = (
    Col("transaction_id", "id", "int"),
    Col("trade_id", "trade_id", "int", "added by the loader"),
    Col("action", "action", "category", "BUY or SELL", categories=ACTIONS),
    Col("tx_hash", "txHash", "string"),
    Col("timestamp", "timestamp", "iso", "UTC"),
    Col("input_token", "inputToken", "string", "address"),
    Col("output_token", "outputToken", "string", "address"),
    Col("input_amount", "inputAmount", "float"),
    Col("output_amount", "outputAmount", "float"),
    Col("input_value_usd", "inputValueUsd", "float"),
    Col("output_value_usd", "outputValueUsd", "float"),
    Col("price_usd", "pricePerTokenInUsd", "float"),
)

TRANSACTIONS = FrameSpec(
    "transactions",
    _TRANSACTIONS_COLUMNS,
    doc="The on-chain transactions of a trade.",
    required=_every(_TRANSACTIONS_COLUMNS),
)

_EVALUATIONS_COLUMNS = (
    Col("evaluation_id", "id", "int"),
    Col("quant_id", "userQuantId", "int"),
    Col("token_id", "tokenId", "int"),
    Col("token_symbol", "token.symbol", "string"),
    Col("token_address", "token.address", "string"),
    Col("chain", "token.chainName", "category", categories=CHAINS),
    Col(
        "evaluation_type",
        "evaluationResultType",
        "category",
        "TOKEN_STATUS, TOKEN_BUY or TOKEN_SELL",
        categories=EVALUATION_TYPES,
    ),
    Col("created_at", "createdAt", "iso", "UTC"),
    Col("updated_at", "updatedAt", "iso", "UTC"),
    Col("passed", "passed", "bool"),
    Col("avg_score", "avgScore", "float", "0-100"),
    Col("ai_score", "aiScore", "float", "0-100; 0 when the AI step did not run"),
    Col("internal_score", "internalScore", "float", "playbook weighted score, 0-100"),
    Col("market_cap_usd", "marketCap", "float"),
    Col("detection_price_usd", "token.detectionPrice", "float"),
    Col("entry_price_usd", "performance.entryPriceUsd", "float"),
    Col("roi_24h", "performance.roi", "float", "detection to +24 h, fraction", PCT),
    Col("ai_analysis", "aiAnalysis", "string"),
)

EVALUATIONS = FrameSpec(
    "evaluations",
    _EVALUATIONS_COLUMNS,
    doc="One row per evaluation (GET /api/eval-results, every page).",
    required=_every(_EVALUATIONS_COLUMNS),
)

_EVAL_TIMESERIES_COLUMNS = (
    Col("timestamp", "timestamp", "iso", "bucket start, UTC"),
    Col("evaluations", "evaluations", "int"),
    Col("passed", "passed", "int"),
    Col("failed", "failed", "int"),
    Col("pass_rate", "percentPassed", "float", "fraction", PCT),
)

EVAL_TIMESERIES = FrameSpec(
    "eval_timeseries",
    _EVAL_TIMESERIES_COLUMNS,
    index="timestamp",
    doc="Evaluation counts per time bucket (GET /api/eval-timeseries).",
    required=_every(_EVAL_TIMESERIES_COLUMNS),
)

EVAL_DETAILS = FrameSpec(
    "eval_details",
    (
        Col("evaluation_id", "evaluation_id", "int", "the evaluation (added by the loader)"),
        Col("quant_id", "quant_id", "int", "userQuant.id"),
        Col("token_id", "token_id", "int", "token.id"),
        Col("chain", "chain", "category", "token.chainName", categories=CHAINS),
        Col(
            "evaluation_type",
            "evaluation_type",
            "category",
            "evaluationResult type",
            categories=EVALUATION_TYPES,
        ),
        Col("evaluation_passed", "evaluation_passed", "bool", "the evaluation's verdict"),
        Col("internal_score", "internal_score", "float", "the evaluation's weighted score"),
        Col("market_cap_usd", "market_cap_usd", "float", "token.mc at evaluation time"),
        Col("result_id", "id", "int", "criterion result id"),
        Col("criterion_id", "criteriaId", "int"),
        Col("criterion", "criteria.key", "category"),
        Col("criterion_name", "criteria.name", "string"),
        Col("category", "category.name", "category"),
        Col(
            "operator",
            "extraInfo.operator",
            "category",
            "V_GTE_T, V_GT_T, V_LTE_T, V_LT_T",
            categories=OPERATORS,
        ),
        Col("value", "value", "number_text", "the measured value, parsed"),
        Col("value_text", "value", "string", "the measured value as served"),
        Col("threshold", "threshold", "float"),
        Col("weight", "weight", "float"),
        Col("passed", "passed", "bool", "missing when the criterion is disabled"),
        Col("score", "score", "float", "contribution: the weight when passed, else 0"),
        Col("criteria_score", "criteriaScore", "float", "0-100 position in the range"),
        Col("created_at", "createdAt", "iso", "UTC"),
        Col("extra_info", "extraInfo", "json", "options / operator / range, as JSON text"),
    ),
    doc="One row per criterion result (GET /api/eval-details, one or many evaluations).",
)

_EVAL_HISTORY_COLUMNS = (
    Col("evaluation_id", "id", "int"),
    Col("created_at", "createdAt", "iso", "UTC"),
    Col("evaluation_type", "evaluationResultType", "category", categories=EVALUATION_TYPES),
    Col("passed", "passed", "bool"),
    Col("ai_score", "aiScore", "float"),
    Col("internal_score", "internalScore", "float"),
    Col("price_usd", "price", "float", "detection price"),
    Col("market_cap_usd", "marketCap", "float"),
)

EVAL_HISTORY = FrameSpec(
    "eval_history",
    _EVAL_HISTORY_COLUMNS,
    doc="Earlier evaluations of the same token by the same quant (GET /api/eval-history).",
    required=_every(_EVAL_HISTORY_COLUMNS),
)

_OHLCV_COLUMNS = (
    Col("timestamp", "timestamp", "epoch_ms", "candle start, UTC"),
    Col("open", "open", "float", "USD"),
    Col("high", "high", "float", "USD"),
    Col("low", "low", "float", "USD"),
    Col("close", "close", "float", "USD"),
    Col("volume", "volume", "float", "USD"),
)

OHLCV = FrameSpec(
    "ohlcv",
    _OHLCV_COLUMNS,
    index="timestamp",
    doc="Candles (GET /api/eval-ohlcv), indexed by a UTC DatetimeIndex.",
    required=_every(_OHLCV_COLUMNS),
)

SIGNALS = FrameSpec(
    "signals",
    (
        Col("token_id", "tokenId", "int"),
        Col("evaluation_id", "evaluationId", "int"),
        Col("token", "token", "string", "token name"),
        Col("symbol", "symbol", "string"),
        Col("chain", "chainName", "category", categories=CHAINS),
        Col("stage", "stage", "category", "SCREENING, BUY, SELL, WATCH", categories=STAGES),
        Col("passed", "passed", "bool"),
        Col("evaluation_type", "evaluationResultType", "category", categories=EVALUATION_TYPES),
        Col("price_usd", "price", "float"),
        Col("change_24h", "change", "float", "fraction", PCT),
        Col("volume_24h_usd", "volume24h", "float"),
        Col("market_cap_usd", "marketCap", "float"),
        Col("liquidity_usd", "liquidity", "float"),
        Col("analysis_progress", "analysisProgress", "float", "fraction", PCT),
        Col("entry_price_usd", "entryPriceUsd", "float", "set for BUY and SELL"),
        Col("roi", "roi", "float", "fraction; set for BUY and SELL", PCT),
        Col("alert", "alert", "string"),
        Col("updated_at", "updatedAt", "iso", "UTC"),
        Col("address", "address", "string"),
    ),
    doc="Alpha signals (GET /api/alpha-signals).",
)

SIGNAL_STATS = FrameSpec(
    "signal_stats",
    (
        Col("chain", "chain", "category", "all, solana, base, bsc", categories=CHAIN_KEYS),
        Col("total", "total", "int"),
        Col("screening", "screening", "int"),
        Col("buy", "buy", "int"),
        Col("sell", "sell", "int"),
        Col("watch", "watch", "int"),
    ),
    index="chain",
    doc="Signal counts per stage and chain (byChain.*.stats).",
)

PLAYBOOK = FrameSpec(
    "playbook",
    (
        Col(
            "market_cap_class",
            "marketCap",
            "category",
            "DEGEN_CAP, LOW_CAP, MID_CAP",
            categories=MARKET_CAP_CLASSES,
        ),
        Col("category", "category", "category"),
        Col("criterion", "rootKey", "category"),
        Col("criterion_name", "criteriaName", "string"),
        Col(
            "config_type",
            "configType",
            "category",
            "SCANNING or BUYING",
            categories=CONFIG_TYPES,
        ),
        Col("interval", "interval", "category", "noTime", categories=INTERVALS),
        Col("threshold", "threshold", "float"),
        Col("weight", "weight", "float"),
        Col("required", "required", "bool"),
        Col("disabled", "disabled", "bool"),
        Col("delegate", "delegate", "bool"),
        Col("operator", "extraInfo.operator", "category", categories=OPERATORS),
        Col("range_min", "extraInfo.range.min", "float"),
        Col("range_max", "extraInfo.range.max", "float"),
        Col("is_human", "isHumanCriteria", "bool"),
        Col("config_id", "configId", "string", "use it to update the entry"),
        Col("config_key", "configKey", "string"),
        Col("extra_info", "extraInfo", "json", "options / operator / range, as JSON text"),
        Col("pass_mark", "passMark", "float", "weighted-score pass mark (if served)"),
    ),
    doc="The playbook, long: one row per class x category x criterion x config type x interval.",
)

RECOMMENDATIONS = FrameSpec(
    "recommendations",
    (
        Col("recommendation_id", "id", "int"),
        Col("quant_id", "userQuantId", "int"),
        Col("criterion_id", "criteriaId", "int"),
        Col("criterion", "criteriaKey", "category"),
        Col("criterion_name", "criteriaName", "string"),
        Col(
            "market_cap_class",
            "marketCap",
            "category",
            "if served",
            categories=MARKET_CAP_CLASSES,
        ),
        Col("config_id", "configId", "string", "if served"),
        Col("config_type", "configType", "category", categories=CONFIG_TYPES),
        Col("old_threshold", "oldThreshold", "float"),
        Col("new_threshold", "newThreshold", "float"),
        Col("confidence", "confidence", "float", "fraction"),
        Col("before_win_rate", "beforeWinRate", "float", "fraction"),
        Col("after_win_rate", "afterWinRate", "float", "fraction"),
        Col("trade_difference", "tradeDifference", "int"),
        Col("sample_size", "sampleSize", "int"),
        Col("profitable_accuracy", "profitableAccuracy", "float"),
        Col("unprofitable_accuracy", "unprofitableAccuracy", "float"),
        Col("f1_score", "f1Score", "float"),
        Col("profitable_avg", "profitableAvg", "float"),
        Col("unprofitable_avg", "unprofitableAvg", "float"),
        Col("value_difference_ratio", "valueDifferenceRatio", "float"),
        Col("actual_impact", "actualImpact", "float"),
        Col("applied", "applied", "bool"),
        Col("applied_at", "appliedAt", "iso", "UTC"),
        Col("is_degen_config", "isDegenConfig", "bool"),
        Col("reasoning", "reasoning", "string"),
        Col("created_at", "createdAt", "iso", "UTC"),
    ),
    doc="Optimizer recommendations (dashboard's recent and applied lists).",
)

_TRADE_STATS_COLUMNS = (
    Col("total_trades", "totalTrades", "float", "executed trades"),
    Col("total_volume_usd", "totalVolume", "float", "USD"),
    Col("trades_weekly_change", "tradesWeeklyChange", "float", "week on week, fraction", PCT),
    Col("volume_weekly_change", "volumeWeeklyChange", "float", "week on week, fraction", PCT),
)

TRADE_STATS = FrameSpec(
    "trade_stats",
    _TRADE_STATS_COLUMNS,
    doc="Executed-trade statistics (GET /api/trades/stats, `metrics`), a Series.",
    required=_every(_TRADE_STATS_COLUMNS),
)

_EVAL_COUNT_COLUMNS = (
    Col("total", "total", "float", "evaluations in the window"),
    Col("passed", "passed", "float"),
    Col("failed", "failed", "float"),
    Col("pass_rate", "percentPassed", "float", "fraction", PCT),
)

EVAL_COUNT = FrameSpec(
    "eval_count",
    _EVAL_COUNT_COLUMNS,
    doc="Evaluation counts of a window (GET /api/eval-count), a Series.",
    required=_every(_EVAL_COUNT_COLUMNS),
)

PERFORMANCE = FrameSpec(
    "performance",
    (
        Col("total_trades", "totalTrades", "float"),
        Col("completed_trades", "completedTrades", "float"),
        Col("active_trades", "activeTrades", "float"),
        Col("winning_trades", "winningTrades", "float"),
        Col("losing_trades", "losingTrades", "float"),
        Col("win_rate", "winRate", "float", "fraction of closed trades won"),
        Col("avg_profit_winning_usd", "avgProfitWinningTrades", "float"),
        Col("avg_loss_losing_usd", "avgLossLosingTrades", "float"),
        Col("total_pnl_usd", "totalPnL", "float", "realised"),
    ),
    doc="The optimizer dashboard's overall performance (`data.overallPerformance`), a Series.",
)

WEEKLY_TRENDS = FrameSpec(
    "weekly_trends",
    (
        Col("week_start", "weekStart", "iso", "Monday 00:00 UTC"),
        Col("trades", "trades", "int"),
        Col("closed_trades", "closedTrades", "int"),
        Col("win_rate", "winRate", "float", "fraction of the week's closed trades won"),
        Col("pnl", "pnl", "float", "USD, realised"),
    ),
    index="week_start",
    doc="Closed-trade results per week (dashboard `data.historicalTrends.weekly`).",
)

ANALYSIS = FrameSpec(
    "analysis",
    (
        Col("trades_analyzed", "tradesAnalyzed", "int"),
        Col("recommendations_generated", "recommendationsGenerated", "int"),
        Col("recommendations_applied", "recommendationsApplied", "int"),
    ),
    doc="What an optimizer run did (POST /api/refine-eval/analyze, `data`), a Series.",
)

APPLIED = FrameSpec(
    "applied",
    (
        Col("id", "id", "object", "the recommendation"),
        Col("criteria_id", "criteriaId", "object"),
        Col("criteria_key", "criteriaKey", "object"),
        Col("criteria_name", "criteriaName", "object"),
        Col("old_threshold", "oldThreshold", "object"),
        Col("new_threshold", "newThreshold", "object", "the entry's threshold from now on"),
        Col("applied", "applied", "object"),
        Col("applied_at", "appliedAt", "object", "ISO text, UTC"),
        Col("before_win_rate", "beforeWinRate", "object", "fraction"),
        Col("after_win_rate", "afterWinRate", "object", "fraction"),
        Col("trade_difference", "tradeDifference", "object"),
        Col("actual_impact", "actualImpact", "object", "fraction"),
    ),
    doc="An applied recommendation (POST /api/refine-eval/recs/{id}/apply, `data`), a Series "
    "of the values as served.",
)

PLAYBOOK_UPDATE = FrameSpec(
    "playbook_update",
    (
        Col("config_id", "id", "string"),
        Col("criterion", "criteriaKey", "category"),
        Col("config_type", "configType", "category", categories=CONFIG_TYPES),
        Col("threshold", "threshold", "float"),
        Col("weight", "weight", "float"),
        Col("required", "required", "bool"),
        Col("disabled", "disabled", "bool"),
    ),
    doc="The entries a playbook update changed (PUT /api/degen/config, `updatedConfigs`).",
)

ALL_SPECS: tuple[FrameSpec, ...] = (
    TRADES,
    TRADE_DETAIL,
    TRANSACTIONS,
    EVALUATIONS,
    EVAL_TIMESERIES,
    EVAL_DETAILS,
    EVAL_HISTORY,
    OHLCV,
    SIGNALS,
    SIGNAL_STATS,
    PLAYBOOK,
    RECOMMENDATIONS,
    TRADE_STATS,
    EVAL_COUNT,
    PERFORMANCE,
    WEEKLY_TRENDS,
    ANALYSIS,
    APPLIED,
    PLAYBOOK_UPDATE,
)


def frames_markdown() -> str:
    """docs/frames.md: every frame's columns, dtypes and units."""
    lines = [
        "# Frames",
        "",
        "Every loader returns a DataFrame with exactly these columns and dtypes, or, where "
        "a spec says so, a Series with these names as its index "
        "(generated from `src/quantscope/_typed/schemas.py`; `python -m quantscope._typed.schemas` "
        "rewrites this file). Ratios are fractions (0.125, not 12.5). Every frame carries "
        'its provenance in `df.attrs["quantscope"]`: endpoint, params, fetched_at, '
        "from_cache, pages, requests.",
        "",
        "A column marked **promised** comes from a field the API spec promises in every "
        "record: a record that lacks it (absent or null) is counted in one "
        '`DataQualityWarning` per load and in `df.attrs["quantscope"]["checks"]["missing"]` '
        '(docs/service-contract.md, "How answers are checked").',
        "",
        "A `category` column with its values in parentheses holds exactly those categories, "
        "in that order, whatever rows were loaded: loads concatenate (`pd.concat`) as "
        "categoricals and a catalog file keeps the whole set. A value outside the set is kept "
        "as an extra category after them and counted in the frame's one `DataQualityWarning` "
        '(`df.attrs["quantscope"]["checks"]["unknown"]`). Other `category` columns (quant '
        "names, criterion keys and categories: open sets) hold the loaded values, sorted.",
        "",
        "A list load (trades, evaluations, an evaluation history) whose filters match no "
        "row returns the empty frame with these columns and one `EmptyResultWarning` naming "
        "the filters, the plan and the service (`load_trades(quant_id=99)`).",
        "",
    ]
    for spec in ALL_SPECS:
        lines += [f"## `{spec.name}`", "", spec.doc, ""]
        if spec.index:
            lines += [f"Index: `{spec.index}`.", ""]
        lines += ["| column | dtype | from | notes |", "|---|---|---|---|"]
        for c in spec.columns:
            promised = "**promised**" + ("; " if c.doc else "") if c.name in spec.required else ""
            dtype = f"category ({', '.join(c.categories)})" if c.categories else c.dtype
            lines.append(f"| `{c.name}` | {dtype} | `{c.source}` | {promised}{c.doc} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    from pathlib import Path

    target = Path(__file__).resolve().parents[2] / "docs" / "frames.md"
    target.write_text(frames_markdown())
    print(f"wrote {target}")
