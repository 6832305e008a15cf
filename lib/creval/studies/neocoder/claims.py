"""Chapter 05's closing "What this shows" (:func:`what_this_shows`): which of NeoCoder's claims (Lu et al., NAACL
2025) this build's records support, contradict, leave inconclusive or cannot test, each from the values
:mod:`creval.studies.neocoder.reading` cites. Pure: records in, a DataFrame out."""
from __future__ import annotations

import pandas as pd

from creval.measures.stats import numbers as num
from creval.measures.stats.verdicts import CONTRADICTS, SUPPORTS, TESTABLE, Verdict, claim_verdict, wilson
from creval.studies.claims import every_row
from creval.studies.links import anchor
from creval.studies.neocoder.instrument import gaps
from creval.studies.neocoder.reading import (
    JUDGES,
    change_words,
    decline_values,
    linked_count,
    live_values,
    paper_pass_pct,
    pass_values,
    span,
    unverifiable,
)
from creval.studies.neocoder.report import PAPER_PASS, PAPER_T3, PAPER_TABLE1, codes_of, creativity, is_sample, table1
from creval.studies.tables import captioned, guard_module


def _exact_check(equal: bool | None, sample: bool) -> Verdict:
    """A count the paper printed against ours on the whole release: a census (equality decides, no interval)."""
    if equal is None or sample:
        return Verdict(TESTABLE, "the bundled sample problems, not the release")
    return Verdict(SUPPORTS if equal else CONTRADICTS, "exact counts on the whole release")


def decline_claims(recs) -> list[tuple[str, str, Verdict]]:
    """The paper's decline of pass@1 with the number of banned techniques, tested on the same problems at the
    first and last state under each judge (:func:`decline_values`): the drop's Newcombe interval must lie
    above 0 to support the paper."""
    d, sample = decline_values(recs), is_sample(recs)
    claim = (f"pass@1 falls as techniques are banned: {paper_pass_pct(0)} at state 0 to {paper_pass_pct(5)} at "
             "state 5 (the paper, Table 3; its two ends are 199 and 97 different problems)")
    if not d:
        return [(claim + ".", "no problem has a scored code at two states", Verdict(TESTABLE, "no paired problems"))]
    out = []
    for j, name in JUDGES.items():
        c = d[j]
        here = (f"on the {d['problems']} problems present at states {d['first']} and {d['last']}, the {name} judge "
                f"passes {change_words(c, d['first'], d['last'])}")
        v = claim_verdict(c["drop"], c["lo"], c["hi"], d["problems"], claimed="+", null=0.0, sample=sample,
                          units="problem")
        out.append((f"{claim}, under the {name} judge.", here, v))
    return out


def harness_claims(recs) -> list[tuple[str, str, Verdict]]:
    """Table 1, the pass@1 row of Table 3, its decline on the same problems, and the released tests."""
    v, u, sample = pass_values(recs), unverifiable(recs), is_sample(recs)
    out = []
    claim = "Problems per state, Table 1 of the paper: " + "/".join(str(n) for n in PAPER_TABLE1.values()) + "."
    ours = "/".join(str(x) for x in table1(recs)["problems (ours)"])
    check = _exact_check(v.get("table1_equal"), sample)
    out.append((claim, f"our state rule on the release gives {ours}" if check.testable
                else "the bundled sample problems, not the release", check))
    claim = "GPT-4's pass@1 per state, Table 3 of the paper: " + ", ".join(PAPER_PASS.values()) + "."
    if not v["states"] or not v["paper"]:
        out.append((claim, "a subset of the problems, or the bundled sample",
                    Verdict(TESTABLE, "a subset of the problems, or the bundled sample")))
        return out
    out.append((claim, "the repo-compatible judge gives " + ", ".join(v["repo"].values()) +
                ("; it copies the paper's harness, blank-line cut and all" if v["equal_to_paper"] else ""),
                _exact_check(v["equal_to_paper"], sample)))
    out += decline_claims(recs)
    lo, hi = wilson(u["unverifiable"], u["problems"])
    out.append(("The released tests verify a correct program (assumed by the paper's pass@1).",
                linked_count(u["unverifiable"], f"{u['unverifiable']} of {u['problems']} problems", "problems", anchor,
                       verifiable=False) + f" ({u['share']}, Wilson 95% "
                f"{num.fmt_interval(lo, hi, 1, 100)}) cannot verify one: flattened inputs, or several valid answers "
                "and one stored", _exact_check(u["unverifiable"] == 0, sample)))
    return out


