"""The card ``creval grade`` writes (issue 42): ``card.jsonl`` (one row per measure, every field of the rule's
result), ``card.html`` (one self-contained page: no script, no file or network fetch, so it opens offline and
in a headless browser) and ``measures.csv`` (the per-text table: id, label and every measure and baseline).
"""
from __future__ import annotations

import html
import json
import math
from pathlib import Path

from creval.core.table import write_rows
from creval.measures.verdicts import BORDERLINE
from creval.studies.grade import per_text_rows

COLOURS = {"tracks people": "#1b7837", "tracks authorship only": "#b35806", "does not track people": "#b2182b"}
STYLE = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:110em}table{border-collapse:collapse}"
         "td,th{padding:.3em .6em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}"
         ".num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.word{font-weight:600}"
         ".warn{color:#8a5a00}small{color:#555}")


def _num(v, digits: int = 3) -> str:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(x) else f"{x:.{digits}f}"


def _interval(r: dict, v: str, lo: str, hi: str, digits: int = 3) -> str:
    val, a, b = _num(r.get(v), digits), _num(r.get(lo), digits), _num(r.get(hi), digits)
    if not val:
        return "no value"
    return f"{val} [{a}, {b}]" if a and b else f"{val} (no interval)"


def _within(r: dict) -> str:
    parts = [f"<span class=num>{html.escape(str(w.get('author')))} {_interval(w, 'value', 'lo', 'hi', 2)}, "
             f"n={w.get('n')}</span>"
             for w in r.get("within") or []]
    return "<br>".join(parts) or "<small>no author column</small>"


def _row(r: dict) -> str:
    word = str(r.get("word", ""))
    colour = COLOURS.get(word, "#444")
    return ("<tr>"
            f"<td>{html.escape(str(r.get('description', r['measure'])))}<br><small>{html.escape(r['measure'])}"
            "</small></td>"
            f"<td class=num>{_interval(r, 'value', 'lo', 'hi')}</td>"
            f"<td>{html.escape(str(r.get('baseline', '')))}<br><span class=num>{_num(r.get('baseline value'))}"
            "</span></td>"
            f"<td class=num>{_interval(r, 'difference', 'diff lo', 'diff hi')}</td>"
            f"<td>{_within(r)}</td>"
            f"<td class=word style='color:{colour}'>{html.escape(_label(r))}</td>"
            f"<td>{html.escape(str(r.get('reason', '')))}</td></tr>")


def card_html(result: dict, source: str) -> str:
    """The card as one HTML page: what was graded, the warnings, and one row per measure."""
    card, n = result["card"], len(result["table"])
    model = result.get("ppl_model")
    stat = "AUROC" if result["stat"] == "auc" else "Spearman rho"
    warns = "".join(f"<li class=warn>{html.escape(w)}</li>" for w in result.get("warnings", []))
    head = ("<tr><th>measure</th><th>" + stat + " vs people [95% CI]</th><th>strongest trivial baseline</th>"
            "<th>difference [95% CI]</th><th>within each author</th><th>word</th><th>reason</th></tr>")
    return ("<!doctype html><html><head><meta charset=utf-8><title>creval grade: "
            f"{html.escape(source)}</title><style>{STYLE}</style></head><body>"
            f"<h1>Which measures track people on {html.escape(source)}</h1>"
            f"<p>{n} texts; each measure's {stat} against the human labels, beside the strongest trivial "
            "baseline (length, format features, author) on the same texts and within each author. A measure "
            "<b>tracks people</b> when it beats the baseline and agrees with people within authors, "
            "<b>tracks authorship only</b> when its agreement comes from who wrote the text; <b>borderline</b> "
            "when another bootstrap seed could change the word."
            + (f" Perplexity under {html.escape(str(model))}." if model else "") + "</p>"
            + (f"<ul>{warns}</ul>" if warns else "")
            + f"<table>{head}{''.join(_row(r) for r in card)}</table></body></html>")


def _label(r: dict) -> str:
    """The rule's word with its borderline mark (a bound's Monte-Carlo margin could flip it), as verdicts show
    it: "tracks people, borderline"."""
    word = str(r.get("word", ""))
    return f"{word}, {BORDERLINE}" if r.get("borderline") else word


def card_table(result: dict):
    """The card as a compact DataFrame (chapter 08): measure, value and interval, baseline, word (with its
    borderline mark), reason."""
    import pandas as pd
    cols = ["description", "value", "lo", "hi", "baseline", "baseline value", "difference", "word", "reason"]
    df = pd.DataFrame(result["card"])
    if "word" in df:
        df["word"] = [_label(r) for r in result["card"]]
    return df[[c for c in cols if c in df]]


def _jsonable(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if hasattr(v, "item"):            # a numpy number
        return _jsonable(v.item())
    return v


def write_card(result: dict, out: str | Path, source: str) -> dict[str, Path]:
    """Write ``card.html``, ``card.jsonl`` and ``measures.csv`` under ``out``; their paths by name."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"html": out / "card.html", "jsonl": out / "card.jsonl", "table": out / "measures.csv"}
    paths["html"].write_text(card_html(result, source), encoding="utf-8")
    paths["jsonl"].write_text("".join(json.dumps(_jsonable(r)) + "\n" for r in result["card"]), encoding="utf-8")
    write_rows(paths["table"], per_text_rows(result))
    return paths
