"""Values the spec enumerates belong to the registry (issue 23, item 1): each ``Param`` lists
its ``choices``, and the one wire encoding (``_endpoints.query``, which every loader calls)
refuses a value outside them with ``InvalidChoiceError`` before anything is sent, where the
service would answer a 422 that costs a request. The service takes these values in any ASCII
case, so the toolkit never refuses a case the service accepts; the command line's pre-flight
and ``--help`` read the same choices."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

import pytest
from _helpers import quota_left

import quantscope as qsc
from quantscope import _endpoints as E
from quantscope import cli
from quantscope._http.client import Client
from quantscope._typed import schemas as _schemas
from quantscope.cli.preflight import ENUMERATED
from quantscope.sandbox import catalog as sandbox_catalog
from quantscope.sandbox.routers import evaluations as sandbox_evaluations
from quantscope.sandbox.routers import trades as sandbox_trades
from quantscope.sandbox.serve import SandboxServer

# (loader, its required arguments, the keyword): a loader call for every enumerated parameter
# of every route a loader reads
BAD: list[tuple[str, tuple[Any, ...], str]] = [
    ("load_trades", (), "trading_status"),
    ("load_trades", (), "trading_mode"),
    ("load_trades", (), "position_closed"),
    ("load_trades", (), "tracking_enabled"),
    ("load_trades", (), "sort_order"),
    ("load_trades", (), "chain"),
    ("load_evaluations", (), "evaluation_type"),
    ("load_evaluations", (), "chain"),
    ("load_eval_history", (1,), "exclude_types"),
    ("load_signals", (), "chain"),
    ("load_signal_stats", (), "chain"),
]


def _loader(name: str) -> Callable[..., Any]:
    loader: Callable[..., Any] = getattr(qsc, name)
    return loader


@pytest.mark.parametrize(("loader", "args", "name"), BAD, ids=[f"{b[0]}-{b[2]}" for b in BAD])
def test_a_value_outside_the_spec_is_refused_before_any_request(
    loader: str, args: tuple[Any, ...], name: str, sandbox: SandboxServer, client: Client
) -> None:
    left = quota_left(sandbox, "enterprise")
    with pytest.raises(qsc.InvalidChoiceError) as refused:
        _loader(loader)(*args, **{name: "bogus"}, client=client)
    assert quota_left(sandbox, "enterprise") == left  # nothing sent
    assert isinstance(refused.value, ValueError)
    allowed = ENUMERATED[name].choices
    assert (refused.value.param, refused.value.value, refused.value.allowed) == (
        name,
        "bogus",
        allowed,
    )
    assert str(refused.value) == (
        f"{name} 'bogus' is not one of {', '.join(allowed)} (any case): sent nothing"
    )


def test_every_enumerated_parameter_a_loader_reads_is_tried() -> None:
    read = {E.TRADES, E.EVALUATIONS, E.HISTORY, E.SIGNALS}
    enumerated = {p.name for e in read for p in e.params if p.choices}
    assert enumerated == {name for _, _, name in BAD}
    # the rest: the analyze body's apply (run_analysis sends only "true"/"false")
    others = {(e.key, p.name) for e in E.ROUTES if e not in read for p in e.params if p.choices}
    assert others == {("analyze", "apply")}


def test_one_bad_item_of_a_list_is_refused(client: Client) -> None:
    with pytest.raises(qsc.InvalidChoiceError, match="evaluation_type 'TOKEN_FOO'"):
        qsc.load_evaluations(evaluation_type=["TOKEN_BUY", "TOKEN_FOO"], client=client)
    with pytest.raises(qsc.InvalidChoiceError, match="exclude_types 'x'"):
        qsc.load_eval_history(1, exclude_types="TOKEN_BUY, x", client=client)


def test_any_ascii_case_passes_and_loads_what_the_spec_spelling_loads(client: Client) -> None:
    spelled = {"trading_status": "all", "trading_mode": "paper", "sort_order": "asc"}
    shouted = {"trading_status": "ALL", "trading_mode": "Paper", "sort_order": "ASC"}
    both = {"chain": "solana", "position_closed": "TRUE", "tracking_enabled": "All"}
    got = qsc.load_trades(**shouted, **both, max_pages=1, client=client)
    want = qsc.load_trades(**spelled, **both, max_pages=1, client=client)
    assert len(got) > 0
    assert got["trade_id"].tolist() == want["trade_id"].tolist()
    evaluations = qsc.load_evaluations(
        evaluation_type=["token_buy", " Token_Sell "], chain="Base", max_pages=1, client=client
    )
    assert set(evaluations["evaluation_type"]) == {"TOKEN_BUY", "TOKEN_SELL"}
    assert set(evaluations["chain"]) == {"BASE"}
    assert set(qsc.load_signals(chain="bsc", client=client)["chain"]) <= {"BSC"}


def test_only_ascii_case_is_folded_as_the_service_folds() -> None:
    # "ſ".upper() is "S" and "K" (Kelvin) lowers to "k": the service refuses both
    for name, text in (("chain", "ſolana"), ("sort_order", "aſc"), ("trading_status", "all ")):
        with pytest.raises(qsc.InvalidChoiceError):
            E.checked_choice(ENUMERATED[name], text)


def test_the_choices_are_what_the_sandbox_accepts() -> None:
    def lower(values: Any) -> set[str]:
        return {str(v).lower() for v in values}

    sandbox = {
        "trading_status": get_args(sandbox_trades._Status),
        "trading_mode": get_args(sandbox_trades._Mode),
        "position_closed": get_args(sandbox_trades._Tri),
        "tracking_enabled": get_args(sandbox_trades._Tri),
        "sort_order": get_args(sandbox_trades._Order),
        "chain": sandbox_catalog.CHAINS,
        "evaluation_type": sandbox_evaluations.EVAL_TYPES,
        "exclude_types": sandbox_evaluations.EVAL_TYPES,
        "apply": ("true", "false"),
    }
    assert {name: lower(p.choices) for name, p in ENUMERATED.items()} == {
        name: lower(values) for name, values in sandbox.items()
    }


def test_a_keyword_means_the_same_values_on_every_route() -> None:
    for route in E.ROUTES:
        for param in route.params:
            if param.name in ENUMERATED:
                assert param.choices == ENUMERATED[param.name].choices, (route.key, param.name)


def test_the_frames_categories_are_the_spec_values() -> None:
    assert set(E.CHAIN_NAMES) == set(_schemas.CHAINS)
    assert set(E.EVALUATION_TYPES) == set(_schemas.EVALUATION_TYPES)


def test_a_write_body_is_checked_too() -> None:
    assert E.body(E.ANALYZE, {"apply": "TRUE", "quant_id": 2}) == {"apply": "TRUE", "quantId": 2}
    with pytest.raises(qsc.InvalidChoiceError, match="apply 'maybe'"):
        E.body(E.ANALYZE, {"apply": "maybe"})


def test_the_command_line_lists_the_choices_and_names_its_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        cli.main(["fetch", "trades", "--help"])
    shown = " ".join(capsys.readouterr().out.split())  # argparse wraps the help
    assert "executed, delayed, rejected, recommended or all (default: executed)" in shown
    assert "live, paper or all" in shown
    assert "one chain: SOLANA, BASE or BSC" in shown
    assert cli.main(["fetch", "trades", "--sort-order", "up", "-o", "-"]) == 2
    err = capsys.readouterr().err
    assert "--sort-order 'up' is not one of asc, desc (any case): sent nothing" in err
