"""The sandbox's wire models: valid bodies pass, each kind of contract violation fails.

Payloads are hand-written in the shapes of docs/service-contract.md; each builder returns a fresh
dict so that a test can break one field without touching the others.
"""

from __future__ import annotations

import asyncio
import copy
import importlib
import inspect
import json
import pkgutil
import re
from collections.abc import Callable
from typing import Any, get_args

import httpx
import pytest
from fastapi import FastAPI
from pydantic import BaseModel, RootModel

from quantscope.sandbox import catalog
from quantscope.sandbox import models as m
from quantscope.sandbox.models import validate_response

Payload = dict[str, Any]
TS = "2026-09-30T12:00:00.000Z"
UUID = "0b9d6c1e-4f6a-4c3b-9a51-2f0e8d7c6b5a"


# --------------------------------------------------------------------------------------------
# Valid payloads
# --------------------------------------------------------------------------------------------


def extra_info_numeric() -> Payload:
    return {"operator": "V_GTE_T", "range": {"min": 0, "max": 50.0}}


def extra_info_options() -> Payload:
    return {
        "operator": "V_GTE_T",
        "options": [{"id": 0, "label": "Unlocked"}, {"id": 1, "label": "Locked"}],
    }


def trade() -> Payload:
    return {
        "id": "1042",
        "token_id": "17",
        "token_name": "Moon Cat",
        "token_symbol": "MCAT",
        "token_image": "https://img.sandbox.local/tokens/17.png",
        "token_chain": "SOLANA",
        "token_address": "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
        "open_date": "2026-09-28 10:00:00",
        "close_date": "2026-09-29 04:30:00",
        "duration": "66600",
        "buy_cost_usd": "$1,234.50",
        "sell_revenue_usd": "$1,386.84",
        "pnl_usd": "+$152.34",
        "roi": "+12.34%",
        "eth_sol_spent": "8.230000 SOL",
        "eth_sol_received": "9.245600 SOL",
        "tokens_bought": "125000.5",
        "tokens_sold": "125000.5",
        "avg_buy_price_solOrEth": "0.0000658397",
        "status": "Closed",
        "result": "Profit",
        "price": "$0.00001234",
        "price_change": "-3.40%",
        "volume24h": "$1.23M",
        "quant_name": "Momentum Hunter",
        "metadata": {
            "llmValidation": {
                "decision": "DELAY",
                "waitUntil": "2026-09-28T10:00:00.000Z",
                "confidence": 0.82,
                "validatedAt": "2026-09-28T09:45:00.000Z",
                "reasoning": {
                    "marketAnalysis": "Volume is rising.",
                    "riskAssessment": "Liquidity is locked.",
                    "technicalEvaluation": "RSI is neutral.",
                },
            }
        },
        "latest_evaluation": {
            "id": 5531,
            "type": "TOKEN_BUY",
            "passed": True,
            "ai_score": 71.5,
            "internal_score": 80,
            "timestamp": "2026-09-28T09:40:00.000Z",
            "summary": "Strong smart-money inflow.",
            "detection_price": 0.00000987,
            "token_image": "https://img.sandbox.local/tokens/17.png",
        },
    }


def trade_detail() -> Payload:
    detail = trade()
    detail.update(
        {
            "duration_seconds": 66600,
            "buy_cost_usd_raw": 1234.5,
            "sell_revenue_usd_raw": 1386.84,
            "pnl_usd_raw": 152.34,
            "roi_raw": 12.34,
            "eth_sol_spent_raw": 8.23,
            "eth_sol_received_raw": 9.2456,
            "tokens_bought_raw": 125000.5,
            "tokens_sold_raw": 125000.5,
            "avg_buy_price_solOrEth_raw": 0.0000658397,
            "price_raw": 0.00001234,
            "price_change_raw": -3.4,
            "volume24h_raw": 1_230_000,
            "marketCap": "$845.20K",
            "marketCap_raw": 845_200.0,
            "liquidity": "$999.00",
            "liquidity_raw": 999,
            "transactions": [
                {
                    "id": 1,
                    "action": "BUY",
                    "txHash": "5h3kQ",
                    "timestamp": "2026-09-28T10:00:00.000Z",
                    "inputToken": "So11111111111111111111111111111111111111112",
                    "outputToken": "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
                    "inputAmount": 8.23,
                    "outputAmount": 125000.5,
                    "inputValueUsd": 1234.5,
                    "outputValueUsd": 1234.5,
                    "pricePerTokenInUsd": 0.009876,
                }
            ],
        }
    )
    return {"trade": detail}


def trade_group() -> Payload:
    return {
        "trades": 3,
        "volume": 5000.0,
        "profitableTrades": 2,
        "lossTrades": 1,
        "profit": 300.0,
        "loss": -120.5,
        "pnl": 179.5,
        "roi": 7.18,
        "winRate": 66.67,
        "avgReturn": 5.2,
    }


