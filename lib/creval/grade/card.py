"""The card ``creval grade`` writes (issues 42, 51): ``card.jsonl`` (one row per measure, every field of the
rule's result), ``card.html`` (one self-contained page: the forest plot first, plotly.js inlined, no file or
network fetch, so it opens offline and in a headless browser; then one row per measure, the reason folded) and
``measures.csv`` (the per-text table: id, label and every measure and baseline).
"""
from __future__ import annotations

import html
import json
import math
from pathlib import Path

from creval.core.table import guard_folder, write_rows
from creval.grade.forest import COLOURS, drawable, forest_figure
from creval.grade.grading import per_text_rows
from creval.measures.stats import tracking as TR
from creval.measures.stats.verdicts import BORDERLINE

STYLE = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse;width:100%}"
         "td,th{padding:.3em .6em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}"
         ".num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.word{font-weight:600}"
         ".warn{color:#8a5a00}small{color:#555}details summary{cursor:pointer;color:#333}"
         "details p{max-width:60em;color:#333}td:last-child{min-width:22em}")


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
    colour = COLOURS.get(str(r.get("word", "")), "#444")
    return ("<tr>"
            f"<td>{html.escape(str(r.get('description', r['measure'])))}<br><small>{html.escape(r['measure'])}"
            "</small></td>"
            f"<td class=num>{_interval(r, 'value', 'lo', 'hi')}</td>"
            f"<td>{html.escape(str(r.get('baseline', '')))}<br><span class=num>{_num(r.get('baseline value'))}"
            "</span></td>"
            f"<td class=num>{_interval(r, 'difference', 'diff lo', 'diff hi')}</td>"
            f"<td>{_within(r)}</td>"
            f"<td class=word style='color:{colour}'>{html.escape(_label(r))}</td>"
            f"<td>{_reason_cell(r)}</td></tr>")


def per_prompt(r: dict) -> str:
    """Each prompt's own statistic (the row's detail under the within-prompt estimand), "" without prompts."""
    return "; ".join(f"{p['group']} {_num(p['value'], 2)} (n={p['n']})" for p in r.get("prompts") or [])


def _reason_cell(r: dict) -> str:
    """The reason's first clause, the full text (and each prompt's own value) one click away."""
    full = str(r.get("reason", ""))
    short = full.split(";")[0]
    detail = per_prompt(r)
    if short == full and not detail:
        return html.escape(full)
    extra = f"<p>per prompt: {html.escape(detail)}</p>" if detail else ""
    return f"<details><summary>{html.escape(short)}</summary><p>{html.escape(full)}</p>{extra}</details>"


def card_html(result: dict, source: str) -> str:
    """The card as one HTML page: the forest plot first (the words at a glance), then what was graded, the
    warnings, and one row per measure. ``source``: the file graded (only its name is shown)."""
    from plotly.offline import get_plotlyjs
    card, n = result["card"], len(result["table"])
    name = html.escape(Path(str(source)).name)
    model = result.get("ppl_model")
    stat = "AUROC" if result["stat"] == "auc" else "Spearman rho"
    warns = "".join(f"<li class=warn>{html.escape(w)}</li>" for w in result.get("warnings", []))
    untested = [r for r in card if r not in drawable(card)]
    fig = forest_figure(card, f"Which measures track people on {Path(str(source)).name}")
    plot = fig.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False, "responsive": True})
    head = ("<tr><th>measure</th><th>" + stat + " vs people [95% CI]</th><th>strongest trivial baseline</th>"
            "<th>lead [95% CI]</th><th>within each author</th><th>word</th><th>reason</th></tr>")
    skipped = ("<p><b>Not testable here:</b> " + "; ".join(
        f"{html.escape(str(r.get('description', r['measure'])))} ({html.escape(str(r.get('reason', '')))})"
        for r in untested) + "</p>") if untested else ""
    return ("<!doctype html><html><head><meta charset=utf-8><title>creval grade: "
            f"{name}</title><style>{STYLE}</style><script>{get_plotlyjs()}</script></head><body>"
            f"<h1>Which measures track people on {name}</h1>"
            f"<p>{n} texts; each measure's {stat} against the human labels beside the strongest trivial "
            "baseline (length, format features) on the same texts and, where authors are given, within each "
            "author. <b>tracks people</b>: above chance and ahead of every baseline, within authors too; "
            "<b>tracks authorship only</b>: its agreement comes from who wrote the text; <b>no better than</b> a "
            "baseline: its lead over that trivial feature is shown short of the margin; <b>does not track people</b>: "
            "its interval rules out any agreement worth the name; open markers: <b>borderline</b>, another "
            "bootstrap seed could change the word (docs/verdicts.md)."
            + (f" Perplexity under {html.escape(str(model))}." if model else "") + "</p>"
            + _whose(result) + (f"<ul>{warns}</ul>" if warns else "") + plot + skipped
            + f"<table>{head}{''.join(_row(r) for r in card)}</table></body></html>")


def _whose(result: dict) -> str:
    """Whose judgment the card stands on: the raters, each held out against the others (long input), and where
    the kinds of rater disagree; or that the file named no rater."""
    card = result.get("card") or []
    if not result.get("raters"):
        return "<p>Whose judgment: the labels column as given (no rater named; long input with --rater names them).</p>"
    def one(c: dict) -> str:
        kind = f" ({c['kind']})" if c.get("kind") else ""
        return html.escape(f"{c['rater']}{kind} {_num(c['agreement'], 2)}")
    each = "; ".join(one(c) for c in result["raters"])
    who = html.escape(str(card[0].get("raters", ""))) if card else ""
    kinds = f" {html.escape(result['kinds'])}." if result.get("kinds") else ""
    return (f"<p>Whose judgment: {who}, each text's mean. Each rater held out against the mean of the others "
            f"(Spearman): {each}.{kinds}</p>")


def _label(r: dict) -> str:
    """The rule's word (a *no better than* naming its baseline) with its borderline mark (a bound's Monte-Carlo
    margin could flip it), as verdicts show it: "tracks people, borderline"."""
    word = TR.word_label(r)
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


CARD_FILES = {"html": "card.html", "jsonl": "card.jsonl", "table": "measures.csv", "raters": "raters.csv"}
"""The files ``creval grade`` writes under ``--out``, by role."""


def write_card(result: dict, out: str | Path, source: str) -> dict[str, Path]:
    """Write ``card.html``, ``card.jsonl`` and ``measures.csv`` under the folder ``out`` (made if missing); their
    paths by name. An ``out`` that is a file is refused before anything is written."""
    out = guard_folder(out, ())
    out.mkdir(parents=True, exist_ok=True)
    paths = {k: out / name for k, name in CARD_FILES.items()}
    paths["html"].write_text(card_html(result, source), encoding="utf-8")
    paths["jsonl"].write_text("".join(json.dumps(_jsonable(r)) + "\n" for r in result["card"]), encoding="utf-8")
    write_rows(paths["table"], per_text_rows(result))
    if result.get("raters"):          # long input: one row per rater, held out against the others
        write_rows(paths["raters"], result["raters"])
    else:
        paths.pop("raters")
    return paths
