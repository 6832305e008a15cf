"""Chapter 07's sentences about this build, pure: every number the reading and the closing "What this shows"
cite, from the records (each rounded once), and the Markdown built from them."""
from __future__ import annotations

import numpy as np
import pandas as pd

from creval.measures.stats import correlation as corr
from creval.measures.stats import numbers as num
from creval.measures.stats.resample import cluster_bootstrap
from creval.measures.stats.verdicts import TESTABLE, Verdict, claim_verdict
from creval.studies.aut.human import OCSAI_REFERENCE, table_human, table_human_reference, table_vs_baselines
from creval.studies.aut.report import (
    ORACLE,
    agreement,
    degenerate_settings,
    fallback_settings,
    generation_health,
    human_values,
    level_check,
    table_bias,
    table_self_preference,
)
from creval.studies.claims import claims_md, every_row, too_few_of
from creval.studies.contract import Records
from creval.studies.links import items
from creval.studies.tables import guard_module

Z90 = 1.6449            # two-sided 90% normal quantile


def null_halfwidth(n: int) -> float:
    """Half-width of the 90% interval of a Spearman rho between unrelated variables on ``n`` items (its null
    standard deviation is 1/sqrt(n - 1)): what chance alone spreads a per-object correlation over."""
    return Z90 / np.sqrt(n - 1) if n > 1 else float("nan")


def _fmt_counts(ns) -> str:
    ns = sorted(set(int(n) for n in ns))
    return ", ".join(map(str, ns[:-1])) + (" and " if len(ns) > 1 else "") + str(ns[-1]) if ns else ""


def _repeats_pointwise(t: pd.DataFrame) -> pd.Series:
    """Rows of the judges-vs-people table that are the pointwise row again: every value read from the
    log-probability fallback (the one-response prompt pointwise scoring uses) while the same dataset and scorer
    has a pointwise row. Counting them would count one measurement twice."""
    if t.empty or "via logprobs" not in t:
        return pd.Series(False, index=t.index)
    point = set(zip(t.loc[t["mode"] == "pointwise", "dataset"], t.loc[t["mode"] == "pointwise", "scorer"]))
    return pd.Series([m != "pointwise" and lp == 1.0 and (d, s) in point
                      for d, s, m, lp in zip(t["dataset"], t["scorer"], t["mode"], t["via logprobs"])], index=t.index)


