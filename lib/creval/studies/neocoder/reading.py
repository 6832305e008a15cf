"""Chapter 05's computed sentences (Lu et al., NAACL 2025, NeoCoder): the numbers its reading cites (the claims
they test and the closing "What this shows" are in :mod:`creval.studies.neocoder.claims`). Pure: records in,
dicts or markdown out."""
from __future__ import annotations

from collections import Counter

import pandas as pd

from creval.measures.stats import numbers as num
from creval.measures.stats.correlation import paired_mean_diff_ci
from creval.measures.stats.paired import paired_change
from creval.studies.links import items
from creval.studies.neocoder.records import RoundRecord
from creval.studies.neocoder.report import (
    PAPER_PASS,
    codes_of,
    is_sample,
    state_rows,
    table1,
)
from creval.studies.tables import captioned, guard_module


def linked_count(n: int, text: str, table: str = "codes", link=items, **filters) -> str:
    """``text`` (a count ``n`` of rows) linked to those rows of ``table`` in the browser; plain when ``n`` is 0."""
    return link(text, "neocoder", table, filters) if n else text


def pct(k: int, n: int) -> str:
    """``k / n`` as a percentage rounded once to one decimal ("16.1%")."""
    return num.fmt_number(k / n if n else float("nan"), 1, 100) + "%"


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
    ratio = {t: f"{num.fmt_number(st / rep, 1)}x" if rep else f"{st} passes against none"
             for t, (rep, st, n) in per.items() if t >= 3 and (rep or st)}
    t1 = table1(recs)
    return {"states": len(per), "first": first, "last": last, "paper": paper,
            "table1_equal": None if is_sample(recs) else bool(t1["equal"].all()),
            "equal_to_paper": paper and all(f"{rep}/{n}" == PAPER_PASS[t] for t, (rep, st, n) in per.items()),
            "repo": {t: f"{rep}/{n}" for t, (rep, st, n) in per.items()},
            "strict": {t: f"{st}/{n}" for t, (rep, st, n) in per.items()},
            "n_first": per[first][2], "n_last": per[last][2],
            "repo_first": pct(per[first][0], per[first][2]), "repo_last": pct(per[last][0], per[last][2]),
            "strict_first": pct(per[first][1], per[first][2]), "strict_last": pct(per[last][1], per[last][2]),
            "more": sum(v[1] for v in per.values()) - sum(v[0] for v in per.values()),
            "ratio_later": per_state(ratio) if ratio else "", "sample": is_sample(recs)}


JUDGES = {"repo": "repo-compatible", "strict": "strict"}


def decline_values(recs, subset: str = "all") -> dict:
    """The pass@1 decline on the same problems (a scored code at the first state, 0, and the last, 5 on the
    release, 97 problems), under each judge: :func:`paired_change` (Wilson intervals of both shares, the drop
    with Newcombe's interval, exact McNemar p, the share kept). ``between``: the strict judge's drop minus the
    repo-compatible one's per problem, bootstrapped over problems (the unit both share). Empty under 2 states."""
    codes = codes_of(recs)
    states = sorted({r.state for r in codes if r.state is not None})
    if len(states) < 2:
        return {}
    first, last = states[0], states[-1]
    at = {t: {r.problem_id: r for r in state_rows(codes, t, subset)} for t in (first, last)}
    both = sorted(set(at[first]) & set(at[last]))
    if not both:
        return {}
    out = {"first": first, "last": last, "problems": len(both), "n_first": len(at[first]), "n_last": len(at[last])}
    for j in JUDGES:
        x = [getattr(at[first][p], f"correct_{j}") for p in both]
        y = [getattr(at[last][p], f"correct_{j}") for p in both]
        out[j] = paired_change(x, y)
    drops = {j: [getattr(at[first][p], f"correct_{j}") - getattr(at[last][p], f"correct_{j}") for p in both]
             for j in JUDGES}
    out["between"] = paired_mean_diff_ci(drops["strict"], drops["repo"], n_boot=recs.cfg.n_boot,
                                           seed=recs.cfg.seed)
    return out


