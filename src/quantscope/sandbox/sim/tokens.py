"""Tokens: names, symbols, addresses and the static traits that some criteria read.

A token's identity and traits are a pure function of (seed, token id) and its candle path
(``market.token_path``), so the world build and request-time code (evaluation details, the
optimizer) derive the same token without reading the database.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from quantscope.sandbox.catalog import HOUR_MS, WORLD_START_MS
from quantscope.sandbox.sim import market

_SYLLABLES = (
    "pe",
    "po",
    "do",
    "ge",
    "mo",
    "on",
    "ki",
    "ra",
    "zu",
    "ba",
    "lu",
    "na",
    "ti",
    "fu",
    "sha",
    "bo",
    "wi",
    "fa",
    "ro",
    "mi",
    "ka",
    "su",
    "ne",
    "xo",
)
_NOUNS = (
    "Inu",
    "Cat",
    "Frog",
    "Moon",
    "Rocket",
    "Pepe",
    "Doge",
    "Bonk",
    "Wif",
    "Chad",
    "Ape",
    "Toad",
    "Fren",
    "Goblin",
    "Shiba",
    "Mog",
    "Pump",
    "Degen",
    "Wojak",
    "Turbo",
)
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


@dataclass(frozen=True)
class TokenMeta:
    """One token of the world: its identity, its chain and its static traits."""

    id: int
    name: str
    symbol: str
    address: str
    chain: str
    created_ms: int
    holders0: int
    holder_growth: float
    # static traits read by criteria
    lp_locked: int
    mint_renounced: int
    top10_base: float
    twitter_base: float
    telegram_base: float
    narrative_base: float
    virality_base: float


def token_meta(seed: int, token_id: int, path: market.TokenPath) -> TokenMeta:
    """The token ``token_id`` of the world ``seed`` (its chain and rug come from ``path``)."""
    u = market.noise_uniform((seed, 3, token_id), np.arange(16))
    z = market.noise_normal((seed, 4, token_id), np.arange(4))
    syl = [_SYLLABLES[int(x * len(_SYLLABLES))] for x in u[:3]]
    stem = "".join(syl[: 2 + int(u[3] * 2)]).capitalize()
    noun = _NOUNS[int(u[4] * len(_NOUNS))]
    name = f"{stem} {noun}"
    symbol = (stem[:3] + noun[:2]).upper()[: 3 + int(u[5] * 3)]
    digest = hashlib.blake2b(f"{seed}:token:{token_id}".encode(), digest_size=32).digest()
    address = base58(digest, 44) if path.chain == "SOLANA" else "0x" + digest[:20].hex()
    rugs = path.rug_hour is not None
    # Security traits: rugs mostly come from unlocked pools and concentrated supply.
    lock_p = (0.6, 0.25, 0.1, 0.05) if rugs else (0.1, 0.2, 0.4, 0.3)
    lp_locked = int(np.searchsorted(np.cumsum(lock_p), u[6], side="right"))
    return TokenMeta(
        id=token_id,
        name=name,
        symbol=symbol,
        address=address,
        chain=path.chain,
        created_ms=WORLD_START_MS - int((1 + u[7] * 29) * 24) * HOUR_MS,
        holders0=int(200 + u[8] * 3000),
        holder_growth=float(0.2 + u[9] * 3.0),
        lp_locked=min(lp_locked, 3),
        mint_renounced=int(u[10] < 0.75),
        top10_base=float(np.clip((55.0 if rugs else 32.0) + 10 * z[0], 5, 95)),
        twitter_base=float(np.exp(7.5 + 1.2 * z[1])),
        telegram_base=float(np.exp(6.8 + 1.1 * z[2])),
        narrative_base=float(u[11] * 100),
        virality_base=float(u[12] * 100),
    )


_B58_PAIRS = tuple(_B58[r % 58] + _B58[r // 58] for r in range(58 * 58))  # two digits, low first


def base58(digest: bytes, length: int) -> str:
    """``length`` base58 digits of ``digest`` (a big-endian integer), least significant first.

    Four digits per big-integer division (58**4), split by a table of digit pairs.
    """
    num = int.from_bytes(digest, "big")
    chars = []
    for _ in range(length // 4):
        num, rem = divmod(num, 11_316_496)  # 58**4
        high, low = divmod(rem, 3364)  # 58**2
        chars.append(_B58_PAIRS[low] + _B58_PAIRS[high])
    for _ in range(length % 4):
        num, rem = divmod(num, 58)
        chars.append(_B58[rem])
    return "".join(chars)
