"""Chapter 06's computed sentences: every number its reading cites (:func:`reading_values`), the formatting
control's numbers (:func:`formatting_values`) and the closing "What this shows" (:func:`what_this_shows`):
which of the paper's claims (Lu et al. 2025) this build reproduces, which not, which it cannot test. Pure:
records in, dicts or a DataFrame out; each number rounded once (:func:`creval.measures.stats.numbers.fmt_number`)."""
from __future__ import annotations

import pandas as pd

from creval.measures.perplexity import perplexity_summary
from creval.measures.stats import numbers as num
from creval.measures.stats import tracking as TR
from creval.measures.stats import verdicts as V
from creval.studies import scores as SC
from creval.studies.links import anchor, items
from creval.studies.rethinking.figures import table_l_ranges
from creval.studies.rethinking.readers import labelled, measures, unlabelled_reason
from creval.studies.rethinking.report import (
    PAPER_TABLE2,
    WITHIN,
    table_checks,
    table_formatting,
    table_invariance,
    table_ttcw_judges,
    table_ttcw_within,
)
from creval.studies.tables import captioned

WEAK_RHO = TR.EQUIVALENCE["spearman"]   # |rho| under this on a rating scale: "does not track the ratings"
REPRODUCED, NOT_REPRODUCED, UNTESTABLE = V.SUPPORTS, V.CONTRADICTS, V.TESTABLE
SAME_AUROC = TR.EQUIVALENCE["auc"]      # "barely differs": within 0.5 +- 0.06, the card's margin too (one word)
TWIST_BAND = 0.1        # "about 20%": a share within 0.2 +- 0.1


def value_range(lo, hi, digits: int = 2, scale: float = 1.0, unit: str = "") -> str:
    """"a-b" (each end rounded once), or one value where both ends print the same."""
    a, b = num.fmt_number(lo, digits, scale), num.fmt_number(hi, digits, scale)
    return f"{a}{unit}" if a == b else f"{a}-{b}{unit}"


def check_value(t: pd.DataFrame, check_prefix: str, measure: str) -> dict | None:
    """One row of a check table as ``{text, value, n, chance_in_ci, right}`` (None where not computed)."""
    r = t[t["check"].str.startswith(check_prefix) & (t["measure"] == measure)] if len(t) else t
    if r.empty or pd.isna(r.iloc[0]["value"]):
        return None
    r = r.iloc[0]
    return {"text": num.fmt_estimate(r["value"], r["ci_low"], r["ci_high"]), "value": float(r["value"]),
            "lo": float(r["ci_low"]), "hi": float(r["ci_high"]), "n": int(r["n"]),
            "units": int(r["units"]) if "units" in r and pd.notna(r["units"]) else int(r["n"]),
            "null": 0.5 if r["statistic"] == "AUROC" else 0.0, "note": str(r.get("note") or ""),
            "p": float(r["p"]) if "p" in r and pd.notna(r["p"]) else float("nan"),
            "chance_in_ci": r["CI excludes chance"] != "yes", "right": r["right direction"] == "yes"}


def ps_values(recs, checks: pd.DataFrame) -> dict | None:
    """MacGyver unconventional vs conventional: group sizes, mean CI of each, the CI's AUROC."""
    m = measures(recs, "ps")
    if not (labelled(recs, "ps") and len(m)):
        return None
    lab = m["label"].astype(bool)
    return {"n_pos": int(lab.sum()), "n_neg": int((~lab).sum()), "ci_pos": num.fmt_number(m.loc[lab, "ci"].mean(), 3),
            "ci_neg": num.fmt_number(m.loc[~lab, "ci"].mean(), 3),
            "auc": check_value(checks, "MacGyver unconventional", "creativity index")}


def formatting_values(recs) -> dict | None:
    """The formatting control of crowd vs GPT-4: the CI's AUROC as written (``raw``) and with step markers
    stripped (``stripped``), the share of each side's texts that carried markers, and the share of the raw
    AUROC's distance from chance that stripping removed (``removed``)."""
    t = table_formatting(recs)
    raw = check_value(t, "MacGyver crowd", "creativity index, as written")
    plain = check_value(t, "MacGyver crowd", "creativity index, step markers stripped")
    if raw is None or plain is None:
        return None
    f = measures(recs, "solver")
    share = {k: num.fmt_number(g["marked"].astype(float).mean(), 0, 100) + "%" for k, g in f.groupby("kind")}
    gap = raw["value"] - 0.5
    return {"raw": raw, "stripped": plain, "marked_crowd": share.get("human", ""), "marked_gpt4": share.get("llm", ""),
            "removed": num.fmt_number((raw["value"] - plain["value"]) / gap, 0, 100) + "%" if gap else "",
            "still_separates": not plain["chance_in_ci"] and plain["value"] > 0.5,
            "overlap": plain["hi"] >= raw["lo"]}


