"""Chapter 05's tables and figures, pure: the study's records in (a :class:`~creval.studies.contract.Records`
of ``STUDY.records(cfg)``; report settings such as ``n_boot`` come from ``recs.cfg``),
a DataFrame (caption in ``attrs``) or a plotly Figure out. Each function is one notebook cell."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from creval.datasets.neocoder import problem_id
from creval.measures import neogauge as ng
from creval.measures.neocoder.judges import VERDICTS
from creval.measures.stats import numbers as stats_numbers
from creval.measures.stats import verdicts as V
from creval.measures.stats.paired import share_interval
from creval.measures.techniques import STATIC_NAMES
from creval.studies.neocoder.records import CodeRecord, HumanDetectionRecord, PositiveRecord, ProblemRecord, RoundRecord
from creval.studies.tables import captioned, guard_module, public_text

UNDECIDABLE = ("matrix operation", "hashmap", "misc")     # names syntax alone cannot decide
PAPER_TABLE1 = {0: 199, 1: 199, 2: 198, 3: 194, 4: 176, 5: 97}
PAPER_PASS = {0: "32/199", 1: "23/199", 2: "14/198", 3: "10/194", 4: "4/176", 5: "2/97"}
PAPER_T3 = {  # GPT-4, Table 3 (%): following, convergent, divergent, NeoGauge
    0: (100.0, 16.2, 4.5, 1.0), 1: (75.4, 8.1, 11.9, 1.4), 2: (46.0, 3.6, 11.5, 0.9), 3: (33.0, 1.6, 12.4, 0.5),
    4: (26.1, 0.0, 13.2, 0.0), 5: (14.4, 0.0, 15.3, 0.0)}


def _frame(rows, caption: str) -> pd.DataFrame:
    return captioned(pd.DataFrame(rows), caption)


def codes_of(recs) -> list[CodeRecord]:
    return [CodeRecord.from_dict(d) for d in recs.rows("codes")]


def problems_of(recs, only_replayed: bool = False) -> list[ProblemRecord]:
    ps = [ProblemRecord.from_dict(d) for d in recs.rows("problems")]
    return [p for p in ps if p.replayed] if only_replayed else ps


def is_sample(recs) -> bool:
    src = recs.rows("data_source")
    return bool(src and src[0].get("sample"))


def data_source(recs) -> pd.DataFrame:
    rows = [{k: public_text(r[k]) for k in ("data", "problems", "rounds", "test cases")}
            for r in recs.rows("data_source")]
    return _frame(rows, "Where the problems come from")


def table1(recs) -> pd.DataFrame:
    """Problems per state over the whole release (beside the paper's counts on the real data)."""
    ps = problems_of(recs)
    got = {t: sum(len(p.state_rounds) > t for p in ps) for t in range(6)}
    sample = is_sample(recs)
    rows = [{"state t": t, "problems (ours)": got[t], "problems (paper)": PAPER_TABLE1[t] if not sample else None,
             "equal": (got[t] == PAPER_TABLE1[t]) if not sample else None} for t in range(6)]
    return _frame(rows, "Table 1: problems per state (state t = the first round whose banned set has t elements)")


def isolation(recs) -> pd.DataFrame:
    """How every judged program of the run was isolated: one row per (where, judge, isolation, memory scope,
    network isolated), with how many verdicts got it and how many were load-dependent timeouts. Verdicts
    stored before the sandbox recorded ``isolation`` read as ``fallback``."""
    count: Counter = Counter()
    load: Counter = Counter()
    rows_of = [("replayed codes", "repo", d.get("repo") or {}) for d in recs.rows("codes")]
    rows_of += [("replayed codes", "strict", d.get("strict") or {}) for d in recs.rows("codes")]
    for d in recs.rows("rounds"):
        rows_of += [("live rounds", "repo", d.get("verdict_repo") or {}),
                    ("live rounds", "strict", d.get("verdict_strict") or {})]
    for where, judge, v in rows_of:
        if v.get("verdict") in (None, "not parsable"):
            key = (where, judge, "not run", "-", "-")
        else:
            key = (where, judge, v.get("isolation", "fallback"), v.get("memory_scope", "per-process"),
                   bool(v.get("network_isolated", False)))
        count[key] += 1
        load[key] += bool(v.get("load_dependent"))
    rows = [{"records": k[0], "judge": k[1], "isolation": k[2], "memory limit": k[3], "network isolated": k[4],
             "verdicts": n, "load-dependent timeouts": load[k]} for k, n in sorted(count.items(), key=str)]
    return _frame(rows, "Sandbox isolation of every verdict (bwrap: the bubblewrap jail; fallback: the unshare "
                        "runner; memory limit cgroup: one limit for the program and its children)")


def flags(recs) -> pd.DataFrame:
    df = recs.written("problems")
    cols = ["single_test", "yes_no", "padded_output", "multiline_answer", "input_flattened", "needs_checker",
            "no_humans", "verifiable"]
    return _frame([{"flag": c, "problems": int(df[c].sum()),
                    "examples": ", ".join(df.loc[df[c], "problem_id"].str.replace("neocoder-", "").head(6))}
                   for c in cols], f"Per-problem flags ({len(df)} problems)")


def state_rows(codes, t: int, subset: str):
    rows = [r for r in codes if r.state == t]
    if subset == "verifiable":
        rows = [r for r in rows if r.verifiable]
    return rows


def table3(recs, subset: str = "all") -> pd.DataFrame:
    """pass@1 per state under both judges side by side, with the paper's counts; each proportion with its
    Wilson interval (a percentile bootstrap gives 2 of 97 as [0.0, 5.2], Wilson [0.6, 7.2]). Each state has
    its own problems (all 199 at state 0, 97 at state 5 on the release): the rows are not paired."""
    codes = codes_of(recs)
    paper = not is_sample(recs) and not recs.cfg.neocoder_problems
    rows = []
    for t in range(6):
        rs = state_rows(codes, t, subset)
        if not rs:
            continue
        rep = sum(r.correct_repo for r in rs)
        st = sum(r.correct_strict for r in rs)
        rows.append({"state t": t, "problems": len(rs),
                     "paper pass@1": PAPER_PASS[t] if paper and subset == "all" else "",
                     "repo-compatible": f"{rep}/{len(rs)}", "repo %": round(100 * rep / len(rs), 1),
                     "repo 95% CI": ci_text(V.wilson(rep, len(rs))), "strict": f"{st}/{len(rs)}",
                     "strict %": round(100 * st / len(rs), 1),
                     "strict 95% CI": ci_text(V.wilson(st, len(rs))),
                     "equal to paper": (f"{rep}/{len(rs)}" == PAPER_PASS[t]) if paper and subset == "all" else None})
    return _frame(rows, f"Table 3, pass@1 of the stored GPT-4 codes under both judges ({subset} problems; each "
                        "state over its own problems, Wilson 95% intervals)")


def ci_text(ci) -> str:
    return stats_numbers.fmt_interval(*ci, digits=1, scale=100)


def verdicts(recs) -> pd.DataFrame:
    codes = [r for r in codes_of(recs) if r.state is not None]
    rows = []
    for judge in ("repo", "strict"):
        c = Counter(getattr(r, judge)["verdict"] for r in codes)
        rows.append({"judge": judge, **{k: c.get(k, 0) for k in VERDICTS}})
    both = Counter((r.correct_repo, r.correct_strict) for r in codes)
    rows.append({"judge": "repo OK, strict not", "OK": both.get((True, False), 0)})
    rows.append({"judge": "strict OK, repo not", "OK": both.get((False, True), 0)})
    salvaged = Counter(r.strict["verdict"] for r in codes if r.salvaged)
    rows.append({"judge": "salvaged truncated codes (strict)", **{k: salvaged.get(k, 0) for k in VERDICTS}})
    out = _frame(rows, "Verdicts of the scored codes (one per problem and state) under each judge; the last row "
                       "splits the truncated replies the strict judge salvaged (ran their parsable prefix) by the "
                       "verdict they got")
    num = out.columns.drop("judge")
    out[num] = out[num].fillna(0).astype(int)
    return out


def creativity(recs, judge: str = "strict", subset: str = "all") -> pd.DataFrame:
    """Table 3's other columns for the stored GPT-4 codes with OUR detector (GPT-4's own detections of these
    codes were not released): following, convergent, divergent, NeoGauge and the cumulative NeoGauge."""
    cfg = recs.cfg
    codes = codes_of(recs)
    rows, ngs = [], []
    for t in range(6):
        rs = state_rows(codes, t, subset)
        if not rs:
            continue
        m = ng.state_metrics([getattr(r, f"correct_{judge}") for r in rs], [r.follows for r in rs],
                             [r.novelty for r in rs], creative_mask=[r.has_humans for r in rs], ci=False)
        mine = [r for r in rs if r.has_humans]
        conv = [r.follows * getattr(r, f"correct_{judge}") for r in mine]
        ngs.append(m["NeoGauge"])
        p = PAPER_T3[t]
        rows.append({"state t": t, "problems": m["n"], "with human solutions": m["n_creative"],
                     "following %": round(100 * m["constraint following"], 1),
                     "following 95% CI": ci_text(share_interval([r.follows for r in rs])), "paper following": p[0],
                     "convergent %": round(100 * m["convergent"], 1),
                     "convergent 95% CI": ci_text(share_interval(conv)),
                     "paper convergent": p[1], "divergent %": round(100 * m["divergent"], 1),
                     "divergent 95% CI": ci_text(share_interval([r.novelty for r in mine])),
                     "paper divergent": p[2], "NeoGauge %": round(100 * m["NeoGauge"], 2),
                     "NeoGauge 95% CI": ci_text(share_interval([c * r.novelty for c, r in zip(conv, mine)])),
                     "paper NeoGauge": p[3]})
    cum = ng.cumulative(ngs)
    for row, c in zip(rows, cum):
        row["cumulative NeoGauge % (running sum: our definition)"] = round(100 * c, 2)
    detector = codes[0].detector if codes else cfg.neocoder_detector
    return _frame(rows, f"Creativity of the stored GPT-4 codes ({judge} judge, {detector} technique detector, "
                        f"{subset} problems). Following is over all the state's problems, like pass@1; convergent, "
                        "divergent and NeoGauge only over those with human solutions (the paper's rule), so a "
                        "state's convergent and pass@1 have different denominators ('problems' and 'with human "
                        "solutions'). Intervals: Wilson's on the per-problem shares (conservative for shares, "
                        "never [0, 0])")


def curve_values(recs) -> pd.DataFrame:
    """The numbers of Fig. 5, one row per state: human convergent (Eq. 5), human divergent (Eq. 6, one value
    for all states), and GPT-4's convergent (strict judge) and divergent on the problems with human solutions,
    each a share (0-1)."""
    ps = problems_of(recs, only_replayed=True)
    codes = codes_of(recs)
    hdiv = ng.human_divergent([p.human_techniques for p in ps if p.human_techniques])
    rows = []
    for t in range(6):
        inn = [p for p in ps if t < len(p.state_rounds) and p.human_techniques]
        rs = [r for r in state_rows(codes, t, "all") if r.has_humans]
        rows.append({"state t": t,
                     "human convergent": ng.human_convergent([p.human_techniques for p in inn],
                                                             [p.state_banned[t] for p in inn]),
                     "human divergent": hdiv,
                     "GPT-4 convergent": ng.convergent([r.follows for r in rs], [r.correct_strict for r in rs])
                     if rs else float("nan"),
                     "GPT-4 divergent": ng.divergent([r.novelty for r in rs]) if rs else float("nan")})
    return captioned(pd.DataFrame(rows), "Fig. 5's numbers: convergent and divergent creativity (shares) per state, "
                                          "humans vs GPT-4")


def human_curves(recs) -> go.Figure:
    """Fig. 5: human convergent (Eq. 5) per state and human divergent (Eq. 6), beside GPT-4's stored codes."""
    c = curve_values(recs)
    x = list(c["state t"])
    fig = go.Figure()
    fig.add_scatter(x=x, y=100 * c["human convergent"], name="human convergent (Eq. 5)", mode="lines+markers")
    fig.add_scatter(x=x, y=100 * c["human divergent"], name="human divergent (Eq. 6)", mode="lines",
                    line={"dash": "dash"})
    fig.add_scatter(x=x, y=100 * c["GPT-4 convergent"], name="GPT-4 convergent (strict judge, static detector)",
                    mode="lines+markers")
    fig.add_scatter(x=x, y=100 * c["GPT-4 divergent"], name="GPT-4 divergent (static detector)", mode="lines+markers")
    fig.update_layout(title="Fig. 5: convergent and divergent creativity per state, humans vs GPT-4",
                      xaxis_title="state t (number of banned techniques)", yaxis_title="%")
    return fig


def techniques(recs, top: int = 6) -> go.Figure:
    """Fig. 2: share of solutions using each technique per state (static detector) against the human share."""
    codes = codes_of(recs)
    hs = [t for p in problems_of(recs, only_replayed=True) for t in p.human_techniques]
    hshare = Counter(x for t in hs for x in set(t))
    names = [n for n, _ in hshare.most_common(top)]
    fig = go.Figure()
    fig.add_bar(x=names, y=[100 * hshare[n] / max(len(hs), 1) for n in names], name="humans (stored GPT-4 labels)")
    for t in range(6):
        rs = [r for r in codes if r.state == t]
        if not rs:
            continue
        c = Counter(x for r in rs for x in set(r.techniques))
        fig.add_bar(x=names, y=[100 * c[n] / len(rs) for n in names], name=f"GPT-4 state {t}")
    fig.update_layout(barmode="group", title="Fig. 2: most used techniques per state vs humans",
                      xaxis_title="technique", yaxis_title="% of solutions")
    return fig


def detector_check(recs) -> pd.DataFrame:
    """Recall of the static detector on the known positives (each ban drawn at round r was detected by GPT-4 in
    code r-1), per technique, under two definitions of the ambiguous names; and agreement with the stored
    human technique lists on the human Python solutions."""
    positives = [PositiveRecord.from_dict(d) for d in recs.rows("known_positives")]
    humans = [HumanDetectionRecord.from_dict(d) for d in recs.rows("human_detections")]
    variants = list((positives or humans)[0].found) if positives or humans else []
    by_tech: dict[str, list] = {}
    for x in positives:
        by_tech.setdefault(x.technique, []).append(x.found)
    # human agreement: stored labels vs static detection on Python human solutions
    agree = {k: Counter() for k in variants}
    for h in humans:
        for k in variants:
            got = set(h.found[k])
            for n in STATIC_NAMES:
                agree[k][(n in h.labels, n in got)] += 1
    rows = []
    for b in sorted(by_tech, key=lambda x: -len(by_tech[x])):
        row = {"technique": b, "known positives": len(by_tech[b]), "static-decidable": b in STATIC_NAMES}
        for k in variants:
            row[f"recall ({k})"] = round(np.mean([f[k] for f in by_tech[b]]), 2)
        rows.append(row)
    total = {"technique": "ALL", "known positives": len(positives), "static-decidable": None}
    for k in variants:
        total[f"recall ({k})"] = round(np.mean([x.found[k] for x in positives]), 2)
    rows.insert(0, total)
    decidable = [x for x in positives if x.technique in STATIC_NAMES and x.technique not in UNDECIDABLE]
    dec = {"technique": "syntax-decidable (" + ", ".join(sorted(UNDECIDABLE)) + " left out)",
           "known positives": len(decidable), "static-decidable": True}
    for k in variants:
        dec[f"recall ({k})"] = round(np.mean([x.found[k] for x in decidable]), 2) if decidable else None
    rows.insert(1, dec)
    for k in variants:
        a = agree[k]
        tp, fn, fp = a[(True, True)], a[(True, False)], a[(False, True)]
        rows.insert(1, {"technique": f"human lists, static names ({k})", "known positives": tp + fn,
                        f"recall ({k})": round(tp / max(tp + fn, 1), 2),
                        "static-decidable": f"precision {tp / max(tp + fp, 1):.2f}"})
    return _frame(rows, "Technique detector check: recall on known positives; agreement with human lists")


def example(recs) -> pd.DataFrame:
    """One problem round by round: the new ban, the code's head, both verdicts, techniques, following."""
    cfg = recs.cfg
    codes = codes_of(recs)
    pid = problem_id(cfg.neocoder_example) if cfg.neocoder_example else (codes[0].problem_id if codes else "")
    mine = {r.round: r for r in codes if r.problem_id == pid}
    rows = []
    for r in mine.values():
        prev = mine[r.round - 1].banned if r.round else ()
        new = [b for b in r.banned if b not in prev]
        rows.append({"round": r.round, "state": "" if r.state is None else r.state,
                     "new ban": ", ".join(new) or ("-" if r.round else ""),
                     "banned": ", ".join(r.banned), "code (first lines)": "\n".join(r.code.strip().split("\n")[:6]),
                     "repo verdict": r.repo["verdict"], "strict verdict": r.strict["verdict"],
                     "per-case (strict)": " ".join(c["verdict"][:2] for c in r.strict.get("cases", [])),
                     "techniques": ", ".join(r.techniques), "follows": r.follows, "novel": ", ".join(r.novel)})
    return _frame(rows, f"One problem round by round: {pid}")


def live(recs) -> pd.DataFrame:
    """The live denial-prompting rounds of every model under test: one row per round."""
    rounds = [RoundRecord.from_dict(d) for d in recs.rows("rounds")]
    models = list(dict.fromkeys(r.model for r in rounds)) or list(recs.cfg.tested)
    several = len(models) > 1
    rows = [{**({"model": r.model} if several else {}),
             "problem": r.problem_id, "round": r.round, "state": r.state, "chosen ban": r.chosen or "",
             "candidates": len(r.candidates), "banned": ", ".join(r.banned), "tokens out": r.output_tokens,
             "finish": r.finish_reason, "extraction": r.extraction, "strict": r.verdict_strict["verdict"],
             "repo": r.verdict_repo["verdict"], "techniques": ", ".join(r.techniques), "follows": r.follows,
             "novelty": round(r.novelty, 2), "NeoGauge term": round(r.neogauge_term, 2), "seconds": r.seconds}
            for r in rounds]
    mode = "denial prompting" if all(r.mode == "thread" for r in rounds) else "benchmarking (fresh conversations)"
    return _frame(rows, f"Live {mode} with {', '.join(models)}: one row per round")


guard_module(globals())