def trade_list() -> Payload:
    return {
        "trades": [trade()],
        "summary": {
            "totalTrades": 3,
            "totalVolume": 5000,
            "profitableTrades": 2,
            "lossTrades": 1,
            "totalProfit": 300.0,
            "totalLoss": -120.5,
            "winRate": 66.67,
            "accountValue": 10179.5,
            "realized": trade_group(),
            "unrealized": {**trade_group(), "trades": 0, "winRate": 0},
        },
        "pagination": {"total": 3, "page": 1, "pageSize": 20, "totalPages": 1},
    }


def trade_stats() -> Payload:
    return {
        "metrics": {
            "totalTrades": 41,
            "totalVolume": 51234.5,
            "tradesWeeklyChange": -12.5,
            "volumeWeeklyChange": 0,
        }
    }


def eval_result_list() -> Payload:
    return {
        "results": [
            {
                "id": 5531,
                "tokenId": 17,
                "userQuantId": 1,
                "createdAt": TS,
                "updatedAt": TS,
                "evaluationResultType": "TOKEN_STATUS",
                "marketCap": 845200.0,
                "passed": False,
                "avgScore": 42.5,
                "aiScore": 0,
                "internalScore": 42.5,
                "aiAnalysis": "",
                "aiPrompt": "Evaluate MCAT.",
                "token": {
                    "id": 17,
                    "symbol": "MCAT",
                    "address": "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
                    "chainName": "SOLANA",
                    "DataFetcherResponseSnapshots": [
                        {
                            "source": "dexscreener",
                            "fetchedAt": TS,
                            "priceUsd": 0.00000987,
                            "marketCapUsd": 845200.0,
                            "liquidityUsd": 120000,
                            "volume24hUsd": 1230000.0,
                            "holders": 1532,
                        }
                    ],
                    "detectionPrice": 0.00000987,
                    "image": "https://img.sandbox.local/tokens/17.png",
                },
                "performance": {"tokenId": 17, "entryPriceUsd": 0.00000987, "roi": -8.25},
            }
        ],
        "total": 1,
    }


def timeseries() -> Payload:
    return {
        "timeseries": [
            {"timestamp": TS, "evaluations": 10, "passed": 4, "failed": 6, "percentPassed": 40.0},
            {"timestamp": TS, "evaluations": 0, "passed": 0, "failed": 0, "percentPassed": 0},
        ]
    }


def eval_count() -> Payload:
    return {"total": 10, "passed": 4, "failed": 6, "percentPassed": 40}


def criterion_result(*, disabled: bool = False) -> Payload:
    return {
        "id": 90001,
        "passed": None if disabled else True,
        "value": "-3.25",
        "threshold": 12,
        "weight": 2.5,
        "score": None if disabled else 2.5,
        "criteriaScore": None if disabled else 87.1,
        "criteriaId": 16,
        "createdAt": TS,
        "extraInfo": extra_info_numeric(),
        "criteria": {
            "key": "smart_money_buys",
            "name": "Smart-money buys",
            "shortDescription": "Wallets with a profitable history.",
            "longDescription": "Tracked wallets front-run the crowd.",
        },
        "category": {"id": 6, "name": "Onchain"},
    }


def eval_detail() -> Payload:
    return {
        "token": {
            "id": 17,
            "image": "https://img.sandbox.local/tokens/17.png",
            "name": "Moon Cat",
            "symbol": "MCAT",
            "address": "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
            "priceSnapshot": 0.00000987,
            "priceChange24h": -3.4,
            "mc": 845200.0,
            "liquidity": 120000,
            "volume24h": 1230000.0,
            "status": "DORMANT",
            "createdAt": "2026-08-01T00:00:00.000Z",
            "chainName": "SOLANA",
        },
        "userQuant": {"id": 1, "name": "Momentum Hunter"},
        "evaluationResult": {
            "id": 5531,
            "passed": True,
            "evaluationResultType": "TOKEN_BUY",
            "avgScore": 75.75,
            "internalScore": 80,
            "aiScore": 71.5,
            "aiAnalysis": "Looks genuine.",
            "createdAt": TS,
        },
        "evaluationResultDetails": [criterion_result(), criterion_result(disabled=True)],
    }


def eval_history() -> Payload:
    return {
        "total": 1,
        "results": [
            {
                "id": 5531,
                "createdAt": TS,
                "marketCap": 845200.0,
                "evaluationResultType": "TOKEN_SELL",
                "aiScore": 0,
                "internalScore": 55.0,
                "price": 0.00000987,
                "passed": False,
            }
        ],
    }