def ttcw_values(recs, checks: pd.DataFrame) -> dict | None:
    """TTCW: stories, the CI's rho against the experts' passes, the mean CI, the staged LLM judges' rhos."""
    if not labelled(recs, "ttcw"):
        return None
    t = measures(recs, "ttcw")
    j = table_ttcw_judges(recs)
    rho = j["rho vs expert passes"] if "rho vs expert passes" in j else pd.Series(dtype=float)
    w = table_ttcw_within(recs)
    within = w[w["model"] == WITHIN] if len(w) else w
    models = int(t["kind"].nunique())
    return {"stories": len(t), "rho": check_value(checks, "TTCW expert passes", "creativity index"),
            "models": models, "ci_mean": num.fmt_number(t["ci"].mean(), 2),
            "within": (num.fmt_estimate(within.iloc[0]["rho"], within.iloc[0]["ci_low"], within.iloc[0]["ci_high"])
                       if models > 1 and len(within) and pd.notna(within.iloc[0]["rho"]) else ""),
            "llm_judges": f"{num.fmt_number(rho.min())} to {num.fmt_number(rho.max())}" if rho.notna().any() else ""}


def ppl_values(recs, checks: pd.DataFrame) -> dict:
    """Perplexity under ``model``: range, median, texts, how many checks go the 'creative' way, and the
    paraphrase-invariance AUROC."""
    cfg = recs.cfg
    ppl = [c for c in (check_value(checks, p, "perplexity") for p in ("MacGyver unconventional", "MacGyver crowd",
                                                                       "TTCW expert passes", "AUT")) if c]
    p = recs["perplexity"]
    p = p[p["model"] == cfg.model] if len(p) else p
    inv = table_invariance(recs)
    inv = inv[inv["measure"] == "perplexity"] if "measure" in inv else inv
    s = perplexity_summary(p.to_dict("records")) if len(p) else perplexity_summary([])
    return {"range": value_range(p["ppl"].min(), p["ppl"].max(), 1) if len(p) else "",
            "median": num.fmt_number(p["ppl"].median(), 1) if len(p) else "",
            "weighted": num.fmt_number(s["ppl_token_weighted"], 1), "tokens": s["tokens"],
            "first_share": (num.fmt_number(s["first_token_share"], 0, 100) + "%"
                            if s["first_token_share"] == s["first_token_share"] else ""),
            "texts": int(p["ppl"].notna().sum()) if len(p) else 0, "checks": len(ppl),
            "right": sum(c["right"] for c in ppl), "chance": sum(c["chance_in_ci"] for c in ppl),
            "paraphrase_auc": (num.fmt_estimate(inv.iloc[0]["AUROC(|diff|: different > paraphrase)"],
                                              inv.iloc[0]["ci_low"], inv.iloc[0]["ci_high"])
                               if len(inv) and pd.notna(inv.iloc[0]["AUROC(|diff|: different > paraphrase)"]) else "")}


def template_values(recs, checks: pd.DataFrame) -> dict:
    """Templates: the range of the groups' template rates, and templates per token crowd vs GPT-4."""
    cfg = recs.cfg
    t = recs["templates"]
    t = t[(t["n"] == cfg.rethink_template_n) & (t["mode"] == "sequence")] if len(t) else t
    return {"top": cfg.rethink_template_top, "n": cfg.rethink_template_n,
            "rates": value_range(t["rate"].min(), t["rate"].max(), 1, 100, "%") if len(t) else "",
            "min_rate": float(t["rate"].min()) if len(t) else float("nan"),
            "solver_tpt": check_value(checks, "MacGyver crowd", "templates per token"),
            "ps_tpt": check_value(checks, "MacGyver unconventional", "templates per token")}


