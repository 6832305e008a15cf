"""Chapter 05's computed sentences (Lu et al., NAACL 2025, NeoCoder): the numbers its reading cites
(:func:`pass_values`, :func:`unverifiable`, :func:`fig2_values`, :func:`live_values`) and the closing "What this
shows" (:func:`what_this_shows`): which of the paper's claims this build reproduces, which not, which it cannot
test. Pure: records in, dicts or a DataFrame out; every number rounded once (``stats.fmt_number``)."""
from __future__ import annotations

from collections import Counter

import pandas as pd

from creval.measures import stats as S
from creval.studies.claims import TESTABLE, verdict
from creval.studies.neocoder.records import RoundRecord
from creval.studies.neocoder.report import (
    PAPER_PASS,
    PAPER_T3,
    PAPER_TABLE1,
    codes_of,
    creativity,
    curve_values,
    is_sample,
    state_rows,
    table1,
)
from creval.studies.tables import captioned, guard_module

REPRODUCED, NOT_REPRODUCED, UNTESTABLE = "reproduced", "not reproduced", TESTABLE    # the one rule's words


def pct(k: int, n: int) -> str:
    """``k / n`` as a percentage rounded once to one decimal ("16.1%")."""
    return S.fmt_number(k / n if n else float("nan"), 1, 100) + "%"


def per_state(values: dict) -> str:
    """"a, b and c at states 3-5" style list of per-state values."""
    ts = sorted(values)
    if not ts:
        return "no state"
    items = [values[t] for t in ts]
    listed = items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
    span = f"state {ts[0]}" if len(ts) == 1 else f"states {ts[0]}-{ts[-1]}"
    return f"{listed} at {span}"


def pass_values(recs, subset: str = "all") -> dict:
    """The numbers the chapter's sentences about Table 3 use, from the records: per-state pass@1 under both
    judges (``repo``/``strict``: "k/n"), their percentages at the first and last state, whether the repo
    judge equals the paper in every state, and the strict/repo ratio at the later states (3 on)."""
    codes = codes_of(recs)
    per = {}
    for t in range(6):
        rs = state_rows(codes, t, subset)
        if rs:
            per[t] = (sum(r.correct_repo for r in rs), sum(r.correct_strict for r in rs), len(rs))
    if not per:
        return {"states": 0}
    first, last = min(per), max(per)
    paper = not is_sample(recs) and not recs.cfg.neocoder_problems
    ratio = {t: f"{S.fmt_number(st / rep, 1)}x" if rep else f"{st} passes against none"
             for t, (rep, st, n) in per.items() if t >= 3 and (rep or st)}
    flatter = None
    if per[first][0] and per[first][1] and last != first:
        keep_repo = per[last][0] / per[last][2] / (per[first][0] / per[first][2])
        keep_strict = per[last][1] / per[last][2] / (per[first][1] / per[first][2])
        flatter = keep_strict > keep_repo
    t1 = table1(recs)
    return {"states": len(per), "first": first, "last": last, "paper": paper,
            "table1_equal": None if is_sample(recs) else bool(t1["equal"].all()),
            "equal_to_paper": paper and all(f"{rep}/{n}" == PAPER_PASS[t] for t, (rep, st, n) in per.items()),
            "repo": {t: f"{rep}/{n}" for t, (rep, st, n) in per.items()},
            "strict": {t: f"{st}/{n}" for t, (rep, st, n) in per.items()},
            "repo_first": pct(per[first][0], per[first][2]), "repo_last": pct(per[last][0], per[last][2]),
            "strict_first": pct(per[first][1], per[first][2]), "strict_last": pct(per[last][1], per[last][2]),
            "more": sum(v[1] for v in per.values()) - sum(v[0] for v in per.values()),
            "ratio_later": per_state(ratio) if ratio else "", "flatter": flatter, "sample": is_sample(recs)}


DECLINE = {True: "The strict judge's decline is the flatter one: much of the paper's steep drop is the harness "
                 "rejecting correct programs (a blank line inside `solve()`, a read-all input, a count line fed to a "
                 "single-test problem), not GPT-4 losing the ability to solve the problem under constraints.",
           False: "The strict judge does not flatten the decline on these records.",
           None: "Too few programs pass to compare the two declines."}


