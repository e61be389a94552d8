"""Numbers as prime-power tokens, so that every positive integer (every extent, every divisor) is writable.

    12  -> "2^2 3^1 ;"      128 -> "2^7 ;"      1 -> "1 ;"      0 -> "zero ;"
    202 -> "2^1 P d1 d0 d1 ;"   (a prime >= 100 is spelled in decimal digits after "P", once per occurrence)

Factors are written smallest prime first, so each number has exactly one spelling. The same spelling is used
for extents in the prompt and for tile factors in the decisions: the model sees that 128 = 2^7 and that the
factors it writes multiply back to it, and masking a factor token by token is a walk down the divisors.
"""

from __future__ import annotations

import functools
import math

END = ";"  # ends every number
ZERO = "zero"
ONE = "1"
BIG = "P"  # a prime >= SMALL_PRIME_LIMIT follows, in decimal digits
DIGITS = [f"d{i}" for i in range(10)]
SMALL_PRIME_LIMIT = 100
MAX_VALUE_BITS = 40  # exponents are capped so that p^e < 2^40; a larger power is written as several tokens


def _primes_below(n: int) -> list[int]:
    return [p for p in range(2, n) if all(p % q for q in range(2, math.isqrt(p) + 1))]


SMALL_PRIMES = _primes_below(SMALL_PRIME_LIMIT)
MAX_EXPONENT = {p: int(MAX_VALUE_BITS * math.log(2) / math.log(p)) for p in SMALL_PRIMES}


def power_token(p: int, e: int) -> str:
    return f"{p}^{e}"


def number_vocab() -> list[str]:
    """Every token numbers use, in a fixed order."""
    powers = [power_token(p, e) for p in SMALL_PRIMES for e in range(1, MAX_EXPONENT[p] + 1)]
    return [END, ZERO, ONE, BIG, *DIGITS, *powers]


@functools.lru_cache(maxsize=65536)
def factorize(n: int) -> tuple[tuple[int, int], ...]:
    """(prime, exponent) pairs of n >= 1, smallest prime first."""
    out, p = [], 2
    while p * p <= n:
        e = 0
        while n % p == 0:
            n, e = n // p, e + 1
        if e:
            out.append((p, e))
        p += 1
    if n > 1:
        out.append((n, 1))
    return tuple(out)


@functools.lru_cache(maxsize=65536)
def number_tokens(n: int) -> tuple[str, ...]:
    """The spelling of a non-negative integer, END included."""
    if n < 0:
        raise ValueError(f"cannot write negative number {n}")
    if n in (0, 1):
        return (ZERO if n == 0 else ONE, END)
    out: list[str] = []
    for p, e in factorize(n):
        if p < SMALL_PRIME_LIMIT:
            while e > 0:  # a power above the cap is split: 2^45 -> 2^40 2^5
                step = min(e, MAX_EXPONENT[p])
                out.append(power_token(p, step))
                e -= step
        else:
            out += [BIG, *(f"d{c}" for c in str(p))] * e
    return (*out, END)


def is_number_token(tok: str) -> bool:
    return tok in (END, ZERO, ONE, BIG) or "^" in tok


def read_number(tokens: list[str], i: int) -> tuple[int, int]:
    """Parse a number starting at tokens[i]: (value, index after its END). Raises ValueError if malformed."""
    value = 1
    while i < len(tokens) and tokens[i] != END:
        tok = tokens[i]
        if tok in (ZERO, ONE):
            value, i = (0 if tok == ZERO else value), i + 1
        elif tok == BIG:
            j = i + 1
            while j < len(tokens) and tokens[j] in DIGITS:
                j += 1
            if j == i + 1:
                raise ValueError(f"'{BIG}' without digits at token {i}")
            value *= int("".join(t[1] for t in tokens[i + 1 : j]))
            i = j
        elif "^" in tok:
            p, e = tok.split("^")
            value *= int(p) ** int(e)
            i += 1
        else:
            raise ValueError(f"unexpected token {tok!r} in a number at {i}")
    if i >= len(tokens):
        raise ValueError("number without its end token ';'")
    return value, i + 1