def ohlcv() -> Payload:
    return {
        "ohlcv": [
            {
                "timestamp": 1_790_000_000_000,
                "open": 1.0,
                "high": 1.2,
                "low": 0.9,
                "close": 1,
                "volume": 12345.6,
            }
        ]
    }


def signal_fields() -> Payload:
    return {
        "tokenId": 17,
        "evaluationId": 5531,
        "token": "Moon Cat",
        "symbol": "MCAT",
        "image": None,
        "address": "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
        "chainName": "SOLANA",
        "price": 0.00000987,
        "change": -3.4,
        "volume": 1230000.0,
        "marketCap": 845200.0,
        "liquidity": 120000,
        "stage": "SCREENING",
        "alert": "MCAT passed screening.",
        "updatedAt": TS,
        "entryPriceUsd": None,
        "roi": None,
        "passed": True,
        "evaluationResultType": "TOKEN_STATUS",
    }


def alpha_signal() -> Payload:
    return {**signal_fields(), "analysisProgress": 50, "volume24h": 1230000.0}


def alpha_signal_list() -> Payload:
    def chain(signals: list[Payload]) -> Payload:
        n = len(signals)
        return {
            "signals": signals,
            "stats": {"total": n, "screening": n, "buy": 0, "sell": 0, "watch": 0},
        }

    with_details = {
        **alpha_signal(),
        "stage": "BUY",
        "analysisProgress": 100,
        "entryPriceUsd": 0.000009,
        "roi": 9.67,
        "tokenDetails": {
            "name": "Moon Cat",
            "createdAt": "2026-08-01T00:00:00.000Z",
            "status": "ACTIVE",
            "holders": 1532,
            "ageHours": 1464,
        },
    }
    return {
        "signals": [alpha_signal(), with_details],
        "byChain": {
            "all": chain([alpha_signal()]),
            "solana": chain([alpha_signal()]),
            "base": chain([]),
            "bsc": chain([]),
        },
    }


def alpha_signal_detail() -> Payload:
    return {
        **signal_fields(),
        "aiScore": 71.5,
        "internalScore": 80.0,
        "aiAnalysis": "Looks genuine.",
        "evaluationDetails": [criterion_result()],
    }


def playbook_criterion(extra: Payload) -> Payload:
    entry = {
        "thresholds": {"noTime": 2},
        "weights": {"noTime": 1.5},
        "requireds": {"noTime": True},
        "disableds": {"noTime": False},
        "extraInfos": {"noTime": extra},
        "delegates": {"noTime": False},
        "configIdsByInterval": {"noTime": UUID},
        "configKeys": {"noTime": "DEGEN_CAP.SCANNING.lp_locked.noTime"},
    }
    return {
        "rootKey": "lp_locked",
        "criteriaName": "Liquidity lock",
        "shortDescription": "Is the liquidity pool locked or burned?",
        "longDescription": "Reads the LP token holders.",
        "isHumanCriteria": False,
        "configTypes": {"SCANNING": entry, "BUYING": copy.deepcopy(entry)},
    }


def playbook_config() -> list[Payload]:
    return [
        {
            "marketCap": "DEGEN_CAP",
            "categories": {
                "Security": [playbook_criterion(extra_info_options())],
                "Market": [playbook_criterion(extra_info_numeric())],
                "Social": [],
                "AI": [],
                "Technical Analysis": [playbook_criterion(extra_info_numeric())],
                "Onchain": [],
            },
            "passMark": {"SCANNING": 85, "BUYING": 60},
            "configGroupId": "group-q1",
        }
    ]


def playbook_update_request() -> Payload:
    return {
        "quantId": 1,
        "newConfigs": [
            {"configId": UUID, "field": "threshold", "newValue": 3},
            {"configId": UUID, "field": "weight", "newValue": 0.5},
            {"configId": UUID, "field": "required", "newValue": False},
            {"configId": UUID, "field": "extraInfo", "newValue": extra_info_numeric()},
        ],
    }


def playbook_update_response() -> Payload:
    return {
        "success": True,
        "updatedConfigs": [
            {
                "id": UUID,
                "criteriaId": 16,
                "criteriaKey": "smart_money_buys",
                "threshold": 3,
                "weight": 2.0,
                "required": True,
                "disabled": False,
                "configType": "BUYING",
                "extraInfo": extra_info_numeric(),
            }
        ],
    }