def pass_md(recs) -> str:
    """The sentence under Table 3: both judges' pass@1 per state and their declines, from :func:`pass_values`."""
    v = pass_values(recs)
    if not v["states"]:
        return "No scored code in these records: Table 3 has no state to read."
    row = "Lu et al. 2025, Table 3: " + ", ".join(PAPER_PASS.values())
    same = ("gives exactly the paper's counts" if v["equal_to_paper"] else "does not give the paper's counts"
            if v["paper"] else "is not comparable with the paper's counts, which cover all problems")
    return (f"On these records the repo-compatible judge {same} ({row}). It passes {per_state(v['repo'])}; the strict "
            f"judge passes {per_state(v['strict'])}, {abs(v['more'])} {'more' if v['more'] >= 0 else 'fewer'} "
            f"programs over all states; its pass@1 goes from {v['strict_first']} at state {v['first']} to "
            f"{v['strict_last']} at state {v['last']}, against {v['repo_first']} to {v['repo_last']} under the "
            f"repo-compatible judge. {DECLINE[v['flatter']]}")


def fig2_md(recs) -> str:
    """The sentence under Fig. 2: how the shares of loops, recursion and tuples move after state 0."""
    f = fig2_values(recs)
    if not f:
        return "Too few states for a comparison."
    swap = f["while loop"]["rises"] and not f["for loop"]["rises"]
    return (f"For loops go from {f['for loop']['state0']} of GPT-4's solutions at state 0 to {f['for loop']['later']} "
            f"at later states, while loops from {f['while loop']['state0']} to {f['while loop']['later']}; recursion "
            f"reaches {f['recursion']['max']} and tuples go from {f['tuple']['state0']} to {f['tuple']['later']}"
            + (": GPT-4 mostly swaps one loop for another rather than changing its approach." if swap else "."))


def live_md(recs) -> str:
    """The sentence under the live rounds: per model, rounds, strict passes, constraint following, truncation."""
    return " ".join(f"`{m}` answered {x['rounds']} rounds on {x['problems']} problem(s): {x['strict_ok']} passed the "
                    f"strict judge and {x['follows']} followed the constraints"
                    + (f"; {x['truncated']} were cut by the token limit." if x["truncated"] else ".")
                    for m, x in live_values(recs).items()) or "No live rounds in these records."


def unverifiable(recs) -> dict:
    """How many problems' released tests cannot verify a correct program (``flags``' verifiable column)."""
    df = recs["problems"]
    n = len(df)
    bad = int((~df["verifiable"].astype(bool)).sum()) if n else 0
    return {"problems": n, "unverifiable": bad, "share": pct(bad, n)}


FIG2_TECHNIQUES = ("for loop", "while loop", "recursion", "tuple")


def technique_shares(recs, names=FIG2_TECHNIQUES) -> pd.DataFrame:
    """Share (0-1) of the scored solutions of each state that use each technique (static detector): the
    numbers of Fig. 2, one row per state."""
    codes = codes_of(recs)
    rows = []
    for t in range(6):
        rs = [r for r in codes if r.state == t]
        if rs:
            c = Counter(x for r in rs for x in set(r.techniques))
            rows.append({"state t": t, "solutions": len(rs), **{n: c[n] / len(rs) for n in names}})
    return captioned(pd.DataFrame(rows), "Fig. 2's numbers: share of each state's solutions using each technique")


def fig2_values(recs) -> dict:
    """Per technique of :data:`FIG2_TECHNIQUES`: its share at state 0 and the range over the later states,
    each printed once-rounded (``"99.5%"``, ``"58.3-73.1%"``)."""
    t = technique_shares(recs)
    if t.empty or 0 not in set(t["state t"]) or len(t) < 2:
        return {}
    first, later = t[t["state t"] == 0].iloc[0], t[t["state t"] > 0]
    out = {}
    for n in FIG2_TECHNIQUES:
        lo, hi = later[n].min(), later[n].max()
        out[n] = {"state0": S.fmt_number(first[n], 1, 100) + "%",
                  "later": (S.fmt_number(lo, 1, 100) + "%" if S.fmt_number(lo, 1, 100) == S.fmt_number(hi, 1, 100)
                            else f"{S.fmt_number(lo, 1, 100)}-{S.fmt_number(hi, 1, 100)}%"),
                  "max": S.fmt_number(t[n].max(), 1, 100) + "%", "rises": bool(later[n].mean() > first[n])}
    return out


