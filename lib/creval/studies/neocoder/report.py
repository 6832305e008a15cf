"""Chapter 05's tables and figures: records in, a DataFrame (caption in ``attrs``) or a plotly Figure out."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from creval.datasets import neocoder as ds
from creval.datasets.base import provenance
from creval.judges.techniques import STATIC_NAMES, StaticDetector, VOCABULARY
from creval.measures import neogauge as ng
from creval.measures.neocoder_extract import strict_program
from creval.studies.neocoder import run
from creval.studies.neocoder.config import NeoCoderConfig

PAPER_TABLE1 = {0: 199, 1: 199, 2: 198, 3: 194, 4: 176, 5: 97}
PAPER_PASS = {0: "32/199", 1: "23/199", 2: "14/198", 3: "10/194", 4: "4/176", 5: "2/97"}
PAPER_T3 = {  # GPT-4, Table 3 (%): following, convergent, divergent, NeoGauge
    0: (100.0, 16.2, 4.5, 1.0), 1: (75.4, 8.1, 11.9, 1.4), 2: (46.0, 3.6, 11.5, 0.9), 3: (33.0, 1.6, 12.4, 0.5),
    4: (26.1, 0.0, 13.2, 0.0), 5: (14.4, 0.0, 15.3, 0.0)}


def _frame(rows, caption: str) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df.attrs["caption"] = caption
    return df


def data_source(cfg: NeoCoderConfig) -> pd.DataFrame:
    ps, src = run.problems(cfg)
    return _frame([{"data": provenance(ds.DATASET, src, "NeoCoder problems, stored GPT-4 rounds and tests"),
                    "problems": len(ps), "rounds": sum(len(p.rounds) for p in ps),
                    "test cases": sum(len(p.cases) for p in ps)}], "Where the problems come from")


def table1(cfg: NeoCoderConfig) -> pd.DataFrame:
    ps, src = ds.load()
    got = ds.table1(ps)
    rows = [{"state t": t, "problems (ours)": got[t], "problems (paper)": PAPER_TABLE1[t] if not src.is_sample else None,
             "equal": (got[t] == PAPER_TABLE1[t]) if not src.is_sample else None} for t in range(6)]
    return _frame(rows, "Table 1: problems per state (state t = the first round whose banned set has t elements)")


def flags(cfg: NeoCoderConfig) -> pd.DataFrame:
    ps, _ = ds.load()
    rows = [p.flag_row() for p in ps]
    df = pd.DataFrame(rows)
    cols = ["single_test", "yes_no", "padded_output", "multiline_answer", "input_flattened", "needs_checker",
            "no_humans", "verifiable"]
    out = _frame([{"flag": c, "problems": int(df[c].sum()),
                   "examples": ", ".join(df.loc[df[c], "problem_id"].str.replace("neocoder-", "").head(6))}
                  for c in cols], f"Per-problem flags ({len(ps)} problems)")
    return out


def _records(cfg: NeoCoderConfig):
    return run.replay(cfg)


def _state_rows(recs, t: int, subset: str):
    rows = [r for r in recs if r.state == t]
    if subset == "verifiable":
        rows = [r for r in rows if r.verifiable]
    return rows


def table3(cfg: NeoCoderConfig, subset: str = "all") -> pd.DataFrame:
    """pass@1 per state under both judges side by side, with the paper's counts."""
    recs = _records(cfg)
    paper = not ds.load()[1].is_sample and not cfg.neocoder_problems
    rows = []
    for t in range(6):
        rs = _state_rows(recs, t, subset)
        if not rs:
            continue
        rep = sum(r.correct_repo for r in rs)
        st = sum(r.correct_strict for r in rs)
        ci_r = ng.state_metrics([r.correct_repo for r in rs], [1] * len(rs), [0] * len(rs), n_boot=cfg.n_boot,
                                seed=cfg.seed)["pass@1 CI"]
        ci_s = ng.state_metrics([r.correct_strict for r in rs], [1] * len(rs), [0] * len(rs), n_boot=cfg.n_boot,
                                seed=cfg.seed)["pass@1 CI"]
        rows.append({"state t": t, "problems": len(rs),
                     "paper pass@1": PAPER_PASS[t] if paper and subset == "all" else "",
                     "repo-compatible": f"{rep}/{len(rs)}", "repo %": round(100 * rep / len(rs), 1),
                     "repo 95% CI": _ci(ci_r), "strict": f"{st}/{len(rs)}", "strict %": round(100 * st / len(rs), 1),
                     "strict 95% CI": _ci(ci_s),
                     "equal to paper": (f"{rep}/{len(rs)}" == PAPER_PASS[t]) if paper and subset == "all" else None})
    return _frame(rows, f"Table 3, pass@1 of the stored GPT-4 codes under both judges ({subset} problems)")


def _ci(ci) -> str:
    lo, hi = ci
    return "" if lo != lo else f"[{100 * lo:.1f}, {100 * hi:.1f}]"