def recommendation(*, applied: bool = False) -> Payload:
    return {
        "id": 7,
        "criteriaId": 16,
        "criteriaKey": "smart_money_buys",
        "criteriaName": "Smart-money buys",
        "oldThreshold": 2,
        "newThreshold": 5.0,
        "oldExtraInfo": extra_info_numeric(),
        "newExtraInfo": extra_info_numeric(),
        "confidence": 0.41,
        "reasoning": "Raising the threshold keeps 62 % of trades and lifts the win rate.",
        "applied": applied,
        "appliedAt": "2026-10-01T00:00:00.000Z" if applied else None,
        "beforeWinRate": 0.45,
        "afterWinRate": 0.58,
        "tradeDifference": -19,
        "configType": "BUY",
        "isDegenConfig": True,
        "userQuantId": 1,
        "profitableAccuracy": 0.8,
        "unprofitableAccuracy": 0.55,
        "f1Score": 0.67,
        "sampleSize": 50,
        "profitableAvg": 6.2,
        "unprofitableAvg": 2.1,
        "valueDifferenceRatio": 1.95,
        "userFeedback": None,
        "actualImpact": 0.13,
        "createdAt": TS,
        "updatedAt": TS,
        "configId": UUID,
        "marketCap": "DEGEN_CAP",
    }


def dashboard() -> Payload:
    return {
        "success": True,
        "data": {
            "overallPerformance": {
                "totalTrades": 60,
                "completedTrades": 50,
                "activeTrades": 10,
                "winningTrades": 22,
                "losingTrades": 28,
                "winRate": 0.44,
                "avgProfitWinningTrades": 210.5,
                "avgLossLosingTrades": -95.25,
                "totalPnL": 1964.0,
            },
            "recentRecommendations": [recommendation()],
            "appliedRecommendations": [recommendation(applied=True)],
            "historicalTrends": {
                "weekly": [
                    {
                        "weekStart": "2026-09-28T00:00:00.000Z",
                        "trades": 9,
                        "closedTrades": 7,
                        "winRate": 0.5714,
                        "pnl": -12,
                    }
                ]
            },
        },
    }


def analyze_request() -> Payload:
    return {"quantId": 1, "apply": "false", "minCompletedTrades": 20}


def analyze_response() -> Payload:
    return {
        "success": True,
        "data": {"tradesAnalyzed": 50, "recommendationsGenerated": 2, "recommendationsApplied": 0},
    }


def apply_result() -> Payload:
    full = recommendation(applied=True)
    keys = (
        *("id", "criteriaId", "criteriaKey", "criteriaName", "oldThreshold", "newThreshold"),
        *("applied", "appliedAt", "beforeWinRate", "afterWinRate", "tradeDifference"),
        "actualImpact",
    )
    return {"success": True, "data": {k: full[k] for k in keys}}


def error_body() -> Payload:
    return {
        "error": {
            "status": 422,
            "code": "invalid_parameter",
            "message": "pageSize must be an integer from 1 to 1000, got 'abc'",
            "param": "pageSize",
        }
    }


VALID: dict[str, tuple[type[BaseModel], Callable[[], Any]]] = {
    "trade_stats": (m.TradeStats, trade_stats),
    "trade_list": (m.TradeList, trade_list),
    "trade_detail": (m.TradeDetailResponse, trade_detail),
    "eval_results": (m.EvaluationResultList, eval_result_list),
    "eval_timeseries": (m.Timeseries, timeseries),
    "eval_count": (m.EvaluationCount, eval_count),
    "eval_details": (m.EvaluationDetail, eval_detail),
    "eval_history": (m.EvaluationHistoryList, eval_history),
    "eval_ohlcv": (m.Ohlcv, ohlcv),
    "alpha_signals": (m.AlphaSignalList, alpha_signal_list),
    "alpha_signal_detail": (m.AlphaSignalDetail, alpha_signal_detail),
    "playbook_config": (m.PlaybookConfig, playbook_config),
    "playbook_update_request": (m.PlaybookUpdateRequest, playbook_update_request),
    "playbook_update_response": (m.PlaybookUpdateResponse, playbook_update_response),
    "dashboard": (m.Dashboard, dashboard),
    "analyze_request": (m.AnalyzeRequest, analyze_request),
    "analyze_response": (m.AnalyzeResponse, analyze_response),
    "apply_result": (m.ApplyResult, apply_result),
    "error_body": (m.ErrorBody, error_body),
}


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_payload_passes_and_round_trips(name: str) -> None:
    model, build = VALID[name]
    payload = build()
    instance = validate_response(model, payload)
    assert isinstance(instance, model)
    # Serialising gives back the JSON (aliases included); JSON-mode validation agrees.
    assert instance.model_dump(mode="json", exclude_unset=True) == payload
    model.model_validate_json(json.dumps(payload))


def test_every_response_and_request_model_has_a_valid_example() -> None:
    covered = {model for model, _ in VALID.values()}
    registered = set(m.RESPONSE_MODELS.values()) | set(m.REQUEST_MODELS.values())
    assert registered <= covered
    assert len(m.RESPONSE_MODELS) == 16  # every endpoint of the spec