def reading_values(recs: Records) -> dict:
    """Every number the chapter's reading cites, from this build's records (each rounded once). Parts with no
    records are None."""
    out: dict = {}
    lc = level_check(recs)
    out["levels"] = ({"generators": len(lc), "ordered": int(lc["levels ordered"].sum()),
                      "rho": ", ".join(f"{g} {num.fmt_number(r)}"
                                       for g, r in zip(lc["generator"], lc["rho(level, semdis)"]))}
                     if len(lc) and "levels ordered" in lc else None)
    b = table_bias(recs)
    if len(b):
        def share(setting: str, col: str) -> str:
            x = b[b["setting"] == setting][col]
            return num.fmt_number(x.mean(), 0, 100) + "%" if len(x) and x.notna().any() else "–"

        def value(setting: str, col: str) -> str:
            x = b[b["setting"] == setting][col] if col in b else pd.Series(dtype=float)
            return num.fmt_number(x.mean()) if len(x) and x.notna().any() else "–"
        out["bias"] = {"logprobs_comp": share("comprehensive score", "logprobs"),
                       "logprobs_seg": share("segmented score", "logprobs"),
                       "unparsed_comp_rank": share("comprehensive rank", "unparsed"),
                       "identity_seg_rank": share("segmented rank", "identity order"),
                       "pos_seg_rank": value("segmented rank", "rho(position, value)"),
                       "fwd_rev_seg_rank": value("segmented rank", "rho(forward, reverse)")}
    else:
        out["bias"] = None
    h = human_values(recs)
    if h.empty:
        out["human"] = None
    else:
        judged = h[h["mode"] != "baseline"]
        per_object = judged.groupby(["dataset", "object"])["item_id"].nunique()
        ns = sorted(set(int(n) for n in per_object))
        t = table_human(recs)
        tj = t[t["mode"] != "baseline"]
        again = _repeats_pointwise(tj)
        tj = tj[~again]
        vs = table_vs_baselines(recs)
        if len(vs):
            twice = set(zip(t.loc[again[again].index, "dataset"], t.loc[again[again].index, "scorer"],
                            t.loc[again[again].index, "mode"])) if again.any() else set()
            vs = vs[[k not in twice for k in zip(vs["dataset"], vs["judge"], vs["mode"])]]
        counts = vs["verdict"].astype(str).str.split(",").str[0].value_counts().to_dict() if len(vs) else {}
        out["human"] = {
            "per_object": _fmt_counts(ns),
            "halfwidths": ", ".join(f"±{num.fmt_number(null_halfwidth(n))} at n = {n}" for n in ns if n >= 5),
            "judge_rho": (f"{num.fmt_number(tj['rho pooled'].min())} to {num.fmt_number(tj['rho pooled'].max())}"
                          if len(tj) and tj["rho pooled"].notna().any() else "–"),
            "judge_rows": len(tj),
            "judge_ci_hold_zero": int(((tj["lo"] <= 0) & (tj["hi"] >= 0)).sum()) if len(tj) else 0,
            "vs_baseline": {k: int(counts.get(k, 0)) for k in ("better", "indistinguishable", "worse")},
            "sample": bool(h["dataset"].astype(str).str.startswith("sample").all())}
    ref = table_human_reference(recs)
    pairs = ref[ref["reference"].str.contains(" vs .* on the responses both rated", regex=True)] if len(ref) else ref
    if len(pairs):
        get = lambda key: ref[ref["reference"].str.contains(key, regex=False)]["rho pooled"]  # noqa: E731
        alpha = ref[ref["reference"].str.contains("Krippendorff", regex=False)]
        out["raters"] = {"pairs": ", ".join(num.fmt_number(r) for r in pairs["rho pooled"]),
                         "n": ", ".join(f"{int(n):,}" for n in pairs["n"]),
                         "mean": num.fmt_number(get("n-weighted mean").iloc[0]),
                         "one_more": num.fmt_number(get("one more person").iloc[0]),
                         "ceiling": num.fmt_number(get("noise ceiling").iloc[0]),
                         "alpha": num.fmt_number(alpha["rho pooled"].iloc[0]) if len(alpha) else "–",
                         "responses": f"{int(alpha['n'].iloc[0]):,}" if len(alpha) else "–"}
    else:
        out["raters"] = None
    gh = generation_health(recs)
    high = gh[gh["level"] == "highly_creative"] if len(gh) and "echo the prompt" in gh else gh.iloc[0:0]
    out["echo"] = ({"echo": int(high["echo the prompt"].sum()), "kept": int(high["uses kept"].sum())}
                   if len(high) else None)
    out["fallback"] = fallback_settings(recs)
    out["ocsai"] = {r["scorer"]: num.fmt_number(r["rho pooled"]) for r in OCSAI_REFERENCE.to_dict("records")}
    return out


