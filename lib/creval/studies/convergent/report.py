"""Tables, figures and sentences of chapter 03 (convergent creativity), pure: the study's records in
(``STUDY.records(cfg)``), a captioned DataFrame (``df.attrs["caption"]``), a Figure, an
HTML object or a Markdown string out. Each chapter cell calls one function here.

The records: ``bench_verdicts`` (``bench_judge`` on chapter 02's solutions; Tables 3-5, Fig. 7),
``human_verdicts`` (every judge on the human-labelled MacGyver pairs, with ``label``; Tables 2 and 15),
``sweep`` and ``sweep_calls`` (the retrieval judge at each early-exit threshold T; Fig. 12),
``transcripts`` (the discussions of the labelled pairs) and ``labels_source``.
"""
from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from creval.measures.stats import agreement as agree
from creval.measures.stats import numbers as num
from creval.studies.contract import Records
from creval.studies.tables import captioned, computed, guard_module, public_text


# -- benchmark (Tables 3-5, Fig. 7) ---------------------------------------------------------------
def convergent_table(recs: Records) -> pd.DataFrame:
    """Tables 3-5: per model and domain, mean semantic entropy and the share of YES per criterion.

    Unparsed verdicts are left out of each share and counted in the ``unparsed`` column;
    Overall = mean of the criterion shares (as in the paper).
    """
    verdicts, cfg, rows = recs.written("bench_verdicts"), recs.cfg, []
    for (model, domain), g in verdicts.groupby(["model", "domain"], sort=False):
        se = g.groupby("pair_id").mean_semantic_entropy.first().mean() if "mean_semantic_entropy" in g else np.nan
        row = {"domain": domain, "model": model, "solutions": int(g["pair_id"].nunique()), "semantic entropy": se}
        shares, same = [], []
        for c, gc in g.groupby("criterion", sort=False):
            ok = gc[~gc.unparsed.astype(bool)]
            share = ok.verdict.astype(float).mean() if len(ok) else np.nan
            row[c] = share
            shares.append(share)
            if one_answer([bool(x) for x in ok.verdict]):
                same.append(f"{c}: {one_answer([bool(x) for x in ok.verdict])}")
        row["Overall"] = np.nanmean(shares) if any(np.isfinite(shares)) else np.nan
        row["unparsed"] = f"{int(g.unparsed.sum())}/{len(g)}"
        row["one answer to every solution"] = "; ".join(same)
        rows.append(row)
    who = f" ({cfg.convergent_bench_judge} judge, {cfg.judge_model})" if cfg else ""
    t = pd.DataFrame(rows)
    flagged = int((t["one answer to every solution"] != "").sum()) if len(t) else 0
    note = (f". In {flagged} row(s) the judge gave one answer to every solution of a criterion (named in the last "
            "column): that share says nothing about the solutions") if flagged else ""
    return captioned(t, f"Convergent creativity{who}{note}. Scale: the judge answers YES or NO per criterion; a "
                        "criterion's cell is the share of YES among its parsed verdicts on the row's solutions")


def one_answer(pred) -> str:
    """"always YES" / "always NO" when a judge's parsed verdicts (``None`` = unparsed, left out) are all the
    same over at least two items: a constant judge, whose accuracy is only the share of that label; else ""."""
    got = [bool(p) for p in pred if p is not None and p == p]
    if len(got) < 2 or len(set(got)) > 1:
        return ""
    return "always YES" if got[0] else "always NO"


BIN_SIZE = 15      # solutions per bin of Fig. 7 (as in the paper)