def test_open_trade_with_empty_close_date_passes() -> None:
    body = trade_list()
    body["trades"][0].update(
        close_date="",
        status="Open",
        sell_revenue_usd="$0.00",
        tokens_sold="0",
        eth_sol_received="0.000000 SOL",
        pnl_usd="-$0.01",
    )
    validate_response(m.TradeList, body)


def test_empty_analyze_request_passes() -> None:
    assert validate_response(m.AnalyzeRequest, {}).apply is None


# --------------------------------------------------------------------------------------------
# Violations: each mutation breaks one field; the error names its path.
# --------------------------------------------------------------------------------------------


def _set(path: str, value: Any) -> Callable[[Any], None]:
    """A mutation that sets the field at a dotted path (ints index lists)."""

    def mutate(body: Any) -> None:
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        for p in parents:
            body = body[p]
        body[last] = value

    return mutate


def _delete(path: str) -> Callable[[Any], None]:
    def mutate(body: Any) -> None:
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        for p in parents:
            body = body[p]
        del body[last]

    return mutate


T0 = "trades.0"
VIOLATIONS: list[tuple[str, str, Callable[[Any], None], str]] = [
    # (valid payload, description, mutation, path named in the error)
    ("trade_list", "missing field", _delete(f"{T0}.pnl_usd"), "trades[0].pnl_usd"),
    ("trade_list", "missing nested field", _delete("summary.realized.avgReturn"), "avgReturn"),
    ("trade_list", "extra field", _set(f"{T0}.tradingMode", "live"), "trades[0].tradingMode"),
    ("trade_list", "int where string expected", _set(f"{T0}.id", 1042), "trades[0].id"),
    ("trade_list", "id not numeric text", _set(f"{T0}.id", "T-1"), "trades[0].id"),
    ("trade_list", "percent without sign", _set(f"{T0}.roi", "12.50%"), "trades[0].roi"),
    ("trade_list", "percent one decimal", _set(f"{T0}.roi", "+12.5%"), "trades[0].roi"),
    ("trade_list", "signed money unsigned", _set(f"{T0}.pnl_usd", "$3.40"), "pnl_usd"),
    ("trade_list", "money no separator", _set(f"{T0}.buy_cost_usd", "$1234.50"), "buy_cost"),
    ("trade_list", "money no symbol", _set(f"{T0}.buy_cost_usd", "1,234.50"), "buy_cost"),
    ("trade_list", "native 2 decimals", _set(f"{T0}.eth_sol_spent", "8.23 SOL"), "eth_sol"),
    (
        "trade_list",
        "native unknown unit",
        _set(f"{T0}.eth_sol_spent", "8.230000 DOGE"),
        "eth_sol_spent",
    ),
    ("trade_list", "compact 1 decimal", _set(f"{T0}.volume24h", "$1.2M"), "volume24h"),
    ("trade_list", "compact lower k", _set(f"{T0}.volume24h", "$1.23k"), "volume24h"),
    ("trade_list", "price in exponent", _set(f"{T0}.price", "$1.234e-05"), "trades[0].price"),
    ("trade_list", "numeric text exponent", _set(f"{T0}.tokens_bought", "1e5"), "tokens_bought"),
    ("trade_list", "trade date ISO", _set(f"{T0}.open_date", "2026-09-28T10:00:00"), "open_date"),
    ("trade_list", "trade date no time", _set(f"{T0}.close_date", "2026-09-29"), "close_date"),
    ("trade_list", "impossible date", _set(f"{T0}.open_date", "2026-02-30 10:00:00"), "open_date"),
    ("trade_list", "unknown chain", _set(f"{T0}.token_chain", "ETH"), "token_chain"),
    ("trade_list", "unknown status", _set(f"{T0}.status", "closed"), "status"),
    (
        "trade_list",
        "null in a non-nullable",
        _set(f"{T0}.latest_evaluation.ai_score", None),
        "latest_evaluation.ai_score",
    ),
    ("trade_list", "url not http", _set(f"{T0}.token_image", "img/17.png"), "token_image"),
    (
        "trade_list",
        "timestamp without milliseconds",
        _set(f"{T0}.metadata.llmValidation.validatedAt", "2026-09-28T09:45:00Z"),
        "trades[0].metadata.llmValidation.validatedAt",
    ),
    (
        "trade_list",
        "timestamp with offset",
        _set(f"{T0}.latest_evaluation.timestamp", "2026-09-28T09:40:00.000+00:00"),
        "latest_evaluation.timestamp",
    ),
    (
        "trade_list",
        "timestamp out of range",
        _set(f"{T0}.latest_evaluation.timestamp", "2026-09-28T24:40:00.000Z"),
        "latest_evaluation.timestamp",
    ),
    ("trade_list", "float where integer", _set("pagination.total", 3.0), "pagination.total"),
    ("trade_list", "bool where integer", _set("pagination.page", True), "pagination.page"),
    ("trade_list", "negative count", _set("summary.lossTrades", -1), "summary.lossTrades"),
    ("trade_list", "bool where number", _set("summary.totalVolume", True), "totalVolume"),
    ("trade_list", "string where number", _set("summary.totalProfit", "300"), "totalProfit"),
    ("trade_list", "NaN number", _set("summary.totalLoss", float("nan")), "totalLoss"),
    ("trade_list", "win rate as percent > 100", _set("summary.winRate", 150), "winRate"),
    ("trade_detail", "float duration", _set("trade.duration_seconds", 1.5), "duration_seconds"),
    ("trade_detail", "string raw", _set("trade.pnl_usd_raw", "152.34"), "pnl_usd_raw"),
    ("trade_detail", "unknown action", _set("trade.transactions.0.action", "SWAP"), "action"),
    (
        "eval_results",
        "snapshot extra",
        _set("results.0.token.DataFetcherResponseSnapshots.0.x", 1),
        "DataFetcherResponseSnapshots[0].x",
    ),
    ("eval_results", "score above 100", _set("results.0.avgScore", 100.5), "avgScore"),
    (
        "eval_results",
        "unknown type",
        _set("results.0.evaluationResultType", "BUY"),
        "results[0].evaluationResultType",
    ),
    ("eval_ohlcv", "float epoch ms", _set("ohlcv.0.timestamp", 1.79e12), "ohlcv[0].timestamp"),
    ("eval_details", "value exponent", _set("evaluationResultDetails.0.value", "1e-05"), "value"),
    (
        "eval_details",
        "unknown category",
        _set("evaluationResultDetails.0.category.name", "X"),
        "category.name",
    ),
    (
        "eval_details",
        "options null",
        _set("evaluationResultDetails.0.extraInfo.options", None),
        "options",
    ),
    (
        "eval_details",
        "no operator",
        _delete("evaluationResultDetails.0.extraInfo.operator"),
        "extraInfo.operator",
    ),
    ("eval_details", "unknown token status", _set("token.status", "dead"), "token.status"),
    ("alpha_signals", "alert over 140", _set("signals.0.alert", "x" * 141), "signals[0].alert"),
    ("alpha_signals", "tokenDetails null", _set("signals.0.tokenDetails", None), "tokenDetails"),
    ("alpha_signals", "missing chain", _delete("byChain.bsc"), "byChain.bsc"),
    ("alpha_signals", "unknown stage", _set("signals.0.stage", "HOLD"), "stage"),
    ("alpha_signal_detail", "list-only field", _set("analysisProgress", 50), "analysisProgress"),
    (
        "playbook_config",
        "not noTime",
        _set("0.categories.Market.0.configTypes.BUYING.weights", {"1h": 1}),
        "weights",
    ),
    (
        "playbook_config",
        "config id not uuid",
        _set("0.categories.Market.0.configTypes.SCANNING.configIdsByInterval.noTime", "cfg-1"),
        "configIdsByInterval.noTime",
    ),
    (
        "playbook_config",
        "unknown config type",
        _set("0.categories.Security.0.configTypes.BUY", {}),
        "BUY",
    ),
    (
        "playbook_config",
        "category missing",
        _delete("0.categories.Technical Analysis"),
        "Technical Analysis",
    ),
    ("playbook_config", "unknown class", _set("0.marketCap", "MEGA_CAP"), "[0].marketCap"),
    (
        "playbook_update_request",
        "bool threshold",
        _set("newConfigs.0.newValue", True),
        "newConfigs[0]",
    ),
    (
        "playbook_update_request",
        "number for flag",
        _set("newConfigs.2.newValue", 1),
        "newConfigs[2]",
    ),
    (
        "playbook_update_request",
        "object threshold",
        _set("newConfigs.0.newValue", {"operator": "V_GTE_T"}),
        "newConfigs[0]",
    ),
    ("playbook_update_request", "unknown field", _set("newConfigs.0.field", "label"), "field"),
    ("playbook_update_request", "no changes", _set("newConfigs", []), "newConfigs"),
    ("playbook_update_request", "string quantId", _set("quantId", "1"), "quantId"),
    ("dashboard", "success false", _set("success", False), "success"),
    (
        "dashboard",
        "feedback given",
        _set("data.recentRecommendations.0.userFeedback", "good"),
        "userFeedback",
    ),
    ("dashboard", "win rate as percent", _set("data.overallPerformance.winRate", 44.0), "winRate"),
    (
        "dashboard",
        "positive trade difference",
        _set("data.recentRecommendations.0.tradeDifference", 3),
        "tradeDifference",
    ),
    (
        "dashboard",
        "config type",
        _set("data.recentRecommendations.0.configType", "BUYING"),
        "configType",
    ),
    ("analyze_request", "apply as bool", _set("apply", True), "apply"),
    ("analyze_request", "apply as yes", _set("apply", "yes"), "apply"),
    ("apply_result", "not applied", _set("data.applied", False), "data.applied"),
    ("apply_result", "no appliedAt", _set("data.appliedAt", None), "data.appliedAt"),
    ("apply_result", "full recommendation", _set("data.reasoning", "r"), "data.reasoning"),
    ("error_body", "status does not fit code", _set("error.status", 404), "error"),
    ("error_body", "unknown code", _set("error.code", "oops"), "error.code"),
    ("error_body", "param missing", _delete("error.param"), "error.param"),
]