ONE_INSTRUMENT = ("our static detector on GPT-4's codes and on the humans' Python solutions alike, per problem "
                  "(the stored human labels are another instrument and enter no verdict)")


def _fig5_claim(recs, which: str, states) -> tuple[str, Verdict]:
    """Fig. 5's ``which`` comparison (:func:`instrument.gaps`: human minus GPT-4 for convergent, GPT-4 minus
    human for divergent), one verdict per state, all read with our static detector; the claim must hold at
    every state (:func:`~creval.studies.claims.every_row`)."""
    found, parts = [], []
    for t in states:
        g = gaps(recs, t)[which]
        found.append(claim_verdict(g["value"], g["lo"], g["hi"], g["n"], claimed="+", null=0.0, mc=g["mc"],
                                   sample=is_sample(recs), units="problem"))
        parts.append(f"state {t} {num.fmt_estimate(g['value'], g['lo'], g['hi'], 1, 100)} points on {g['n']} problems")
    return "; ".join(parts), every_row(found)


def creativity_claims(recs) -> list[tuple[str, str, Verdict]]:
    """The creativity columns of Table 3, Fig. 5's humans against GPT-4, and the live run. Fig. 5 is judged
    with one instrument (our static detector reads GPT-4's codes and the humans' Python solutions alike), per
    problem; the stored human labels, another instrument, enter no verdict."""
    out = []
    c = creativity(recs)
    if len(c):
        paper_div = [p[2] for p in PAPER_T3.values()]
        paper_ng = [p[3] for p in PAPER_T3.values()]
        out.append((f"GPT-4's divergent creativity and NeoGauge per state (paper: {span(paper_div)} and "
                    f"{span(paper_ng)}, Table 3).",
                    f"{span(c['divergent %'])} and {span(c['NeoGauge %'])} with our static detector",
                    Verdict(TESTABLE, "GPT-4's own technique detections of these codes were not released")))
    states = sorted({r.state for r in codes_of(recs) if r.state is not None})
    if states:
        here, v = _fig5_claim(recs, "convergent", [t for t in states if t < 3])
        out.append(("Humans have far greater convergent creativity than GPT-4 before state 3 (the paper, Fig. 5).",
                    f"human minus GPT-4 convergent, {ONE_INSTRUMENT}: {here}", v))
        here, v = _fig5_claim(recs, "divergent", states)
        out.append(("GPT-4's divergent creativity is slightly above the humans' lowest level, Eq. 6 (the paper, "
                    "Fig. 5).", f"GPT-4 minus human divergent, {ONE_INSTRUMENT}: {here}", v))
    here = "; ".join(f"{m}: {x['strict_ok']} of " + linked_count(x["rounds"], f"{x['rounds']} rounds", "rounds", anchor,
                                                           model=m) + f" pass the strict judge, {x['follows']} follow "
                     "the constraints" for m, x in live_values(recs).items()) or "no live rounds in these records"
    out.append(("Live denial prompting of the paper's models (GPT-4 and the others of Table 3).", here,
                Verdict(TESTABLE, "the paper's models are not run here")))
    return out


def what_this_shows(recs) -> pd.DataFrame:
    """The closing "What this shows": each claim of the paper (with its figure and source) beside what this
    build's records give, and the one rule's word (:func:`~creval.measures.stats.verdicts.claim_verdict`: supports
    the paper, contradicts the paper, inconclusive here, not testable here) with its reason."""
    rows = [{"the paper's claim": c, "this build": h, "verdict": v.label, "why": v.reason}
            for c, h, v in harness_claims(recs) + creativity_claims(recs)]
    return captioned(pd.DataFrame(rows), "What this shows: the paper's claims (Lu et al., NAACL 2025) against this "
                                          "build's records")


guard_module(globals())
