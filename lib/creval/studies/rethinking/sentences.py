"""Chapter 06's sentences as the page shows them (the formatting control's, the closing reading's), built from
:mod:`creval.studies.rethinking.reading`'s values with every count linked to the rows it counts in the
rethinking item browser (:mod:`creval.studies.links`). Pure: records in, Markdown out."""
from __future__ import annotations

from creval.measures.rubric import ASPECTS
from creval.studies import scores as SC
from creval.studies.links import items
from creval.studies.rethinking.reading import formatting_values, reading_values, with_chance

SCALE = SC.scale_note([a for a in ASPECTS["ps"] if a[0] == "Unconventionality"]).rstrip(".")   # with its anchors


def _to(text, table: str, link=items, **filters) -> str:
    """``text`` linked to its rows of ``table`` in the rethinking browser (a cell takes ``link=anchor``)."""
    return link(str(text), "rethinking", table, filters)


def formatting_md(recs) -> str:
    """The sentence under the formatting control: step markers on each side, the AUROC as written and stripped."""
    f = formatting_values(recs)
    if f is None:
        return "No crowd vs GPT-4 solutions with their formatting control in these records."
    side = {k: _to(f"{k.replace('llm', 'GPT-4').replace('human', 'the crowd')}'s texts", "formatting", set="solver",
                  kind=k) for k in ("llm", "human")}
    return (f"Step markers are in {f['marked_gpt4']} of {side['llm']} and {f['marked_crowd']} of {side['human']}. As "
            f"written the creativity index separates crowd from GPT-4 with AUROC {f['raw']['text']}; stripped, "
            f"{f['stripped']['text']}: formatting accounts for {f['removed']} of the distance from chance"
            + (", and the rest still separates the two: the gap is part formatting, part wording."
               if f["still_separates"] else ", and what is left holds chance: the gap is formatting."))


def closing_md(recs) -> str:
    """The chapter's closing reading, one bullet per measure, every count linked to the rows it counts."""
    v, out = reading_values(recs), []
    if v["ps"]:
        ps = v["ps"]
        out.append("- **The creativity index measures reuse, and the reference decides what reuse means.** Against "
                   f"other MacGyver solutions, on {_to(ps['n_pos'], 'measures_ps', label=True)} unconventional and "
                   f"{_to(ps['n_neg'], 'measures_ps', label=False)} conventional solutions it gives {ps['ci_pos']} vs "
                   f"{ps['ci_neg']} (the paper: 0.76 vs 0.75, Lu et al. 2025, Table 2), AUROC "
                   f"{with_chance(ps['auc'])}.")
    if v["solver"]:
        f = v["formatting"]
        out.append(f"- Crowd against GPT-4 solutions of the same problems after length matching (on "
                   f"{_to(str(v['solver']['pairs']) + ' problems', 'measures_solver')}): AUROC "
                   f"{with_chance(v['solver']['auc'])}"
                   + ("." if f is None else f"; with step markers stripped from texts and pool "
                      f"{with_chance(f['stripped'])}, so " + ("part of the gap is phrasing beyond the markers."
                                                              if f["still_separates"] else
                                                              "the gap is the markers, not the phrasing.")))
    if v["ttcw"]:
        tt = v["ttcw"]
        out.append(f"- On the {_to(str(tt['stories']) + ' TTCW stories', 'measures_ttcw')} the index against the "
                   f"experts' pass counts: rho {with_chance(tt['rho'])}; little is reused among so few stories (mean "
                   f"CI {tt['ci_mean']})" + (f"; the stories come from {tt['models']} models, and within each model "
                                              f"the rho is {tt['within']}, so a pooled rho the within-model one lacks "
                                              "is a difference between the models" if tt["within"] else "")
                   + (f"; the TTCW paper's own LLM judges give rho {tt['llm_judges']} against the same experts."
                      if tt["llm_judges"] else "."))
    p = v["ppl"]
    if p["texts"]:
        out.append(f"- **Perplexity tracks how a text is written and which model reads it.** Under `{v['model']}` "
                   f"its median is {p['median']} per text (range {p['range']}) on "
                   f"{_to(str(p['texts']) + ' texts', 'perplexity', model=v['model'])}, {p['weighted']} token-weighted "
                   f"over their {p['tokens']} tokens" + (f" (the first token of each text carries {p['first_share']} "
                                                         "of the surprise)" if p["first_share"] else "")
                   + " (the paper's group means: 7.03-14.11, Table 2); it goes the 'creative' way in "
                   f"{p['right']} of {p['checks']} checks, {p['chance']} of them not clear of chance"
                   + (f"; between paraphrases against different sentences its |diff| gives AUROC "
                      f"{p['paraphrase_auc']} (0.5: it moves as much for a paraphrase)." if p["paraphrase_auc"]
                      else "."))
    tp = v["templates"]
    rates = _to(tp["rates"], "templates", n=tp["n"], mode="sequence") if tp["rates"] else "no share"
    out.append(f"- **Templates are a corpus statistic.** With the top {tp['top']} POS {tp['n']}-grams of a group, "
               f"{rates} of the texts of a group have a template (the paper: 31.9-96.7%, Table 2)"
               + (". Templates per token, crowd against GPT-4 (below 0.5 when GPT-4's texts are the more templated): "
                  f"AUROC {with_chance(tp['solver_tpt'])}." if tp["solver_tpt"] else "."))
    j = v["judge"]
    if j["checks"]:
        out.append(f"- **The rubric judge** (`{v['judge_model']}`): mean score {_to(j['score'], 'judge')} on its 1-5 "
                   f"scale ({SCALE}); its ranking against the MacGyver labels gives AUROC "
                   f"{' and '.join(j['checks'])}" + (", no better than chance" if j["all_chance"] else "")
                   + f"; it contradicts itself on {j['contradictions']} {j['contradictions_ci']} (Wilson interval) of "
                   f"{_to(str(j['twist_pairs']) + ' prompt-twist pairs', 'twist') if j['twist_pairs'] else '0 pairs'}"
                   " (the paper: about 20%, App. F). Read its column after a rerun with a larger model "
                   "(`-p judge_model=...`).")
    if v["aut"]:
        a = v["aut"]
        out.append(f"- **AUT**: against human originality ratings of {_to('short uses', 'measures_aut')} "
                   f"({a['ns']}) the largest |rho| of the measures is {a['max_abs']} ({a['strongest']})"
                   + (f"; every |rho| is below {a['weak']}: none tracks the ratings." if a["all_weak"] else "."))
    out.append("- None of these measures alone is a measure of creativity as people judge it; each check above says "
               "how far one measure goes on one kind of text.")
    return "\n".join(out)