def _judged_lengths(recs, js: pd.DataFrame) -> pd.DataFrame:
    """The rubric judge's rows with ``n_words``, the length of each judged text from its set's measures (a
    judge score is shown with the length of what it scored: :mod:`creval.studies.scores`)."""
    if not len(js) or not {"set", "id"} <= set(js.columns):
        return js
    parts = [m[["id", "n_words"]].assign(set=s) for s in sorted(set(js["set"]))
             for m in [recs[f"measures_{s}"]] if len(m) and {"id", "n_words"} <= set(m.columns)]
    if not parts:
        return js
    return js.merge(pd.concat(parts).drop_duplicates(["set", "id"]), on=["set", "id"], how="left")


def judge_values(recs, checks: pd.DataFrame) -> dict:
    """The rubric judge: its AUROCs against the MacGyver labels (with n), whether all hold chance, its mean
    score and its prompt-twist contradiction rate."""
    judged = [{**c, "text": f"{c['text']} on {name} (n = {c['n']})"}
              for name, c in (("unconventional vs conventional",
                               check_value(checks, "MacGyver unconventional", "rubric judge")),
                              ("crowd vs GPT-4", check_value(checks, "MacGyver crowd", "rubric judge"))) if c]
    tw, js = recs["twist"], recs["judge"]
    scored = _judged_lengths(recs, js)
    return {"checks": [c["text"] for c in judged],
            "score": SC.fmt_score(SC.score_summary(scored["judge"] if len(js) else [], scored.get("n_words"),
                                                   n_boot=recs.cfg.n_boot, seed=recs.cfg.seed)),
            "all_chance": all(c["chance_in_ci"] for c in judged) if judged else None,
            "mean_score": num.fmt_number(js["judge"].mean()) if len(js) else "",
            "contradiction_rate": float(tw["contradiction"].mean()) if len(tw) else float("nan"),
            "contradictions": num.fmt_number(tw["contradiction"].mean(), 0, 100) + "%" if len(tw) else "",
            "contradictions_ci": (num.fmt_interval(*V.wilson(int(tw["contradiction"].astype(bool).sum()), len(tw)), 0,
                                                 100) if len(tw) else ""),
            "twist_pairs": len(tw)}


def aut_values(checks: pd.DataFrame) -> dict | None:
    """AUT: each measure's n (the creativity index runs on every rated response, perplexity on a subsample),
    the largest |rho| of the measures, and whether every |rho| is under :data:`WEAK_RHO`."""
    a = checks[checks["check"].str.startswith("AUT") & checks["value"].notna()] if len(checks) else checks
    if not len(a):
        return None
    best = a.loc[a["value"].abs().idxmax()]
    ns = a.groupby("n", sort=False)["measure"].apply(list)
    return {"n": int(best["n"]), "ns": "; ".join(f"n = {n} for {', '.join(m)}" for n, m in ns.items()),
            "max_abs": num.fmt_number(a["value"].abs().max()), "weak": num.fmt_number(WEAK_RHO, 1),
            "strongest": f"{best['measure']} {num.fmt_estimate(best['value'], best['ci_low'], best['ci_high'])}",
            "all_weak": bool((a["value"].abs() < WEAK_RHO).all())}


def reading_values(recs) -> dict:
    """Every number the chapter's closing reading cites, from this build's records (each rounded once):
    ``{"ps", "solver", "formatting", "ttcw", "ppl", "templates", "judge", "aut"}``; a part is None where the
    records have no labelled data for it."""
    checks = table_checks(recs)
    solver = measures(recs, "solver")
    return {"model": recs.cfg.model, "judge_model": recs.cfg.judge_model, "ps": ps_values(recs, checks),
            "solver": ({"auc": check_value(checks, "MacGyver crowd", "creativity index"),
                        "pairs": int(solver["group"].nunique())} if labelled(recs, "solver") and len(solver) else None),
            "formatting": formatting_values(recs), "ttcw": ttcw_values(recs, checks),
            "ppl": ppl_values(recs, checks), "templates": template_values(recs, checks),
            "judge": judge_values(recs, checks), "aut": aut_values(checks)}


def claim_verdict(c: dict | None, target, why: str = "") -> V.Verdict:
    """A claim read off one estimate's interval by the one rule (:func:`creval.measures.stats.verdicts.claim_verdict`)
    against the paper's ``target`` (a sign, a range, or ``("equivalent", margin)``), its n against the rule's
    minimum: supports / contradicts the paper, inconclusive here, or not testable here."""
    if c is None:
        return V.Verdict(V.TESTABLE, why or "not computed in these records")
    return V.claim_verdict(c["value"], c["lo"], c["hi"], c.get("units", c["n"]), claimed=target, null=c["null"],
                           degenerate=why or (None if c["lo"] == c["lo"] else c["note"] or "no interval"),
                           units="independent unit")