def reading_md(recs: Records) -> str:
    """The chapter's reading of this build (levels, what the judges do with the prompts, judges against people
    and baselines, the raters' own agreement), as Markdown; every number from :func:`reading_values`."""
    v, out = reading_values(recs), []
    if v["levels"]:
        lv = v["levels"]
        out.append(f"**The levels in this build.** The distance rises strictly with the level for {lv['ordered']} of "
                   f"{lv['generators']} generators (Spearman of level and distance: {lv['rho']}).")
    if v["bias"]:
        b = v["bias"]
        out.append(f"**What the judges do with these prompts** (the parse-health table, mean over judges): scores read "
                   f"from the log-probability fallback {b['logprobs_comp']} (comprehensive) and {b['logprobs_seg']} "
                   f"(segmented); comprehensive rankings unparsed {b['unparsed_comp_rank']}; segmented rankings "
                   f"identical to the order shown {b['identity_seg_rank']}, rho(position, value) {b['pos_seg_rank']}, "
                   f"rho(forward, reverse) {b['fwd_rev_seg_rank']} (both are -1 when a judge copies the presented "
                   "order). Asking every ranking in both orders is what exposes a copied order; a single shuffled "
                   "order, as in the paper, would hide it inside the agreement numbers.")
    if v["fallback"]:
        out.append(f"**One measurement under {len(v['fallback'])} name(s).** Every value of {', '.join(v['fallback'])} "
                   "came from the log-probability fallback, the one-use prompt: the judge never returned a usable list "
                   "there, so those settings measure the same thing and the agreement table shows them once.")
    if v["echo"] and v["echo"]["echo"]:
        e = v["echo"]
        out.append(f"**Uses that hand the prompt back.** {e['echo']} of the {e['kept']} highly creative uses kept "
                   "repeat the prompt's own words (its heuristics: shape, size, material, another domain): they are "
                   "the instructions echoed, not uses, and a judge that rates them creative rates the prompt.")
    if v["human"]:
        hu, vs = v["human"], v["human"]["vs_baseline"]
        spread = (f"between unrelated scores a per-object Spearman spreads over a 90% interval of {hu['halfwidths']}. "
                  if hu["halfwidths"] else "too few for a per-object Spearman (at least 5). ")
        sample = " These rows use the bundled sample, whose 'human' scores are our guesses." if hu["sample"] else ""
        out.append(f"**Against people, the baselines are the bar.** The judges' pooled Spearman with the human scores "
                   f"ranges {hu['judge_rho']} over {hu['judge_rows']} rows, {hu['judge_ci_hold_zero']} of them with an "
                   f"interval that holds 0. Per object this build has {hu['per_object']} responses; {spread}Against a "
                   f"trivial baseline on the same items (semantic distance, length) a judge is better {vs['better']} "
                   f"times, indistinguishable {vs['indistinguishable']} times and worse {vs['worse']} times.{sample}")
    if v["raters"]:
        r = v["raters"]
        out.append(f"The Cambridge raters agree with each other only weakly (its rater pairs: Spearman {r['pairs']}, "
                   f"n = {r['n']}; Krippendorff alpha {r['alpha']} on {r['responses']} responses). A judge is compared "
                   f"with the mean of two raters, which is steadier than one, so from their mean r = {r['mean']} one "
                   f"more person would reach about {r['one_more']} against it and no scorer can pass {r['ceiling']}.")
    o = v["ocsai"]
    out.append(f"Ocsai's published scorers reach {o['ocsai-chatgpt (fine-tuned gpt-3.5)']} pooled on the full Ocsai-1 "
               f"test set, prompted gpt-4o {o['gpt-4o, prompted, ~108 few-shot']} (the published figures in the "
               "reference table above). High agreement *between* LLM judges, the paper's headline, is therefore not "
               "evidence that they measure what people call original: that needs the human rows. Run the chapter "
               "with a stronger judge (`-p models='[qwen2.5-coder-1.5b, smollm2-135m]'`, or an API model) to see how "
               "far the apparatus moves; the self-preference test needs at least two models that both generate and "
               "judge.")
    return "\n\n".join(out)


PAPER_JUDGES, PAPER_ORACLE = 0.7, 0.77      # Rabeyah et al. 2024: judges agree "above 0.7", with the oracle "over 0.77"


def _by_object(long: pd.DataFrame, cfg) -> dict:
    """The mean SRC over settings and pairs with a bootstrap interval over objects (the object is the
    independent unit: every setting and pair of an object rates the same uses): value, lo, hi, the bounds'
    Monte-Carlo margin ``mc`` and n objects."""
    per = long.groupby("object")["src"].mean().dropna()
    r = cluster_bootstrap(np.mean, per.to_numpy(float), n_boot=cfg.n_boot, seed=cfg.seed)
    return {"value": float(per.mean()) if len(per) else float("nan"), "lo": r["lo"], "hi": r["hi"],
            "mc": (r["mc_lo"], r["mc_hi"]), "n": int(len(per))}


def _agreement_claim(long: pd.DataFrame, claimed: float, cfg, note: str) -> tuple[str, str]:
    """(verdict text, evidence) of "the mean SRC is above ``claimed``", read off its interval over objects."""
    b = _by_object(long, cfg)
    v = claim_verdict(b["value"], b["lo"], b["hi"], b["n"], claimed=(claimed, 1.0), null=0.0,
                      degenerate=too_few_of(b["n"], "object"), mc=b["mc"], units="object")
    return (str(v) if not v.testable else v.label,
            f"Here the mean over settings and judge pairs is {num.fmt_estimate(b['value'], b['lo'], b['hi'])} "
            f"(bootstrap over {items(str(b['n']) + ' objects', 'aut', 'judgments')}).{note}")