def verdicts(cfg: NeoCoderConfig) -> pd.DataFrame:
    recs = [r for r in _records(cfg) if r.state is not None]
    rows = []
    for judge in ("repo", "strict"):
        c = Counter(getattr(r, judge)["verdict"] for r in recs)
        rows.append({"judge": judge, **{k: c.get(k, 0) for k in
                                        ("OK", "wrong answer", "runtime error", "time limit", "memory limit",
                                         "output limit", "not parsable", "sandbox error")}})
    both = Counter((r.correct_repo, r.correct_strict) for r in recs)
    rows.append({"judge": "repo OK, strict not", "OK": both.get((True, False), 0)})
    rows.append({"judge": "strict OK, repo not", "OK": both.get((False, True), 0)})
    rows.append({"judge": "salvaged truncated codes (strict)", "OK": sum(r.salvaged for r in recs)})
    out = _frame(rows, "Verdicts of the scored codes (one per problem and state) under each judge")
    num = out.columns.drop("judge")
    out[num] = out[num].fillna(0).astype(int)
    return out


def creativity(cfg: NeoCoderConfig, judge: str = "strict", subset: str = "all") -> pd.DataFrame:
    """Table 3's other columns for the stored GPT-4 codes with OUR detector (GPT-4's own detections of these
    codes were not released): following, convergent, divergent, NeoGauge and the cumulative NeoGauge."""
    recs = _records(cfg)
    rows, ngs = [], []
    for t in range(6):
        rs = _state_rows(recs, t, subset)
        if not rs:
            continue
        m = ng.state_metrics([getattr(r, f"correct_{judge}") for r in rs], [r.follows for r in rs],
                             [r.novelty for r in rs], creative_mask=[r.has_humans for r in rs], n_boot=cfg.n_boot,
                             seed=cfg.seed)
        ngs.append(m["NeoGauge"])
        p = PAPER_T3[t]
        rows.append({"state t": t, "following %": round(100 * m["constraint following"], 1), "paper following": p[0],
                     "convergent %": round(100 * m["convergent"], 1), "paper convergent": p[1],
                     "divergent %": round(100 * m["divergent"], 1), "divergent 95% CI": _ci(m["divergent CI"]),
                     "paper divergent": p[2], "NeoGauge %": round(100 * m["NeoGauge"], 2),
                     "NeoGauge 95% CI": _ci(m["NeoGauge CI"]), "paper NeoGauge": p[3]})
    cum = ng.cumulative(ngs)
    for row, c in zip(rows, cum):
        row["cumulative NeoGauge % (running sum: our definition)"] = round(100 * c, 2)
    return _frame(rows, f"Creativity of the stored GPT-4 codes ({judge} judge, static technique detector, "
                        f"{subset} problems)")


def human_curves(cfg: NeoCoderConfig) -> go.Figure:
    """Fig. 5: human convergent (Eq. 5) per state and human divergent (Eq. 6), beside GPT-4's stored codes."""
    ps, _ = ds.load()
    if cfg.neocoder_problems:
        ps = ps[:cfg.neocoder_problems]
    recs = _records(cfg)
    hconv, gconv, gdiv = [], [], []
    for t in range(6):
        inn = [p for p in ps if t in p.states and p.human_techniques]
        banned = [p.rounds[p.states[t]].banned for p in inn]
        hconv.append(ng.human_convergent([p.human_techniques for p in inn], banned))
        rs = [r for r in _state_rows(recs, t, "all") if r.has_humans]
        gconv.append(ng.convergent([r.follows for r in rs], [r.correct_strict for r in rs]) if rs else float("nan"))
        gdiv.append(ng.divergent([r.novelty for r in rs]) if rs else float("nan"))
    hdiv = ng.human_divergent([p.human_techniques for p in ps if p.human_techniques])
    x = list(range(6))
    fig = go.Figure()
    fig.add_scatter(x=x, y=[100 * v for v in hconv], name="human convergent (Eq. 5)", mode="lines+markers")
    fig.add_scatter(x=x, y=[100 * hdiv] * 6, name="human divergent (Eq. 6)", mode="lines", line={"dash": "dash"})
    fig.add_scatter(x=x, y=[100 * v for v in gconv], name="GPT-4 convergent (strict judge, static detector)",
                    mode="lines+markers")
    fig.add_scatter(x=x, y=[100 * v for v in gdiv], name="GPT-4 divergent (static detector)", mode="lines+markers")
    fig.update_layout(title="Fig. 5: convergent and divergent creativity per state, humans vs GPT-4",
                      xaxis_title="state t (number of banned techniques)", yaxis_title="%")
    return fig


def techniques(cfg: NeoCoderConfig, top: int = 6) -> go.Figure:
    """Fig. 2: share of solutions using each technique per state (static detector) against the human share."""
    recs = _records(cfg)
    ps, _ = ds.load()
    hs = [t for p in ps[:cfg.neocoder_problems or None] for t in p.human_techniques]
    hshare = Counter(x for t in hs for x in set(t))
    names = [n for n, _ in hshare.most_common(top)]
    fig = go.Figure()
    fig.add_bar(x=names, y=[100 * hshare[n] / max(len(hs), 1) for n in names], name="humans (stored GPT-4 labels)")
    for t in range(6):
        rs = [r for r in recs if r.state == t]
        if not rs:
            continue
        c = Counter(x for r in rs for x in set(r.techniques))
        fig.add_bar(x=names, y=[100 * c[n] / len(rs) for n in names], name=f"GPT-4 state {t}")
    fig.update_layout(barmode="group", title="Fig. 2: most used techniques per state vs humans",
                      yaxis_title="% of solutions")
    return fig