def _share(p: float, ci: tuple[float, float]) -> str:
    """A share as "25.8% [18.1, 35.3]" (each number rounded once)."""
    return f"{num.fmt_number(p, 1, 100)}% {num.fmt_interval(*ci, 1, 100)}".strip()


def change_words(c: dict, first: int, last: int) -> str:
    """One judge's paired change in words: both shares with their Wilson intervals, lost and gained problems,
    the drop in points with its interval, the exact McNemar p and the share kept."""
    kept = (f"; it keeps {num.fmt_number(c['kept'], 0, 100)}% of its state-{first} rate" if c["kept"] == c["kept"]
            else "")
    return (f"{_share(c['p_x'], c['ci_x'])} at state {first} and {_share(c['p_y'], c['ci_y'])} at state {last} "
            f"({c['lost']} lost, "
            f"{c['gained']} gained): a drop of {num.fmt_estimate(c['drop'], c['lo'], c['hi'], digits=1, scale=100)} "
            f"points (exact McNemar p {'< 0.0001' if c['p'] < 1e-4 else '= ' + num.fmt_number(c['p'], 4)}){kept}")


def _at(v: dict, end: str) -> str:      # "n at state t", n linked to that state's codes
    return linked_count(v[f"n_{end}"], str(v[f"n_{end}"]), state=v[end]) + f" at state {v[end]}"


HARNESS_MARGIN = 0.05  # drops within 5 points: "the harness does not explain the decline" (holding 0 is not enough)


def decline_md(recs) -> str:
    """The paired reading of Table 3's decline (:func:`decline_values`), said with its problem sets."""
    d = decline_values(recs)
    if not d:
        return "No problem has a scored code at two states: the decline cannot be tested on the same problems."
    b = d["between"]
    gap = ("cannot be compared (too few problems)" if b["verdict"] == "n/a" else
           f"differ by {num.fmt_estimate(b['diff'], b['lo'], b['hi'], digits=1, scale=100)} points (strict minus "
           "repo-compatible, bootstrap over problems)")
    m, inside = num.fmt_number(HARNESS_MARGIN, 0, 100), -HARNESS_MARGIN < b["lo"] and b["hi"] < HARNESS_MARGIN
    same = "" if b["verdict"] != "indistinguishable" else (
        f": the interval lies within {m} points of 0, so the harness does not explain the decline in points" if inside
        else f": the interval holds 0 but reaches past {m} points, so this build cannot say whether the harness "
        "explains part of the decline") + " (see the shares above)"
    s, r = (change_words(d[j], d["first"], d["last"]) for j in ("strict", "repo"))
    ends = f"({_at(d, 'first')}, {_at(d, 'last')})"
    return (f"Table 3 counts each state over its own problems {ends}, so its two ends are different problem sets. On "
            f"the {d['problems']} problems present at both states, the strict judge passes {s}; the repo-compatible "
            f"judge passes {r}. The two drops {gap}{same}.")


def pass_md(recs) -> str:
    """The sentence under Table 3: both judges' pass@1 per state, each state over its own problems."""
    v = pass_values(recs)
    if not v["states"]:
        return "No scored code in these records: Table 3 has no state to read."
    row = "Lu et al. 2025, Table 3: " + ", ".join(PAPER_PASS.values())
    same = ("gives exactly the paper's counts" if v["equal_to_paper"] else "does not give the paper's counts"
            if v["paper"] else "is not comparable with the paper's counts, which cover all problems")
    per = {j: per_state({t: items(k, "neocoder", "codes", {"state": t}) for t, k in v[j].items()}) for j in JUDGES}
    return (f"On these records the repo-compatible judge {same} ({row}). It passes {per['repo']}; the strict "
            f"judge passes {per['strict']}, {abs(v['more'])} {'more' if v['more'] >= 0 else 'fewer'} "
            f"programs over all states. Over each state's own problems ({_at(v, 'first')}, {_at(v, 'last')}) the "
            f"strict judge's pass@1 goes from {v['strict_first']} to "
            f"{v['strict_last']}, against {v['repo_first']} to {v['repo_last']} under the repo-compatible judge; "
            "the paired test on the same problems follows the table.")