def with_chance(c: dict | None) -> str:
    """An estimate's text and, unless it clears chance (interval and test together), why not: no interval
    (too many resamples undefined), an interval that holds chance, or a test that does not clear it."""
    if c is None:
        return "not computable here (too few texts)"
    if not c["chance_in_ci"]:
        return c["text"]
    if c["lo"] != c["lo"]:
        return c["text"] + " (no interval: too many resamples leave it undefined)"
    if c["lo"] <= c["null"] <= c["hi"]:
        return c["text"] + " (the interval holds chance)"
    return c["text"] + f" (p = {num.fmt_number(c['p'], 3)}: the test does not clear chance)"


def ci_claims(recs, v: dict) -> list[tuple[str, str, V.Verdict]]:
    """The creativity index's two claims: it separates human from LLM texts, not unconventional from
    conventional solutions."""
    out = []
    claim = "The creativity index is higher for human than for LLM texts (paper: 0.72 vs 0.53 on movie plots, Table 2)."
    s, f = v["solver"], v["formatting"]
    if s is None or s["auc"] is None:
        out.append((claim, "no crowd and GPT-4 solutions here",
                    claim_verdict(None, "+", unlabelled_reason(recs, "solver") or "no crowd and GPT-4 solutions")))
    else:
        a = s["auc"]
        here = (anchor("crowd vs GPT-4 MacGyver solutions", "rethinking", "measures_solver")
                + f", AUROC {with_chance(a)} as written")
        status = claim_verdict(a, "+")
        if f:                   # the index with step markers stripped is the one that can speak for the ideas
            here += (f", {f['stripped']['text']} with step markers stripped (markers in {f['marked_gpt4']} of GPT-4's "
                     f"texts, {f['marked_crowd']} of the crowd's)")
            raw_word, status = status.word, claim_verdict(f["stripped"], "+")
            if raw_word == REPRODUCED and status.word != REPRODUCED:
                here += ": the gap is formatting"
        out.append((claim, here, status))
    claim = ("The creativity index barely differs between unconventional and conventional solutions (paper: 0.76 vs "
             "0.75, Table 2).")
    p = v["ps"]
    if p is None or p["auc"] is None:
        out.append((claim, "no labelled MacGyver solutions here",
                    claim_verdict(None, "+", unlabelled_reason(recs, "ps") or "no labelled MacGyver solutions")))
    else:
        a = p["auc"]          # "barely differs": an AUROC within 0.5 +- SAME_AUROC (two one-sided tests)
        pos, neg = (anchor(p[f"n_{k}"], "rethinking", "measures_ps", {"label": k == "pos"}) for k in ("pos", "neg"))
        out.append((claim, f"{p['ci_pos']} vs {p['ci_neg']} ({pos} and {neg} solutions), AUROC "
                           f"{with_chance(a)} (the same: within 0.5 +- {SAME_AUROC})",
                    claim_verdict(a, ("equivalent", SAME_AUROC))))
    return out


def twist_claim(recs, v: dict) -> tuple[str, str, V.Verdict]:
    """The prompt twist: the share of solutions the judge contradicts itself on, with its Wilson interval."""
    j, tw = v["judge"], recs["twist"]
    claim = "The rubric judge contradicts itself under a prompt twist on about 20% of solutions (the paper, App. F)."
    if not len(tw):
        return claim, "no prompt twist in these records", V.Verdict(V.TESTABLE, "no prompt twist run")
    k, n = int(tw["contradiction"].astype(bool).sum()), len(tw)
    lo, hi = V.wilson(k, n)
    here = (f"{j['contradictions']} {num.fmt_interval(lo, hi, 0, 100)} (Wilson interval) of "
            f"{anchor(f'{n} solutions', 'rethinking', 'twist')} with "
            f"{recs.cfg.judge_model}")
    weak = "this judge does not separate the MacGyver labels, so it cannot stand in for the paper's" \
        if j["all_chance"] is not False else None
    here += f" (about 20%: within {value_range(0.2 - TWIST_BAND, 0.2 + TWIST_BAND, 0, 100, '%')})"
    return claim, here, V.claim_verdict(k / n, lo, hi, n, claimed=("equivalent", TWIST_BAND), null=0.2,
                                        degenerate=weak, units="solution")