def repo_only(recs) -> dict:
    """The codes the repo-compatible judge passes and the strict judge does not, read from their records: how
    many, the strict verdicts they got, how many of them were truncated replies (salvaged, or not parsable), and
    for the wrong answers how many of the cases they passed."""
    codes = [r for r in codes_of(recs) if r.state is not None and r.correct_repo and not r.correct_strict]
    verdicts = Counter(r.strict["verdict"] for r in codes)
    truncated = sum(r.salvaged or r.strict["verdict"] == "not parsable" for r in codes)
    cases = [(sum(c.get("verdict") == "OK" for c in r.strict.get("cases", [])), len(r.strict.get("cases", [])))
             for r in codes if r.strict["verdict"] == "wrong answer"]
    return {"codes": len(codes), "verdicts": dict(verdicts), "truncated": truncated, "cases": cases}


def repo_only_md(recs) -> str:
    """The sentence under the verdicts table: why the codes that only the repo-compatible judge passes fail the
    strict one, from their records (no explanation is assumed)."""
    v = repo_only(recs)
    if not v["codes"]:
        return "No code passes the repo-compatible judge and fails the strict one in these records."
    why = ", ".join(f"{n} {k}" for k, n in sorted(v["verdicts"].items(), key=lambda kv: -kv[1]))
    cases = "; ".join(f"{k} of {n} cases" for k, n in v["cases"])
    trunc = (f"{v['truncated']} of them are replies cut by the token limit" if v["truncated"] else
             "none of them is a reply cut by the token limit")
    return (f"{v['codes']} code(s) pass the repo-compatible judge and fail the strict one: under the strict judge "
            f"{why}" + (f" (the wrong answers pass {cases})" if cases else "") + f"; {trunc}. The repo harness "
            "compares outputs pairwise with `zip`, so an output that is a prefix of the expected one passes it.")


def live_values(recs) -> dict:
    """The live denial-prompting rounds per model under test: rounds, how many passed the strict judge,
    how many followed the constraints, and how many replies were cut by the token limit."""
    rounds = [RoundRecord.from_dict(d) for d in recs.rows("rounds")]
    out = {}
    for m in dict.fromkeys(r.model for r in rounds):
        rs = [r for r in rounds if r.model == m]
        out[m] = {"rounds": len(rs), "problems": len({r.problem_id for r in rs}),
                  "strict_ok": sum(r.verdict_strict.get("verdict") == "OK" for r in rs),
                  "follows": sum(bool(r.follows) for r in rs),
                  "truncated": sum(r.extraction == "truncated" for r in rs)}
    return out


def span(values) -> str:
    """The range of a column of percentages as "a-b%" (each end rounded once)."""
    v = pd.Series(values, dtype=float).dropna()
    if v.empty:
        return "–"
    lo, hi = S.fmt_number(v.min(), 1), S.fmt_number(v.max(), 1)
    return f"{lo}%" if lo == hi else f"{lo}-{hi}%"


def paper_pass_pct(t: int) -> str:
    """The paper's pass@1 at state ``t`` (Table 3) as a percentage."""
    k, n = (int(x) for x in PAPER_PASS[t].split("/"))
    return pct(k, n)


