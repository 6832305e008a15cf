"""Tables and figures of chapter 03 (convergent creativity). Each chapter cell calls one function here.

Run folders under ``<run_root>/03-convergent/``:
``bench/<judge>/<model>/<domain>/`` verdicts on the chapter-02 solutions (Tables 3-5, Fig. 7),
``human/<judge>/`` verdicts on MacGyver human-labelled pairs (Tables 2 and 15),
``sweep/T<T>/`` the retrieval judge at each early-exit threshold (Fig. 12).
"""
from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from creval.core.io import read_jsonl
from creval.datasets import judge_labels as human
from creval.judges.base import crit_name
from creval.judges.runner import run_judge

JUDGE_PARAMS = ("threshold", "k", "j", "l", "max_rounds", "word_limit", "init_words", "retries", "verdict_via",
                "confidence_via", "embedder", "seed")


def _root(run_root) -> Path:
    return Path(run_root) / "03-convergent"


def _jp(params: dict) -> dict:
    return {k: v for k, v in params.items() if k in JUDGE_PARAMS and v is not None}


# -- benchmark (Tables 3-5, Fig. 7) ---------------------------------------------------------------
def solutions(run_root, models, domains, limit, n_samples, temperature=1.0, top_p=0.9, max_steps=5,
              max_step_tokens=48, nli="minilm-sick", strict_entailment=True, seed=0) -> pd.DataFrame:
    """The chapter-02 solutions (same parameters, so served from chapter 02's runs / the call cache)."""
    from creval.studies.divergent.report import run_main
    _, problems = run_main(run_root, models, domains, limit, n_samples, temperature=temperature, top_p=top_p,
                           max_steps=max_steps, max_step_tokens=max_step_tokens, nli=nli,
                           strict_entailment=strict_entailment, seed=seed)
    return problems