def other_claims(recs, v: dict) -> list[tuple[str, str, V.Verdict]]:
    """Perplexity, templates and the rubric judge's prompt twist, each against the paper's figure."""
    checks = table_checks(recs)
    out = []
    ppl = check_value(checks, "MacGyver unconventional", "perplexity")
    claim = ("Perplexity is lower for the more creative side of MacGyver (paper: 13.98 vs 14.11, Table 2; its "
             "scoring model is not named).")
    out.append((claim, "no perplexity of labelled MacGyver solutions in these records" if ppl is None else
                f"AUROC {with_chance(ppl)} under {recs.cfg.model} on "
                + anchor(f"{ppl['n']} solutions", "rethinking", "perplexity", {"set": "ps", "model": recs.cfg.model})
                + " (above 0.5: higher on the "
                "unconventional side)", claim_verdict(ppl, "-")))
    tpt = v["templates"]["ps_tpt"]
    claim = "Unconventional solutions carry more templates than conventional ones (paper: 38.7% vs 31.9%, Table 2)."
    out.append((claim, "no labelled MacGyver solutions here" if tpt is None else
                f"templates per token, AUROC {with_chance(tpt)} (above 0.5: more on the unconventional side); "
                f"template rates {v['templates']['rates']} in every group", claim_verdict(tpt, "+")))
    out.append(twist_claim(recs, v))
    out.append(("Creative writing and research ideation (the paper's other domains, Table 2).",
                "their texts are not released", V.Verdict(V.TESTABLE, "their texts are not released")))
    return out


def l_range_sentence(recs) -> str:
    """Whether the creativity index's verdict depends on the n-gram range here: the AUROC across every L range
    and aggregation of Fig. 3's sweep, per contrast, and whether it ever crosses chance."""
    t = table_l_ranges(recs)
    if t.empty or t["AUROC"].isna().all():
        return "No labelled MacGyver contrast in these records: the L-range sweep has no AUROC to read."
    names = {"ps": "unconventional vs conventional", "solver": "crowd vs GPT-4"}
    parts, crosses = [], []
    for contrast, g in t.groupby("contrast", sort=False):
        a = g["AUROC"].dropna()
        texts = items(f"{len(measures(recs, contrast))} texts", "rethinking", f"measures_{contrast}")
        parts.append(f"{names.get(contrast, contrast)} AUROC {value_range(a.min(), a.max(), 3)} on {texts} over L "
                     f"ranges {g['L range'].iloc[0]} to {g['L range'].iloc[-1]}")
        crosses.append(bool((a > 0.5).any() and (a < 0.5).any()))
    return ("; ".join(parts) + (": the side of chance changes with the L range, so the verdict depends on it."
                                if any(crosses) else ": the AUROC stays on one side of chance, so here the verdict "
                                "does not depend on the L range, whatever the gap in uniq_L does."))


def paper_template_reading() -> str:
    """The paper's template rates (Table 2) read by domain: where the more creative side has fewer templates."""
    rate = {(d, g): float(r.split("%")[0]) for d, g, *_, r, _ in PAPER_TABLE2}
    creative = {"CW": ("human (creative)", "LLM"), "PS": ("unconventional", "conventional"),
                 "RI": ("accepted", "rejected")}
    names = {"CW": "creative writing", "PS": "problem solving", "RI": "research ideation"}
    fewer = [names[d] for d, (c, o) in creative.items() if rate[(d, c)] < rate[(d, o)]]
    more = [names[d] for d, (c, o) in creative.items() if rate[(d, c)] >= rate[(d, o)]]
    return (f"templates are rarer on the more creative side in {' and '.join(fewer)}"
            + (f", not in {' and '.join(more)}" if more else ""))


def what_this_shows(recs) -> pd.DataFrame:
    """The closing "What this shows": each claim of the paper (with its figure and source) beside what this
    build's records give, and its verdict by the one rule (:func:`creval.measures.stats.verdicts.claim_verdict`:
    supports / contradicts the paper, inconclusive here, not testable here) with its reason
    (sample data, too few items, an interval that could not be computed, a judge that separates nothing,
    unreleased data)."""
    v = reading_values(recs)
    rows = [{"the paper's claim": c, "this build": h, "verdict": s.label, "reason": s.reason}
            for c, h, s in ci_claims(recs, v) + other_claims(recs, v)]
    return captioned(pd.DataFrame(rows), "What this shows: the paper's claims (Lu et al. 2025) against this build's "
                                          "records, each verdict by the one rule (docs/verdicts.md)")