def harness_claims(recs) -> list[tuple[str, str, str]]:
    """Table 1, the pass@1 row of Table 3, and what its decline measures."""
    v, u = pass_values(recs), unverifiable(recs)
    out = []
    claim = "Problems per state, Table 1 of the paper: " + "/".join(str(n) for n in PAPER_TABLE1.values()) + "."
    status = {True: REPRODUCED, False: NOT_REPRODUCED, None: UNTESTABLE}[v.get("table1_equal")]
    ours = "/".join(str(x) for x in table1(recs)["problems (ours)"])
    out.append((claim, f"our state rule on the release gives {ours}" if status != UNTESTABLE
                else "the bundled sample problems, not the release", status))
    claim = "GPT-4's pass@1 per state, Table 3 of the paper: " + ", ".join(PAPER_PASS.values()) + "."
    if not v["states"] or not v["paper"]:
        out.append((claim, "a subset of the problems, or the bundled sample", UNTESTABLE))
        return out
    out.append((claim, "the repo-compatible judge gives " + ", ".join(v["repo"].values()) +
                ("; it copies the paper's harness, blank-line cut and all" if v["equal_to_paper"] else ""),
                REPRODUCED if v["equal_to_paper"] else NOT_REPRODUCED))
    claim = (f"pass@1 falls from {paper_pass_pct(0)} at state 0 to {paper_pass_pct(5)} at state 5 as techniques are "
             "banned (the paper, Table 3), a loss of GPT-4's ability to solve under constraints.")
    here = (f"the strict judge, which runs each whole program on the real input, goes from {v['strict_first']} to "
            f"{v['strict_last']}" + (": the decline is flatter, much of the paper's is its harness" if v["flatter"]
                                     else ""))
    out.append((claim, here, NOT_REPRODUCED if v["flatter"] else REPRODUCED if v["flatter"] is False else UNTESTABLE))
    out.append(("The released tests verify a correct program (assumed by the paper's pass@1).",
                f"{u['unverifiable']} of {u['problems']} problems ({u['share']}) cannot verify one: flattened "
                "inputs, or several valid answers and one stored", NOT_REPRODUCED if u["unverifiable"] else REPRODUCED))
    return out


def creativity_claims(recs) -> list[tuple[str, str, str]]:
    """The creativity columns of Table 3, Fig. 5's humans against GPT-4, and the live run."""
    out = []
    c = creativity(recs)
    if len(c):
        paper_div = [p[2] for p in PAPER_T3.values()]
        paper_ng = [p[3] for p in PAPER_T3.values()]
        out.append((f"GPT-4's divergent creativity and NeoGauge per state (paper: {span(paper_div)} and "
                    f"{span(paper_ng)}, Table 3).",
                    f"{span(c['divergent %'])} and {span(c['NeoGauge %'])} with our static detector; GPT-4's own "
                    "technique detections were not released, so these are estimates, not a reproduction", UNTESTABLE))
    cv = curve_values(recs).dropna()
    early = cv[cv["state t"] < 3]
    if len(early):
        conv = int((early["human convergent"] > early["GPT-4 convergent"]).sum())
        here = (f"human convergent above GPT-4's at {conv} of {len(early)} states before state 3 ("
                + ", ".join(f"{S.fmt_number(h, 1, 100)}% vs {S.fmt_number(g, 1, 100)}%"
                            for h, g in zip(early["human convergent"], early["GPT-4 convergent"])) + ")")
        out.append(("Humans have far greater convergent creativity than GPT-4 before state 3 (the paper, Fig. 5).",
                    here, REPRODUCED if conv == len(early) else NOT_REPRODUCED))
    if len(cv):
        div = int((cv["GPT-4 divergent"] > cv["human divergent"]).sum())
        out.append(("GPT-4's divergent creativity is slightly above the humans' lowest level, Eq. 6 (the paper, "
                    "Fig. 5).", f"GPT-4's above at {div} of {len(cv)} states: {span(100 * cv['GPT-4 divergent'])} "
                    f"against {S.fmt_number(cv['human divergent'].iloc[0], 1, 100)}% (human techniques: the stored "
                    "GPT-4 labels; GPT-4's: our static detector)", REPRODUCED if div == len(cv) else NOT_REPRODUCED))
    lv = live_values(recs)
    here = "; ".join(f"{m}: {x['strict_ok']} of {x['rounds']} rounds pass the strict judge, {x['follows']} follow "
                     "the constraints" for m, x in lv.items()) or "no live rounds in these records"
    out.append(("Live denial prompting of the paper's models (GPT-4 and the others of Table 3).",
                here + "; the paper's models are not run here", UNTESTABLE))
    return out


def what_this_shows(recs) -> pd.DataFrame:
    """The closing "What this shows": each claim of the paper (with its figure and source) beside what this
    build's records give, and whether it is reproduced, not reproduced, or cannot be tested here."""
    n, sample = unverifiable(recs)["problems"], is_sample(recs)
    rows = [{"the paper's claim": c, "this build": h,
             "verdict": s if s == UNTESTABLE else verdict(s == REPRODUCED, n, sample=sample, min_n=1)}
            for c, h, s in harness_claims(recs) + creativity_claims(recs)]
    return captioned(pd.DataFrame(rows), "What this shows: the paper's claims (Lu et al., NAACL 2025) against this "
                                          "build's records")


guard_module(globals())