@pytest.mark.parametrize(
    ("name", "mutate", "path"),
    [pytest.param(n, mut, p, id=f"{n}: {d}") for n, d, mut, p in VIOLATIONS],
)
def test_violation_fails_naming_the_path(
    name: str, mutate: Callable[[Any], None], path: str
) -> None:
    model, build = VALID[name]
    payload = build()
    mutate(payload)
    with pytest.raises(AssertionError) as info:
        validate_response(model, payload)
    assert path in str(info.value)


def test_error_lists_every_failing_path() -> None:
    body = trade_list()
    body["trades"][0]["roi"] = "12.5%"
    body["pagination"]["page"] = 1.0
    with pytest.raises(AssertionError, match=r"2 contract violation\(s\) against TradeList") as e:
        validate_response(m.TradeList, body)
    assert "trades[0].roi" in str(e.value)
    assert "pagination.page" in str(e.value)
    assert "'12.5%'" in str(e.value)  # the offending value is shown


def test_top_level_playbook_must_be_a_list() -> None:
    with pytest.raises(AssertionError, match="PlaybookConfig"):
        validate_response(m.PlaybookConfig, playbook_config()[0])


# --------------------------------------------------------------------------------------------
# Aliases, formats and vocabularies
# --------------------------------------------------------------------------------------------