def fig_entropy_vs_criteria(recs: Records, bin_size: int = BIN_SIZE) -> go.Figure:
    """Fig. 7: mean verdict (YES = 1) against semantic entropy, fixed-count bins of ``bin_size`` solutions.

    Each point is one bin of consecutive solutions sorted by entropy: x = median entropy, y = mean verdict.
    With fewer than ``bin_size`` solutions there is one bin per model and criterion (flagged in the title).
    """
    fig, verdicts = go.Figure(), recs.written("bench_verdicts")
    v = verdicts[~verdicts.unparsed.astype(bool)].dropna(subset=["mean_semantic_entropy"])
    small = False
    for (model, crit), g in v.groupby(["model", "criterion"], sort=False):
        g = g.sort_values("mean_semantic_entropy").reset_index(drop=True)
        small |= len(g) < bin_size
        b = g.groupby(np.arange(len(g)) // bin_size)
        same = one_answer([bool(x) for x in g.verdict])
        fig.add_trace(go.Scatter(x=b.mean_semantic_entropy.median(),
                                 y=b.verdict.apply(lambda s: s.astype(float).mean()),
                                 mode="lines+markers", name=f"{model} · {crit}" + (f" ({same})" if same else "")))
    title = f"Semantic entropy vs convergent criteria (bins of {bin_size})"
    if small:
        title += " — fewer solutions than one bin: single points"
    # the legend under the plot: a line per model and criterion, named at length, would take its width
    fig.update_layout(title=title, xaxis_title="mean semantic entropy of the solution",
                      yaxis_title="share judged YES", yaxis_range=[-0.05, 1.05],
                      legend=dict(orientation="h", y=-0.2, yanchor="top", x=0, xanchor="left"),
                      height=420 + 24 * len(fig.data), margin=dict(b=60 + 24 * len(fig.data)))
    return fig


# -- human validation (Table 2), tokens (Table 15) -------------------------------------------------
def labels_source(recs: Records) -> str:
    """The one line of the ``labels_source`` table: where the human labels of the judged pairs came from."""
    lines = recs.labels_source
    return public_text(str(lines["line"].iloc[0])) if len(lines) else "Human labels: none in this run"


def agreement_table(recs: Records) -> pd.DataFrame:
    """Table 2: accuracy, AUARC, kappa and coverage per judge and criterion, plus 'all' per judge."""
    verdicts, rows = recs.written("human_verdicts"), []
    for j, gj in verdicts.groupby("judge", sort=False):
        for c, g in list(gj.groupby("criterion", sort=False)) + [("all", gj)]:
            pred = [None if r.unparsed or pd.isna(r.verdict) else bool(r.verdict) for r in g.itertuples()]
            conf = [None if pd.isna(r.confidence) else float(r.confidence) for r in g.itertuples()]
            labels = [bool(x) for x in g.label]
            parsed = [lab for lab, p in zip(labels, pred) if p is not None]
            rows.append({"judge": j, "criterion": c, **agree.agreement(labels, pred, conf),
                         "no confidence": no_confidence(pred, conf), "answers": one_answer(pred),
                         "majority baseline": (max(np.mean(parsed), 1 - np.mean(parsed)) if parsed else np.nan)})
    cols = ["judge", "criterion", "n", "coverage", "unparsed", "accuracy", "accuracy_all", "auarc", "no confidence",
            "kappa", "label_yes_rate", "answers", "majority baseline"]
    pairs = verdicts["pair_id"].nunique() if len(verdicts) else 0
    judge = f", judge {recs.cfg.judge_model}" if recs.cfg else ""
    t = pd.DataFrame(rows, columns=cols)
    return captioned(t, f"Judges vs human labels ({pairs} pairs{judge})" + auarc_caveat(t) + _constant_caveat(t))


def _constant_caveat(t: pd.DataFrame) -> str:
    """The caption's note naming the judges that gave one answer to every item of all their criteria
    ('answers' of the 'all' row): their accuracy is the majority baseline's or its complement, not agreement."""
    if t.empty or "answers" not in t:
        return ""
    flat = t[(t["criterion"] == "all") & (t["answers"] != "")]
    if flat.empty:
        return ""
    names = ", ".join(f"{r['judge']} ({r['answers']})" for r in flat.to_dict("records"))
    return (f". Constant judges: {names} gave one answer to every item, so their accuracy is the share of that "
            "label (compare 'majority baseline'), not agreement with the annotators")


def no_confidence(pred: list, conf: list) -> int:
    """Parsed verdicts that came without a confidence: AUARC (:func:`creval.measures.stats.agreement.auarc`) ranks them
    below every confidence, as the least sure."""
    return sum(p is not None and c is None for p, c in zip(pred, conf))


def auarc_caveat(t: pd.DataFrame) -> str:
    """The caption's note when some AUARC rests on verdicts without a confidence (ranked lowest), else ""."""
    if t.empty or "no confidence" not in t or not (t["no confidence"] > 0).any():
        return ""
    k = int((t["no confidence"] > 0).sum())
    return (f". In {k} row(s) some parsed verdicts carry no confidence ('no confidence'): AUARC ranks them below "
            "every confidence, as the least sure, so those AUARC values depend on that choice")


def token_table(recs: Records, ours: str = "retrieval", baseline: str = "chateval") -> pd.DataFrame:
    """Table 15: tokens per pair (all judged criteria summed), mean ± sd, on the pairs both judges judged."""
    verdicts = recs.written("human_verdicts")
    per = verdicts.groupby(["judge", "pair_id"])[["input_tokens", "output_tokens"]].sum().reset_index()
    common = set(per[per.judge == ours].pair_id) & set(per[per.judge == baseline].pair_id)
    per = per[per.pair_id.isin(common)]
    per["total"] = per.input_tokens + per.output_tokens
    rows = []
    for j, g in per.groupby("judge", sort=False):
        row = {"judge": j, "pairs": len(g)}
        for t in ("input_tokens", "output_tokens", "total"):
            row[f"{t} mean"] = g[t].mean()
            row[f"{t} sd"] = g[t].std(ddof=1) if len(g) > 1 else np.nan
        rows.append(row)
    df = pd.DataFrame(rows, columns=["judge", "pairs"] + [f"{t} {m}" for t in ("input_tokens", "output_tokens", "total")
                                                        for m in ("mean", "sd")])
    if {ours, baseline} <= set(df.judge):
        b = df.set_index("judge")
        df["share of chateval"] = [b.loc[j, "total mean"] / b.loc[baseline, "total mean"] for j in df.judge]
    return captioned(df, "Tokens per pair (all judged criteria), same pairs for every judge")


PAPER_TABLE15 = {"chateval": (66944, 8634), "retrieval": (23758, 3796)}   # mean input, output tokens per pair
PAPER_SHARE = sum(PAPER_TABLE15["retrieval"]) / sum(PAPER_TABLE15["chateval"])


def token_summary(recs: Records, tokens: pd.DataFrame | None = None, ours: str = "retrieval",
                  baseline: str = "chateval", paper_share: float = PAPER_SHARE) -> str:
    """One sentence on Table 15 from the records: the share, early exits and verdict re-asks."""
    verdicts = recs.human_verdicts
    tokens = token_table(recs, ours, baseline) if tokens is None else tokens
    if "share of chateval" not in tokens:
        return f"Both {ours} and {baseline} are needed for the comparison."
    share = float(tokens.set_index("judge").loc[ours, "share of chateval"])
    g = verdicts[verdicts.judge == ours]
    early = int(g.early_exit.fillna(False).astype(bool).sum())
    asks = {j: int(verdicts[verdicts.judge == j].retries.fillna(0).sum()) for j in (ours, baseline)}
    return (f"{ours} spent {num.fmt_number(share, 0, 100)}% of {baseline}'s tokens (paper: "
            f"{num.fmt_number(paper_share, 1, 100)}%); {early} of {len(g)} "
            f"{ours} discussions exited after round 1; format re-asks: {ours} {asks[ours]}, {baseline} "
            f"{asks[baseline]}.")


def token_breakdown(recs: Records, judge: str = "retrieval") -> pd.DataFrame:
    """Tokens per pair by agent/phase (from the ledger tags stored with each verdict)."""
    rows, verdicts = [], recs.written("human_verdicts")
    caption = f"{judge.capitalize()} judge: tokens per pair by agent / phase"
    g = verdicts[verdicts.judge == judge] if len(verdicts) else verdicts
    for tb in g.tokens_by:
        for k, (i, o) in (tb or {}).items():
            rows.append({"agent/phase": k, "input": i, "output": o})
    if not rows:
        return captioned(pd.DataFrame(columns=["agent/phase", "input per pair", "output per pair"]), caption)
    d = pd.DataFrame(rows).groupby("agent/phase").sum() / max(g.pair_id.nunique(), 1)
    return captioned(d.rename(columns={"input": "input per pair", "output": "output per pair"}).reset_index(), caption)


# -- threshold sweep (Fig. 12) --------------------------------------------------------------------
SWEEP_COLUMNS = ["T", "accuracy", "auarc", "no confidence", "coverage", "mean rounds", "tokens per pair", "calls made",
                 "calls cached", "answers"]


def threshold_table(recs: Records) -> pd.DataFrame:
    """Fig. 12's numbers: per early-exit threshold T (the rows of ``sweep_calls``), the retrieval judge's
    accuracy, AUARC and coverage against the human labels (:func:`creval.measures.stats.agreement`), its mean
    rounds, its tokens per pair (all criteria), and the judge calls made and served from the call cache while
    the run judged at that T (later T values reuse the first round of the earlier ones)."""
    sweep, calls, rows = recs.sweep, recs.sweep_calls, []
    for c in calls.to_dict("records"):
        v = sweep[sweep["T"] == c["T"]] if len(sweep) else sweep
        pred = [None if r.unparsed or pd.isna(r.verdict) else bool(r.verdict) for r in v.itertuples()]
        conf = [None if pd.isna(r.confidence) else float(r.confidence) for r in v.itertuples()]
        a = agree.agreement([bool(x) for x in v.label], pred, conf) if len(v) else {}
        rows.append({"T": float(c["T"]), "accuracy": a.get("accuracy", np.nan), "auarc": a.get("auarc", np.nan),
                     "no confidence": no_confidence(pred, conf),
                     "coverage": a.get("coverage", np.nan),
                     "mean rounds": np.mean([float(x) for x in v.rounds]) if len(v) else np.nan,
                     "tokens per pair": (sum(int(i) + int(o) for i, o in zip(v.input_tokens, v.output_tokens))
                                         if len(v) else 0) / max(int(c["pairs"]), 1),
                     "calls made": int(c["calls_made"]), "calls cached": int(c["calls_cached"])})
        rows[-1]["answers"] = one_answer(pred)
    t = pd.DataFrame(rows, columns=SWEEP_COLUMNS)
    return captioned(t, "Threshold sweep" + auarc_caveat(t) + _flat_caveat(t))


def _flat_caveat(t: pd.DataFrame) -> str:
    """The note for a sweep whose accuracy and AUARC are the same at every threshold (or whose judge gives one
    answer at every T): the curve shows nothing about T. "" otherwise."""
    if len(t) < 2:
        return ""
    notes = []
    if all(t[c].nunique(dropna=False) == 1 for c in ("accuracy", "auarc")):
        notes.append("flat: accuracy and AUARC are the same at every T")
    if (t["answers"] != "").all():
        notes.append("the judge gives one answer to every item at every T (" + ", ".join(sorted(set(t["answers"])))
                     + ")")
    return (". " + "; ".join(notes) + ": the threshold changes nothing here") if notes else ""


def fig_threshold(recs: Records) -> go.Figure:
    """Fig. 12: the retrieval judge's accuracy and AUARC, and its mean rounds, at each early-exit threshold T."""
    fig, sweep = go.Figure(), threshold_table(recs)
    for col in ("accuracy", "auarc"):
        fig.add_trace(go.Scatter(x=sweep["T"], y=sweep[col], mode="lines+markers", name=col))
    fig.add_trace(go.Bar(x=sweep["T"], y=sweep["mean rounds"], name="mean rounds", yaxis="y2", opacity=0.3))
    flat = _flat_caveat(sweep)
    fig.update_layout(title="Retrieval judge: early-exit threshold T" + (f" ({flat[2:]})" if flat else ""),
                      xaxis_title="T",
                      yaxis=dict(title="accuracy / AUARC", range=[0, 1.05]),
                      yaxis2=dict(title="mean rounds", overlaying="y", side="right", range=[0, 2.2],
                                  tickvals=[0, 0.5, 1, 1.5, 2], showgrid=False),
                      legend=dict(orientation="h", y=1.02, yanchor="bottom", x=1, xanchor="right"))
    return fig


# -- transcript viewer ----------------------------------------------------------------------------
def transcript_html(transcripts: pd.DataFrame, judge: str = "retrieval", pair_id: str | None = None,
                    criterion: str | None = None, max_chars: int = 1500) -> str:
    """One human-labelled pair's discussion by ``judge`` (from the ``transcripts`` table) as collapsible
    HTML: each turn with its retrieved fragments and tokens."""
    rows = transcripts[transcripts["judge"] == judge].to_dict("records") if len(transcripts) else []
    if not rows:
        return "<p><i>no transcripts in this run</i></p>"
    pick = [r for r in rows if (pair_id is None or r["pair_id"] == pair_id) and
            (criterion is None or r["criterion"] == criterion)] or rows
    r = pick[0]
    esc = lambda s: html.escape(str(s)[:max_chars])  # noqa: E731
    parts = [f"<p class='creval-transcript'>{esc(r['judge'])} · pair {esc(r['pair_id'])} · criterion "
             f"<b>{esc(r['criterion'])}</b></p>",                  # a line of data, not a heading of the page
             f"<details><summary>problem and solution</summary><pre style='white-space:pre-wrap'>"
             f"{esc(r['problem'])}\n\n{esc(r['solution'])}</pre></details>"]
    for t in r["transcript"]:
        head = (f"{t['agent']} · {t['phase']} · round {t['round']} · tokens {t.get('input_tokens', 0)}/"
                f"{t.get('output_tokens', 0)}" + (f" · attempts {t['attempts']}" if t.get("attempts", 1) > 1 else ""))
        frag = ""
        if t.get("retrieved"):
            items = "".join(f"<li><code>{esc(i)}</code> {esc(x)}</li>"
                            for i, x in zip(t["retrieved_ids"], t["retrieved"]))
            frag = f"<details><summary>{len(t['retrieved'])} retrieved fragments</summary><ul>{items}</ul></details>"
        parsed = f"<div><i>parsed: {esc(parsed_text(t['parsed']))}</i></div>" if t.get("parsed") else ""
        parts.append(f"<details><summary>{esc(head)}</summary><div style='margin-left:1em'>"
                     f"<div><i>{esc(t['prompt'])}</i></div>{frag}<pre style='white-space:pre-wrap'>"
                     f"{esc(t['reply'])}</pre>{parsed}</div></details>")
    return "\n".join(parts)


def parsed_text(parsed) -> str:
    """What a turn's parse found, in words ("confidence 0.727, read from the log-probs"), never a raw Python
    structure on the page (issue 66): a mapping as "key value" pairs, a list joined, numbers to 3 figures."""
    def one(v) -> str:
        if isinstance(v, float):
            return f"{v:.3g}"
        if isinstance(v, dict):
            return ", ".join(f"{k} {one(x)}" for k, x in v.items())
        if isinstance(v, (list, tuple)):
            return ", ".join(one(x) for x in v)
        return str(v)
    if parsed is None:
        return ""
    if isinstance(parsed, dict) and "path" in parsed:
        rest = {k: v for k, v in parsed.items() if k != "path"}
        where = "read from the " + ("log-probs" if parsed["path"] == "logprobs" else str(parsed["path"]))
        return f"{one(rest)}, {where}" if rest else where
    return one(parsed)


def transcript(recs: Records, judge: str = "retrieval", pair_id=None, criterion=None):
    """The transcript as an HTML object the chapter cell displays."""
    from IPython.display import HTML
    return HTML(transcript_html(recs.transcripts, judge, pair_id, criterion))


PAPER_TABLE2 = pd.DataFrame([
    ("zero-shot", np.nan, np.nan), ("few-shot", 0.653, 0.720), ("few-shot w/ CoT", 0.660, 0.725),
    ("ChatEval", 0.767, np.nan), ("ours, GPT-4o-mini", 0.553, 0.635), ("ours, GPT-4o", 0.847, 0.907),
    ("human annotators (mean of 5)", 0.820, np.nan)], columns=["framework", "accuracy", "AUARC"])
"""Paper Table 2 as far as the text is legible (zero-shot row unreadable in our copy: left blank). GPT-4o judges."""


def paper_table2() -> pd.DataFrame:
    """The paper's Table 2 (a constant: no records of this build in it)."""
    return captioned(PAPER_TABLE2.copy(), "Paper Table 2 (reference)")


# -- the chapter's sentences, from the records ------------------------------------------------------------
PAPER_ACCURACY = {"retrieval": 0.847, "chateval": 0.767, "cot": 0.660, "few-shot": 0.653}  # Table 2, GPT-4o judges


def judge_accuracy(recs: Records) -> dict[str, dict]:
    """Per judge, over all criteria: accuracy on the parsed verdicts, their number and the coverage."""
    t = computed(agreement_table(recs))
    t = t[t["criterion"] == "all"]
    return {r["judge"]: {"accuracy": float(r["accuracy"]), "parsed": int(round(r["n"] * r["coverage"])),
                         "coverage": float(r["coverage"])} for r in t.to_dict("records")}


def build_caveats(recs: Records) -> str:
    """What this build's judging rests on: the judge model, the labelled pairs, and how often it failed the
    format."""
    cfg, hv, bv = recs.cfg, recs.human_verdicts, recs.bench_verdicts
    unparsed = (int(hv["unparsed"].sum()) + int(bv["unparsed"].sum()) if len(bv) else int(hv["unparsed"].sum())
                ) if len(hv) else 0
    total = len(hv) + len(bv)
    return (f"**Read the numbers with care.** In this build the judge model is `{cfg.judge_model}`, the "
            f"human-labelled pairs number {hv['pair_id'].nunique() if len(hv) else 0} and the solutions judged "
            f"for the benchmark {bv['pair_id'].nunique() if len(bv) else 0}; {unparsed} of its {total} verdicts "
            "did not parse (they are counted as *unparsed*, never turned into a default answer). The paper's "
            "accuracy claims need a judge that follows the format (e.g. `judge_model: gpt-4o` with an API key, or "
            "the local `qwen2.5-coder-1.5b`) and the paper's fifty labelled pairs.")


def fig7_note(recs: Records) -> str:
    """How many solutions per model the Fig. 7 bins have here."""
    bv = recs.bench_verdicts
    per = bv.groupby("model")["pair_id"].nunique().to_dict() if len(bv) else {}
    few = {m: n for m, n in per.items() if n < BIN_SIZE}
    return (f"Solutions per model in this build: {', '.join(f'{m} {n}' for m, n in per.items()) or 'none'}; "
            + (f"with fewer than one bin of {BIN_SIZE}, each such line is a single point."
               if few else f"every model fills at least one bin of {BIN_SIZE}."))


guard_module(globals())