def fig2_md(recs) -> str:
    """The sentence under Fig. 2: how the shares of loops, recursion and tuples move after state 0."""
    f = fig2_values(recs)
    if not f:
        return "Too few states for a comparison."
    swap = f["while loop"]["rises"] and not f["for loop"]["rises"]
    solutions = items("GPT-4's solutions at state 0", "neocoder", "codes", {"state": 0})
    return (f"For loops go from {f['for loop']['state0']} of {solutions} to {f['for loop']['later']} "
            f"at later states, while loops from {f['while loop']['state0']} to {f['while loop']['later']}; recursion "
            f"reaches {f['recursion']['max']} and tuples go from {f['tuple']['state0']} to {f['tuple']['later']}"
            + (": GPT-4 mostly swaps one loop for another rather than changing its approach." if swap else "."))


def live_md(recs) -> str:
    """The sentence under the live rounds: per model, rounds, strict passes, constraint following, truncation."""
    return " ".join(f"`{m}` answered " + linked_count(x["rounds"], f"{x['rounds']} rounds", "rounds", model=m)
                    + f" on {x['problems']} problem(s): {x['strict_ok']} passed the strict judge and "
                    + linked_count(x["follows"], f"{x['follows']} followed", "rounds", model=m, follows=True)
                    + " the constraints" + ("; " + linked_count(x["truncated"], f"{x['truncated']} were cut", "rounds",
                                                           model=m, extraction="truncated") + " by the token limit."
                                            if x["truncated"] else ".")
                    for m, x in live_values(recs).items()) or "No live rounds in these records."


def unverifiable(recs) -> dict:
    """How many problems' released tests cannot verify a correct program (``flags``' verifiable column)."""
    df = recs["problems"]
    n = len(df)
    bad = int((~df["verifiable"].astype(bool)).sum()) if n else 0
    return {"problems": n, "unverifiable": bad, "share": pct(bad, n)}


FIG2_TECHNIQUES = ("for loop", "while loop", "recursion", "tuple")


def technique_shares(recs, names=FIG2_TECHNIQUES) -> pd.DataFrame:
    """Fig. 2's numbers: per state, the share (0-1) of its scored solutions using each technique."""
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
        out[n] = {"state0": num.fmt_number(first[n], 1, 100) + "%",
                  "later": (num.fmt_number(lo, 1, 100) + "%" if num.fmt_number(lo, 1, 100) == num.fmt_number(hi, 1, 100)
                            else f"{num.fmt_number(lo, 1, 100)}-{num.fmt_number(hi, 1, 100)}%"),
                  "max": num.fmt_number(t[n].max(), 1, 100) + "%", "rises": bool(later[n].mean() > first[n])}
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
    """Why the codes only the repo-compatible judge passes fail the strict one, from their records."""
    v = repo_only(recs)
    if not v["codes"]:
        return "No code passes the repo-compatible judge and fails the strict one in these records."
    why = ", ".join(f"{n} {k}" for k, n in sorted(v["verdicts"].items(), key=lambda kv: -kv[1]))
    cases = "; ".join(f"{k} of {n} cases" for k, n in v["cases"])
    trunc = (f"{v['truncated']} of them are replies cut by the token limit" if v["truncated"] else
             "none of them is a reply cut by the token limit")
    return (linked_count(v["codes"], f"{v['codes']} code(s)", correct_repo=True, correct_strict=False)
            + " pass the repo-compatible judge and fail the strict one: under the strict judge "
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
    if (v := pd.Series(values, dtype=float).dropna()).empty:
        return "–"
    lo, hi = num.fmt_number(v.min(), 1), num.fmt_number(v.max(), 1)
    return f"{lo}%" if lo == hi else f"{lo}-{hi}%"


def paper_pass_pct(t: int) -> str:
    """The paper's pass@1 at state ``t`` (Table 3) as a percentage."""
    k, n = (int(x) for x in PAPER_PASS[t].split("/"))
    return pct(k, n)


guard_module(globals())