def test_technical_analysis_alias_round_trips() -> None:
    categories = playbook_config()[0]["categories"]
    parsed = m.PlaybookCategories.model_validate(categories)
    assert len(parsed.technical_analysis) == 1
    dumped = parsed.model_dump()
    assert "Technical Analysis" in dumped
    assert "technical_analysis" not in dumped
    # By name works too, and still serialises under the JSON name.
    by_name = m.PlaybookCategories.model_validate(
        {key: [] for key in ("security", "market", "social", "ai", "technical_analysis", "onchain")}
    )
    assert set(by_name.model_dump()) == set(catalog.CATEGORIES)
    assert json.loads(by_name.model_dump_json()) == {name: [] for name in catalog.CATEGORIES}


CONTRACT_EXAMPLES = {
    # The examples of the display-string table of docs/service-contract.md, and a few more.
    "money": ["$1,234.50", "$0.00", "$12,345,678.90"],
    "signed_money": ["+$12.34", "-$3.40", "+$0.00", "+$1,234.50"],
    "signed_percent": ["+12.50%", "-3.40%", "+1234.00%"],
    "native_amount": ["0.523400 SOL", "1.000000 ETH", "12.500000 BNB"],
    "price": ["$0.00001234", "$1.234", "$1,235", "$12,350"],
    "compact_money": ["$1.23M", "$999.00", "$4.56K", "$1.00B"],
    "numeric_text": ["125000.5", "0", "-3.25"],
    "timestamp": ["2026-10-01T00:00:00.000Z"],
    "trade_date": ["2026-09-30 23:59:59"],
}
CONTRACT_COUNTEREXAMPLES = {
    "money": ["$1234.50", "$1,234.5", "-$1.00"],
    "signed_money": ["$12.34", "+12.34", "+$12.3"],
    "signed_percent": ["12.50%", "+12.5%", "+12.50"],
    "native_amount": ["0.5234 SOL", "0.523400SOL", "0.523400 sol"],
    "price": ["$1.234e-05", "1.234", "$-1"],
    "compact_money": ["$1.2M", "1.23M", "$1.23 M"],
    "numeric_text": ["1e5", "1.", ".5", "+1", "1,000"],
    "timestamp": ["2026-10-01T00:00:00Z", "2026-10-01 00:00:00.000Z", "2026-10-01T00:00:00.000"],
    "trade_date": ["2026-09-30T23:59:59", "2026-09-30 23:59"],
}


@pytest.mark.parametrize("name", sorted(CONTRACT_EXAMPLES))
def test_patterns_accept_contract_examples_and_reject_near_misses(name: str) -> None:
    pattern = re.compile(m.PATTERNS[name])
    for good in CONTRACT_EXAMPLES[name]:
        assert pattern.fullmatch(good), good
    for bad in CONTRACT_COUNTEREXAMPLES[name]:
        assert not pattern.fullmatch(bad), bad