def what_this_shows(recs: Records) -> str:
    """The closing list: each of Rabeyah et al.'s claims with the rule's word (supports the paper, contradicts
    the paper, inconclusive here, not testable here), read off intervals over the independent unit (objects
    for agreement, uses for the level check, a judge's uses for self-preference); degenerate settings (a
    judge copying the order shown on most lists, a near-constant score) are left out with their share."""
    cfg, rows = recs.cfg, []
    a = agreement(recs)
    bad, fb = degenerate_settings(recs), fallback_settings(recs)
    left_out = "; ".join(f"{s}: {w}" for s, w in sorted(bad.items()))
    keep = a[~a["setting"].isin(bad)] if len(a) else a
    if fb and len(keep):       # the fallback's settings are one measurement: keep one of them
        keep = keep[~keep["setting"].isin(fb[1:])]
    degenerate = left_out if left_out and keep.empty else None
    note = f" Left out, as degenerate: {left_out}." if left_out and not keep.empty else ""
    oracle = keep[keep["a"] == ORACLE] if len(keep) else keep
    judges = keep[keep["a"] != ORACLE] if len(keep) else keep
    claim = (f"Rabeyah et al. report the judges agreeing with each other above {PAPER_JUDGES} (Spearman of the level "
             "sequences, their Table 2).")
    if len(judges) and judges["src"].notna().any():
        word, here = _agreement_claim(judges, PAPER_JUDGES, cfg, note)
        rows.append((word, claim, here))
    elif degenerate:
        rows.append((str(Verdict(TESTABLE, degenerate)), claim, "No setting is left to compare."))
    else:
        seen = sorted(set(recs["judgments"]["judge"])) if len(recs["judgments"]) else []
        rows.append((TESTABLE, claim, f"This build's judgments come from {len(seen)} judge(s) "
                     f"({', '.join(seen) or 'none'}): agreement between judges needs two."))
    claim = f"Rabeyah et al. report the judges agreeing with the oracle over {PAPER_ORACLE} (their Table 2)."
    if len(oracle) and oracle["src"].notna().any():
        word, here = _agreement_claim(oracle, PAPER_ORACLE, cfg, note)
        who = ", ".join(sorted(set(recs["judgments"]["judge"])))
        rows.append((word, claim, f"(Judged by {who}.) {here} pair_acc "
                     f"{num.fmt_number(float(oracle['pair_acc'].mean()))} ($0.5$ = chance)."))
    elif degenerate:
        rows.append((str(Verdict(TESTABLE, degenerate)), claim, "No setting is left to compare."))
    else:
        rows.append((TESTABLE, claim, "This build has no judgment to compare with the oracle."))
    lc, u = level_check(recs), recs["uses"]
    claim = "The paper's oracle assumes every generator's uses grow more creative from level to level; it never checks."
    if len(lc) and "levels ordered" in lc:
        found = []
        for g, x in u.groupby("generator"):      # a generator's uses of one object are one unit
            r = cluster_bootstrap(lambda a, b: corr.spearman(a, b, min_n=3)["rho"], x["level_code"].to_numpy(float),
                                  x["semdis"].to_numpy(float), cluster=x["object"].to_numpy(), n_boot=cfg.n_boot,
                                  seed=cfg.seed)
            found.append(claim_verdict(r["value"], r["lo"], r["hi"], r["n_units"], claimed="+", null=0.0,
                                       degenerate=too_few_of(r["n_units"], "object"), mc=(r["mc_lo"], r["mc_hi"]),
                                       units="object"))
        v = every_row(found)
        rows.append((str(v) if not v.testable else v.label, claim,
                     "Here the semantic distance rises strictly with the level for "
                     f"{int(lc['levels ordered'].sum())} of {len(lc)} generator(s) ({', '.join(lc['generator'])}); "
                     "Spearman of level and distance per generator: "
                     + "; ".join(v.reason for v in found) + "."))
    else:
        rows.append((TESTABLE, claim, "No uses were generated."))
    sp = table_self_preference(recs)
    sp = sp[sp["sp"].notna()] if len(sp) else sp
    claim = "The paper reads self-preference (a judge favouring its own uses) off its Tables 12-15."
    if len(sp):
        found = [claim_verdict(r["sp"], r["lo"], r["hi"], int(r["n_own"]), claimed="+", null=0.0,
                               degenerate=too_few_of(int(r["n_own"]), "own use"), mc=(r["mc_lo"], r["mc_hi"]),
                               units="own use")
                 for r in sp.to_dict("records")]
        v = every_row(found)
        rows.append((str(v) if not v.testable else v.label, claim, f"Here, {v.reason} (judge x setting rows)."))
    else:
        rows.append((TESTABLE, claim, "The test needs at least two models that both generate and judge; "
                     f"this build's generators are {', '.join(cfg.generators)}."))
    return claims_md(rows, recs)


guard_module(globals())
