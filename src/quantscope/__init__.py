"""quantscope: a research toolkit for the Quant Trading Data Service.

Three lines to a typed frame::

    import quantscope as qsc
    qsc.connect()                      # QUANTSCOPE_URL/_API_KEY, else the embedded sandbox
    trades = qsc.load_trades(quant_id=1)

Frames and their columns: docs/frames.md. The service's decisions: docs/service-contract.md.

Everything users need is exported here, in ``__all__`` (a test keeps it sorted and complete):
the loaders, the client and the value objects of its signatures (``Settings``, ``RetryPolicy``,
``Quota``, ``CacheInfo``, ``Provenance``, ``Fetched``...), the whole error tree, the ``df.quant``
accessor, and the ``analytics`` and ``backtest`` modules. Figures are in ``quantscope.plots``,
panels in ``quantscope.widgets``, safe playbook writes in ``quantscope.audit``; research data
is kept as a Parquet catalog with ``sync``, ``open_catalog`` and ``Catalog`` and travels as
a study bundle (``export_bundle``, ``verify_bundle``, ``open_bundle``; docs/catalog.md), and
``report(quant_id, path)`` writes a self-contained HTML study report (``quantscope.reporting``).
"""

from quantscope import analytics, backtest
from quantscope._advice import Said
from quantscope._changes import Change
from quantscope._config import RetryPolicy, Settings
from quantscope._errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    CacheRecoveredWarning,
    CacheWriteWarning,
    CatalogBusyError,
    CatalogIntegrityError,
    CatalogWriteError,
    ChainNotAllowedError,
    ConfigurationError,
    ConflictError,
    DataQualityWarning,
    EmptyResultWarning,
    IncompleteDataWarning,
    InconsistentAnswerWarning,
    InvalidChoiceError,
    InvalidParameterError,
    InvalidResponseError,
    MissingColumnsError,
    NotFoundError,
    OfflineCacheMissError,
    PermissionDeniedError,
    PlanNotAllowedError,
    PlaybookBusyError,
    QuantscopeError,
    QuantscopeWarning,
    QuotaError,
    QuotaShareExceededError,
    QuotaWouldBeExceededError,
    RateLimitError,
    RedirectRefusedError,
    SandboxUnavailableError,
    ServerError,
    ShadowOutcomesWarning,
    StaleDataWarning,
    StaleLockWarning,
    StaleWriteError,
    UndoRefusedError,
    UnknownCriterionError,
    WriteRefusedError,
)
from quantscope._http.cache import CacheEntry, CacheInfo
from quantscope._http.client import (
    Client,
    Quota,
    cache_info,
    connect,
    get_default_client,
    set_default_client,
)
from quantscope._http.estimate import Estimate, estimate
from quantscope._http.quota import Spend
from quantscope._http.results import (
    Fetched,
    FetchedMany,
    FetchedPages,
    OffsetPaging,
    PageNumberPaging,
    Provenance,
)
from quantscope._versions import QUANTSCOPE_VERSION as __version__  # importlib.metadata's
from quantscope.accessor import QuantAccessor  # importing it registers df.quant
from quantscope.backtest import ExitRule
from quantscope.catalog.bundle_export import export_bundle
from quantscope.catalog.bundle_format import Bundle, BundleError
from quantscope.catalog.bundle_open import OpenedBundle, open_bundle, verify_bundle
from quantscope.catalog.read import Catalog, open_catalog
from quantscope.catalog.sync import SyncReport, sync
from quantscope.loaders import (
    Dashboard,
    SignalDetail,
    TradeDetail,
    apply_recommendation,
    load_dashboard,
    load_eval_count,
    load_eval_details,
    load_eval_history,
    load_eval_timeseries,
    load_evaluations,
    load_ohlcv,
    load_playbook,
    load_recommendations,
    load_signal,
    load_signal_stats,
    load_signals,
    load_trade,
    load_trade_stats,
    load_trades,
    run_analysis,
    update_playbook,
)
from quantscope.reporting import report  # the function; its modules import matplotlib lazily

__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "AuthenticationError",
    "Bundle",
    "BundleError",
    "CacheEntry",
    "CacheInfo",
    "CacheRecoveredWarning",
    "CacheWriteWarning",
    "Catalog",
    "CatalogBusyError",
    "CatalogIntegrityError",
    "CatalogWriteError",
    "ChainNotAllowedError",
    "Change",
    "Client",
    "ConfigurationError",
    "ConflictError",
    "Dashboard",
    "DataQualityWarning",
    "EmptyResultWarning",
    "Estimate",
    "ExitRule",
    "Fetched",
    "FetchedMany",
    "FetchedPages",
    "IncompleteDataWarning",
    "InconsistentAnswerWarning",
    "InvalidChoiceError",
    "InvalidParameterError",
    "InvalidResponseError",
    "MissingColumnsError",
    "NotFoundError",
    "OfflineCacheMissError",
    "OffsetPaging",
    "OpenedBundle",
    "PageNumberPaging",
    "PermissionDeniedError",
    "PlanNotAllowedError",
    "PlaybookBusyError",
    "Provenance",
    "QuantAccessor",
    "QuantscopeError",
    "QuantscopeWarning",
    "Quota",
    "QuotaError",
    "QuotaShareExceededError",
    "QuotaWouldBeExceededError",
    "RateLimitError",
    "RedirectRefusedError",
    "RetryPolicy",
    "Said",
    "SandboxUnavailableError",
    "ServerError",
    "Settings",
    "ShadowOutcomesWarning",
    "SignalDetail",
    "Spend",
    "StaleDataWarning",
    "StaleLockWarning",
    "StaleWriteError",
    "SyncReport",
    "TradeDetail",
    "UndoRefusedError",
    "UnknownCriterionError",
    "WriteRefusedError",
    "__version__",
    "analytics",
    "apply_recommendation",
    "backtest",
    "cache_info",
    "connect",
    "estimate",
    "export_bundle",
    "get_default_client",
    "load_dashboard",
    "load_eval_count",
    "load_eval_details",
    "load_eval_history",
    "load_eval_timeseries",
    "load_evaluations",
    "load_ohlcv",
    "load_playbook",
    "load_recommendations",
    "load_signal",
    "load_signal_stats",
    "load_signals",
    "load_trade",
    "load_trade_stats",
    "load_trades",
    "open_bundle",
    "open_catalog",
    "report",
    "run_analysis",
    "set_default_client",
    "sync",
    "update_playbook",
    "verify_bundle",
]
