"""Printing numbers: every statistic of the book is rounded once, from its full-precision value, here."""
from __future__ import annotations


def fmt_number(x, digits: int = 2, scale: float = 1.0) -> str:
    """``x * scale`` rounded once, from the full-precision value, to ``digits`` decimals; "–" for NaN/None.
    Every printed statistic goes through here (or :func:`fmt_interval`): a value is never rounded twice."""
    from decimal import ROUND_HALF_UP, Decimal
    if x is None or x != x:
        return "–"
    if x in (float("inf"), float("-inf")):
        return str(x)
    # the exact binary value, rounded half away from zero once: 0.8448 -> 0.84, 6.25 -> 6.3, 0.845 (stored as
    # 0.84499...) -> 0.84
    q = Decimal(float(x) * scale if scale != 1 else float(x)).quantize(Decimal(1).scaleb(-digits),
                                                                       rounding=ROUND_HALF_UP)
    return f"{q:.{digits}f}".replace("-0.", "0.", 1) if q == 0 else f"{q:.{digits}f}"


def fmt_interval(lo, hi, digits: int = 2, scale: float = 1.0) -> str:
    """``[lo, hi]`` with each bound rounded once from its full-precision value (0.8448 -> 0.84, never
    0.845 -> 0.85); "" when the interval is undefined (NaN)."""
    if lo is None or hi is None or lo != lo or hi != hi:
        return ""
    return f"[{fmt_number(lo, digits, scale)}, {fmt_number(hi, digits, scale)}]"


def fmt_estimate(value, lo, hi, digits: int = 2, scale: float = 1.0) -> str:
    """``value [lo, hi]``, each rounded once (the interval left out where it is undefined)."""
    ci = fmt_interval(lo, hi, digits, scale)
    return f"{fmt_number(value, digits, scale)} {ci}".strip()