def test_vocabularies_match_the_catalog() -> None:
    assert set(get_args(m.Chain)) == set(catalog.CHAINS)
    assert set(get_args(m.EvaluationType)) == set(catalog.EVAL_TYPES)
    assert set(get_args(m.ConfigType)) == set(catalog.CONFIG_TYPES)
    assert get_args(m.Interval) == (catalog.INTERVAL,)
    assert set(get_args(m.MarketCapClass)) == {name for name, _ in catalog.MARKET_CAP_CLASSES}
    assert set(get_args(m.Operator)) == set(catalog.OPERATORS)
    assert get_args(m.CategoryName) == catalog.CATEGORIES
    assert {info.alias for info in m.PlaybookCategories.model_fields.values()} == set(
        catalog.CATEGORIES
    )
    assert set(get_args(m.ErrorCode)) == set(m.ERROR_STATUS)


def test_catalog_extra_info_validates() -> None:
    for criterion in catalog.CRITERIA:
        m.ExtraInfo.model_validate(criterion.extra_info())


def _module_models() -> list[type[BaseModel]]:
    """Every model class defined in the models package (each group module and _common)."""
    modules = [
        importlib.import_module(f"{m.__name__}.{info.name}")
        for info in pkgutil.iter_modules(m.__path__)
    ]
    return [
        obj
        for module in modules
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, BaseModel)
        and obj.__module__ == module.__name__
        and "[" not in obj.__name__  # pydantic's parametrised RootModel[...] base
    ]


def test_every_model_is_strict_closed_and_documented() -> None:
    models = _module_models()
    assert len(models) > 50
    for model in models:
        assert model.__doc__, model.__name__
        assert model.__doc__.strip(), model.__name__
        assert model.model_config.get("strict") is True, model.__name__
        if not issubclass(model, RootModel):
            assert model.model_config.get("extra") == "forbid", model.__name__


# --------------------------------------------------------------------------------------------
# FastAPI can use the models and publishes them in /openapi.json
# --------------------------------------------------------------------------------------------


def _tiny_app() -> FastAPI:
    app = FastAPI()

    @app.get(
        "/api/trades",
        response_model=m.TradeList,
        responses={422: {"model": m.ErrorBody}},
    )
    def list_trades() -> Any:
        return trade_list()

    @app.get("/api/degen/config", response_model=m.PlaybookConfig)
    def get_config() -> Any:
        return playbook_config()

    @app.put("/api/degen/config", response_model=m.PlaybookUpdateResponse)
    def put_config(body: m.PlaybookUpdateRequest) -> Any:
        return playbook_update_response()

    return app


def _call(app: FastAPI, method: str, url: str, body: object = None) -> httpx.Response:
    """One request to the app in-process (starlette's TestClient warns about httpx)."""

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://sandbox") as client:
            return await client.request(method, url, json=body)

    return asyncio.run(go())


def test_fastapi_openapi_lists_the_models() -> None:
    doc = _call(_tiny_app(), "GET", "/openapi.json").json()
    schemas = doc["components"]["schemas"]
    for name in (
        "TradeList",
        "Trade",
        "TradeSummary",
        "ErrorBody",
        "PlaybookElement",
        "PlaybookCategories",
        "PlaybookUpdateRequest",
        "PlaybookUpdateResponse",
        "ExtraInfo",
    ):
        assert any(key == name or key.startswith(f"{name}-") for key in schemas), name
    trade_schema = schemas["Trade"]
    assert trade_schema["additionalProperties"] is False
    assert trade_schema["properties"]["roi"]["pattern"] == m.SIGNED_PERCENT_PATTERN
    assert "percent" in trade_schema["properties"]["roi"]["description"].lower()
    categories = next(v for k, v in schemas.items() if k.startswith("PlaybookCategories"))
    assert "Technical Analysis" in categories["properties"]
    ops = doc["paths"]["/api/trades"]["get"]["responses"]
    assert ops["200"]["content"]["application/json"]["schema"]["$ref"].endswith("TradeList")
    assert ops["422"]["content"]["application/json"]["schema"]["$ref"].endswith("ErrorBody")


def test_fastapi_serves_and_accepts_through_the_models() -> None:
    app = _tiny_app()
    assert _call(app, "GET", "/api/trades").json() == trade_list()
    assert _call(app, "GET", "/api/degen/config").json() == playbook_config()
    assert _call(app, "PUT", "/api/degen/config", playbook_update_request()).status_code == 200
    bad = playbook_update_request()
    bad["newConfigs"][0]["newValue"] = "3"
    assert _call(app, "PUT", "/api/degen/config", bad).status_code == 422