def judge_solutions(problems: pd.DataFrame, run_root, judge_model: str, judge: str = "retrieval",
                    **params) -> pd.DataFrame:
    """Verdicts of ``judge`` for every solution in ``problems`` (per model x domain run folder)."""
    from creval.domains import get_domain
    from creval.models.registry import load_model
    m = load_model(judge_model)
    frames = []
    for (model, domain), g in problems.groupby(["model", "domain"], sort=False):
        out = _root(run_root) / "bench" / judge / judge_model / str(model) / str(domain)
        st = run_judge(judge, m, g.to_dict("records"), get_domain(domain).criteria, out, progress=False, **_jp(params))
        frames.append(st.frame("verdicts").assign(model=model, domain=domain))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def convergent_table(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Tables 3-5: per model and domain, mean semantic entropy and the share of YES per criterion.

    Unparsed verdicts are left out of each share and counted in the ``unparsed`` column;
    Overall = mean of the criterion shares (as in the paper).
    """
    rows = []
    for (model, domain), g in verdicts.groupby(["model", "domain"], sort=False):
        row = {"domain": domain, "model": model, "semantic entropy": g.groupby("pair_id").mean_semantic_entropy.first().mean()
               if "mean_semantic_entropy" in g else np.nan}
        shares = []
        for c, gc in g.groupby("criterion", sort=False):
            ok = gc[~gc.unparsed.astype(bool)]
            share = ok.verdict.astype(float).mean() if len(ok) else np.nan
            row[c] = share
            shares.append(share)
        row["Overall"] = np.nanmean(shares) if any(np.isfinite(shares)) else np.nan
        row["unparsed"] = f"{int(g.unparsed.sum())}/{len(g)}"
        rows.append(row)
    return pd.DataFrame(rows)


def fig_entropy_vs_criteria(verdicts: pd.DataFrame, bin_size: int = 15) -> go.Figure:
    """Fig. 7: mean verdict (YES = 1) against semantic entropy, fixed-count bins of ``bin_size`` solutions.

    Each point is one bin of consecutive solutions sorted by entropy: x = median entropy, y = mean verdict.
    With fewer than ``bin_size`` solutions there is one bin per model and criterion (flagged in the title).
    """
    fig = go.Figure()
    v = verdicts[~verdicts.unparsed.astype(bool)].dropna(subset=["mean_semantic_entropy"])
    small = False
    for (model, crit), g in v.groupby(["model", "criterion"], sort=False):
        g = g.sort_values("mean_semantic_entropy").reset_index(drop=True)
        small |= len(g) < bin_size
        b = g.groupby(np.arange(len(g)) // bin_size)
        fig.add_trace(go.Scatter(x=b.mean_semantic_entropy.median(), y=b.verdict.apply(lambda s: s.astype(float).mean()),
                                 mode="lines+markers", name=f"{model} · {crit}"))
    title = f"Semantic entropy vs convergent criteria (bins of {bin_size})"
    if small:
        title += " — fewer solutions than one bin: single points"
    fig.update_layout(title=title, xaxis_title="mean semantic entropy of the solution",
                      yaxis_title="share judged YES", yaxis_range=[-0.05, 1.05])
    return fig


# -- human validation (Table 2), tokens (Table 15) -------------------------------------------------
def human_pairs(n: int, seed: int = 0) -> list[dict]:
    return human.sample_pairs(n, seed=seed)


def validation_criteria(domain: str = "macgyver"):
    """The domain's criteria that have human labels (feasibility, effectiveness)."""
    from creval.domains import get_domain
    return [c for c in get_domain(domain).criteria if crit_name(c).lower() in ("feasibility", "effectiveness")]


def validate_judges(run_root, judge_model: str, judges, n_pairs: int, **params) -> pd.DataFrame:
    """Run each judge on the same ``n_pairs`` human-labelled MacGyver pairs; verdict rows with labels."""
    from creval.models.registry import load_model
    pairs = human_pairs(n_pairs, params.get("seed", 0))   # the same seed picks the pairs and seeds the judges
    labels = {p["pair_id"]: p["labels"] for p in pairs}
    m, crits = load_model(judge_model), validation_criteria()
    frames = []
    for j in judges:
        st = run_judge(j, m, pairs, crits, _root(run_root) / "human" / judge_model / j, progress=False, **_jp(params))
        df = st.frame("verdicts")
        df = df[df.pair_id.isin(labels)].copy()
        df["label"] = [labels[p][c.lower()] for p, c in zip(df.pair_id, df.criterion)]
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    out.attrs["source"] = pairs[0]["source"] if pairs else ""
    return out


def agreement_table(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Table 2: accuracy, AUARC, kappa and coverage per judge and criterion, plus 'all' per judge."""
    rows = []
    labels = {(p, c): l for p, c, l in zip(verdicts.pair_id, verdicts.criterion, verdicts.label)}
    lab = {}
    for (p, c), l in labels.items():
        lab.setdefault(p, {})[c.lower()] = bool(l)
    for j, gj in verdicts.groupby("judge", sort=False):
        for c, g in list(gj.groupby("criterion", sort=False)) + [("all", gj)]:
            recs = [{"pair_id": r.pair_id, "criterion": r.criterion,
                     "verdict": None if r.unparsed or pd.isna(r.verdict) else bool(r.verdict),
                     "confidence": None if pd.isna(r.confidence) else float(r.confidence)} for r in g.itertuples()]
            rows.append({"judge": j, "criterion": c, **human.agreement(recs, lab)})
    cols = ["judge", "criterion", "n", "coverage", "unparsed", "accuracy", "accuracy_all", "auarc", "kappa",
            "label_yes_rate"]
    return pd.DataFrame(rows)[cols]


def token_table(verdicts: pd.DataFrame, ours: str = "retrieval", baseline: str = "chateval") -> pd.DataFrame:
    """Table 15: tokens per pair (all judged criteria summed), mean ± sd, on the pairs both judges judged."""
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
    df = pd.DataFrame(rows)
    if {ours, baseline} <= set(df.judge):
        b = df.set_index("judge")
        df["share of chateval"] = [b.loc[j, "total mean"] / b.loc[baseline, "total mean"] for j in df.judge]
    return df


PAPER_TABLE15 = {"chateval": (66944, 8634), "retrieval": (23758, 3796)}   # mean input, output tokens per pair
PAPER_SHARE = sum(PAPER_TABLE15["retrieval"]) / sum(PAPER_TABLE15["chateval"])


def token_summary(verdicts: pd.DataFrame, tokens: pd.DataFrame, ours: str = "retrieval",
                  baseline: str = "chateval", paper_share: float = PAPER_SHARE) -> str:
    """One sentence on Table 15 from the records: the share, early exits and verdict re-asks."""
    if "share of chateval" not in tokens:
        return f"Both {ours} and {baseline} are needed for the comparison."
    share = float(tokens.set_index("judge").loc[ours, "share of chateval"])
    g = verdicts[verdicts.judge == ours]
    early = int(g.early_exit.fillna(False).astype(bool).sum())
    asks = {j: int(verdicts[verdicts.judge == j].retries.fillna(0).sum()) for j in (ours, baseline)}
    return (f"{ours} spent {share:.0%} of {baseline}'s tokens (paper: {paper_share:.1%}); {early} of {len(g)} "
            f"{ours} discussions exited after round 1; format re-asks: {ours} {asks[ours]}, {baseline} "
            f"{asks[baseline]}.")


def token_breakdown(verdicts: pd.DataFrame, judge: str = "retrieval") -> pd.DataFrame:
    """Tokens per pair by agent/phase (from the ledger tags stored with each verdict)."""
    rows = []
    g = verdicts[verdicts.judge == judge]
    for tb in g.tokens_by:
        for k, (i, o) in (tb or {}).items():
            rows.append({"agent/phase": k, "input": i, "output": o})
    if not rows:
        return pd.DataFrame(columns=["agent/phase", "input per pair", "output per pair"])
    d = pd.DataFrame(rows).groupby("agent/phase").sum() / max(g.pair_id.nunique(), 1)
    return d.rename(columns={"input": "input per pair", "output": "output per pair"}).reset_index()


# -- threshold sweep (Fig. 12) --------------------------------------------------------------------
def threshold_sweep(run_root, judge_model: str, thresholds, n_pairs: int, **params) -> pd.DataFrame:
    """The retrieval judge at each early-exit threshold T on the same human-labelled pairs.

    Every T reuses the cached turns of the others (the first round is the same for all T), so the
    sweep costs little more than the most expensive T; ``calls_made`` shows it.
    """
    from creval.core.ledger import LEDGER
    from creval.models.registry import load_model
    pairs = human_pairs(n_pairs, params.get("seed", 0))   # the same seed picks the pairs and seeds the judges
    lab = {p["pair_id"]: {k.lower(): v for k, v in p["labels"].items()} for p in pairs}
    m, crits = load_model(judge_model), validation_criteria()
    rows = []
    for t in thresholds:
        mark = LEDGER.mark()
        p = {**_jp(params), "threshold": float(t)}
        st = run_judge("retrieval", m, pairs, crits, _root(run_root) / "sweep" / judge_model / f"T{float(t):g}",
                       progress=False, **p)
        recs = [r for r in LEDGER.since(mark) if r.kind == "chat"]
        v = [r for r in st.read("verdicts") if r["pair_id"] in lab]
        a = human.agreement([{**r, "verdict": None if r["unparsed"] else r["verdict"]} for r in v], lab)
        rows.append({"T": float(t), "accuracy": a["accuracy"], "auarc": a["auarc"], "coverage": a["coverage"],
                     "mean rounds": np.mean([r["rounds"] for r in v]),
                     "tokens per pair": sum(r["input_tokens"] + r["output_tokens"] for r in v) / max(len(pairs), 1),
                     "calls made": sum(not r.cached for r in recs), "calls cached": sum(r.cached for r in recs)})
    return pd.DataFrame(rows)


def fig_threshold(sweep: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    for col in ("accuracy", "auarc"):
        fig.add_trace(go.Scatter(x=sweep["T"], y=sweep[col], mode="lines+markers", name=col))
    fig.add_trace(go.Bar(x=sweep["T"], y=sweep["mean rounds"], name="mean rounds", yaxis="y2", opacity=0.3))
    fig.update_layout(title="Retrieval judge: early-exit threshold T", xaxis_title="T",
                      yaxis=dict(title="accuracy / AUARC", range=[0, 1.05]),
                      yaxis2=dict(title="mean rounds", overlaying="y", side="right", range=[0, 2.2],
                                  tickvals=[0, 0.5, 1, 1.5, 2], showgrid=False),
                      legend=dict(orientation="h", y=1.02, yanchor="bottom", x=1, xanchor="right"))
    return fig


# -- transcript viewer ----------------------------------------------------------------------------
def transcript_html(run_dir, pair_id: str | None = None, criterion: str | None = None, max_chars: int = 1500) -> str:
    """One pair's discussion as collapsible HTML: each turn with its retrieved fragments and tokens."""
    rows = read_jsonl(Path(run_dir) / "transcripts.jsonl")
    if not rows:
        return "<p><i>no transcripts in this run</i></p>"
    pick = [r for r in rows if (pair_id is None or r["pair_id"] == pair_id) and
            (criterion is None or r["criterion"] == criterion)] or rows
    r = pick[0]
    esc = lambda s: html.escape(str(s)[:max_chars])  # noqa: E731
    parts = [f"<h4>{esc(r['judge'])} · pair {esc(r['pair_id'])} · criterion <b>{esc(r['criterion'])}</b></h4>",
             f"<details><summary>problem and solution</summary><pre style='white-space:pre-wrap'>"
             f"{esc(r['problem'])}\n\n{esc(r['solution'])}</pre></details>"]
    for t in r["transcript"]:
        head = (f"{t['agent']} · {t['phase']} · round {t['round']} · tokens {t.get('input_tokens', 0)}/"
                f"{t.get('output_tokens', 0)}" + (f" · attempts {t['attempts']}" if t.get("attempts", 1) > 1 else ""))
        frag = ""
        if t.get("retrieved"):
            items = "".join(f"<li><code>{esc(i)}</code> {esc(x)}</li>" for i, x in zip(t["retrieved_ids"], t["retrieved"]))
            frag = f"<details><summary>{len(t['retrieved'])} retrieved fragments</summary><ul>{items}</ul></details>"
        parsed = f"<div><i>parsed: {esc(t['parsed'])}</i></div>" if t.get("parsed") else ""
        parts.append(f"<details><summary>{esc(head)}</summary><div style='margin-left:1em'><div><i>{esc(t['prompt'])}</i></div>"
                     f"{frag}<pre style='white-space:pre-wrap'>{esc(t['reply'])}</pre>{parsed}</div></details>")
    return "\n".join(parts)


def show_transcript(run_dir, pair_id=None, criterion=None):
    from IPython.display import HTML
    return HTML(transcript_html(run_dir, pair_id, criterion))


PAPER_TABLE2 = pd.DataFrame([
    ("zero-shot", np.nan, np.nan), ("few-shot", 0.653, 0.720), ("few-shot w/ CoT", 0.660, 0.725),
    ("ChatEval", 0.767, np.nan), ("ours, GPT-4o-mini", 0.553, 0.635), ("ours, GPT-4o", 0.847, 0.907),
    ("human annotators (mean of 5)", 0.820, np.nan)], columns=["framework", "accuracy", "AUARC"])
"""Paper Table 2 as far as the text is legible (zero-shot row unreadable in our copy: left blank). GPT-4o judges."""