def detector_check(cfg: NeoCoderConfig) -> pd.DataFrame:
    """Recall of the static detector on the known positives (each ban drawn at round r was detected by GPT-4 in
    code r-1), per technique, under two definitions of the ambiguous names; and agreement with the stored
    human technique lists on the human Python solutions."""
    ps, _ = ds.load()
    ps = ps[:cfg.neocoder_problems or None]
    positives = []
    for p in ps:
        for r in range(1, len(p.rounds)):
            new = [b for b in p.rounds[r].banned if b not in p.rounds[r - 1].banned]
            for b in new:
                positives.append((b, p.rounds[r - 1].code))
    variants = {"comprehension = for loop": StaticDetector(),
                "strict syntax": StaticDetector(comprehension_is_for_loop=False, ternary_is_if=False)}
    codes = sorted({c for _, c in positives})
    found = {k: dict(zip(codes, v.detect([strict_program(c) or c for c in codes]))) for k, v in variants.items()}
    by_tech: dict[str, list] = {}
    for b, c in positives:
        by_tech.setdefault(b, []).append(c)
    # human agreement: stored labels vs static detection on Python human solutions
    agree = {k: Counter() for k in variants}
    for p in ps:
        for src, labels in zip(p.human_solutions, p.human_techniques):
            dets = {k: v.detect_one(src) for k, v in variants.items()}
            if any(d.status == "not_parsable" for d in dets.values()):
                continue
            for k in variants:
                got = set(dets[k].techniques)
                for n in STATIC_NAMES:
                    agree[k][(n in labels, n in got)] += 1
    rows = []
    for b in sorted(by_tech, key=lambda x: -len(by_tech[x])):
        row = {"technique": b, "known positives": len(by_tech[b]), "static-decidable": b in STATIC_NAMES}
        for k in variants:
            row[f"recall ({k})"] = round(np.mean([b in found[k][c].techniques for c in by_tech[b]]), 2)
        rows.append(row)
    total = {"technique": "ALL", "known positives": len(positives), "static-decidable": None}
    for k in variants:
        total[f"recall ({k})"] = round(np.mean([b in found[k][c].techniques for b, c in positives]), 2)
    rows.insert(0, total)
    for k in variants:
        a = agree[k]
        tp, fn, fp = a[(True, True)], a[(True, False)], a[(False, True)]
        rows.insert(1, {"technique": f"human lists, static names ({k})", "known positives": tp + fn,
                        f"recall ({k})": round(tp / max(tp + fn, 1), 2),
                        "static-decidable": f"precision {tp / max(tp + fp, 1):.2f}"})
    return _frame(rows, "Technique detector check: recall on known positives; agreement with human lists")


def example(cfg: NeoCoderConfig) -> pd.DataFrame:
    """One problem round by round: the new ban, the code's head, both verdicts, techniques, following."""
    recs = _records(cfg)
    pid = ds.problem_id(cfg.neocoder_example) if cfg.neocoder_example else recs[0].problem_id
    ps, _ = ds.load()
    p = next((x for x in ps if x.problem_id == pid), None)
    rows = []
    for r in [r for r in recs if r.problem_id == pid]:
        prev = p.rounds[r.round - 1].banned if r.round else ()
        new = [b for b in r.banned if b not in prev]
        code = p.rounds[r.round].code
        rows.append({"round": r.round, "state": "" if r.state is None else r.state, "new ban": ", ".join(new) or ("-" if r.round else ""),
                     "banned": ", ".join(r.banned), "code (first lines)": "\n".join(code.strip().split("\n")[:6]),
                     "repo verdict": r.repo["verdict"], "strict verdict": r.strict["verdict"],
                     "per-case (strict)": " ".join(c["verdict"][:2] for c in r.strict.get("cases", [])),
                     "techniques": ", ".join(r.techniques), "follows": r.follows, "novel": ", ".join(r.novel)})
    return _frame(rows, f"One problem round by round: {pid}")


def live(cfg: NeoCoderConfig) -> pd.DataFrame:
    recs = run.denial_run(cfg)
    rows = [{"problem": r.problem_id, "round": r.round, "state": r.state, "chosen ban": r.chosen or "",
             "candidates": len(r.candidates), "banned": ", ".join(r.banned), "tokens out": r.output_tokens,
             "finish": r.finish_reason, "extraction": r.extraction, "strict": r.verdict_strict["verdict"],
             "repo": r.verdict_repo["verdict"], "techniques": ", ".join(r.techniques), "follows": r.follows,
             "novelty": round(r.novelty, 2), "NeoGauge term": round(r.neogauge_term, 2), "seconds": r.seconds}
            for r in recs]
    return _frame(rows, f"Live denial prompting with {cfg.neocoder_model}: one row per round")
