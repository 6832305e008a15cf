"""Chapter 06's report on hand-written records: every table is computed from the run's tables alone (no
model, no tagger, no dataset), with values worked out by hand."""
import json

import numpy as np
import pytest

from creval.measures import creativity_index as C
from creval.measures.ngram_index import NgramIndex, word_tokenize
from creval.studies.contract import Records
from creval.studies.links import dead_in
from creval.studies.rethinking import figures, readers, reading, report, sentences
from creval.studies.rethinking.config import RethinkingConfig

CFG = RethinkingConfig(run_root="/nonexistent", model="m1", models=("m2",), judge_model="j", n_boot=50,
                       rethink_ci_sweep_max=8, rethink_template_n_sweep=(4, 5))
UNC, CONV = [0.9, 0.8, 0.7], [0.6, 0.75, 0.5]      # CI of the unconventional and conventional solutions


def uniq(ci, L):
    return min(1.0, ci + 0.05 * (L - 5))


def write(root, table, rows):
    with open(root / f"{table}.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


@pytest.fixture
def recs(tmp_path):
    ps = []
    for k, (kind, cis) in enumerate((("unconventional", UNC), ("conventional", CONV))):
        for i, ci in enumerate(cis):
            ps.append({"id": f"p{k}{i}::verified", "group": f"p{k}{i}", "text": f"text {k}{i}",
                       "label": kind == "unconventional",
                       "kind": kind, "ci": ci, **{f"uniq_{L}": uniq(ci, L) for L in range(2, 9)},
                       "n_words": 10 + i, "has_template": 1.0, "tpt": 0.1 * (i + 1) + 0.01 * k})
    write(tmp_path, "measures_ps", ps)
    ppl = [{"set": "ps", "id": r["id"], "model": "m1", "ppl": 10.0 + i, "bpb": 1.0 + 0.1 * i, "ppl_cond": 5.0 + i,
            "n_tokens": 12} for i, r in enumerate(ps)]
    ppl += [{"set": "ps", "id": r["id"], "model": "m2", "ppl": 100.0 - i, "bpb": 2.0, "ppl_cond": 50.0,
             "n_tokens": 12} for i, r in enumerate(ps)]
    write(tmp_path, "perplexity", ppl)
    write(tmp_path, "judge", [{"set": "ps", "id": "p00::verified", "kind": "unconventional", "label": True,
                               "judge": 2.5,
                               "scores": {"Problem Difficulty": 2.0, "Unconventionality": 2.5, "Efficiency": 3.0},
                               "state": "ok"},
                              {"set": "ps", "id": "p10::verified", "kind": "conventional", "label": False, "judge": 1.5,
                               "scores": {"Problem Difficulty": 2.0, "Unconventionality": 1.5, "Efficiency": 3.0},
                               "state": "ok"}])
    write(tmp_path, "sets", [{"set": "ps", "texts": 6, "labelled": True, "why": "", "ci_l": [5, 6, 7]},
                             {"set": "solver", "texts": 0, "labelled": False, "why": "no crowd solutions here",
                              "ci_l": [5, 6, 7]},
                             {"set": "ttcw", "texts": 5, "labelled": True, "why": "", "ci_l": [5, 6, 7]},
                             {"set": "aut", "texts": 0, "labelled": False, "why": "only the sample", "ci_l": [2, 3]},
                             {"set": "msrp", "texts": 4, "labelled": True, "why": "", "ci_l": [2, 3]}])
    write(tmp_path, "measures_solver", [])
    write(tmp_path, "measures_ttcw", [{"id": f"s{i}", "group": f"g{i}", "text": "t", "label": "GPT4", "kind": "GPT4",
                                       "ci": 0.1 * i, "passes": p, "originality_passes": 1, "n_words": 100,
                                       "has_template": 1.0, "tpt": 0.2} for i, p in enumerate([3, 9, 4, 20, 15])])
    write(tmp_path, "ttcw_llm_judges", [{"judge": "gpt4", "story_id": f"s{i}", "llm_passes": n}
                                        for i, n in enumerate([1, 2, 3, 4, 5])])
    # two paraphrase pairs, two different pairs
    write(tmp_path, "measures_msrp", [{"id": f"m{g}-{s}", "group": f"m{g}", "label": g < 2, "side": s, "kind": "x",
                                       "text": "t", "ci": [[0.5, 0.6], [0.4, 0.4], [0.1, 0.9], [0.2, 0.5]][g][s],
                                       "tpt": 0.0, "n_words": 5} for g in range(4) for s in (0, 1)])
    write(tmp_path, "templates", [{"set": "ps", "kind": kind, "texts": 3, "n": n, "top": 100, "mode": mode,
                                   "rate": 1.0 if n == 5 else 0.5, "tpt_mean": 0.25, "cr_pos": 5.5}
                                  for kind in ("unconventional", "conventional") for n in (4, 5)
                                  for mode in (("sequence", "compat") if n == 5 else ("sequence",))]
          + [{"set": "ttcw", "kind": "GPT4", "texts": 5, "n": n, "top": 100, "mode": mode, "rate": 1.0,
              "tpt_mean": 0.2, "cr_pos": 5.0} for n, mode in ((4, "sequence"), (5, "sequence"), (5, "compat"))])
    write(tmp_path, "twist", [{"id": "a", "kind": "unconventional", "p_yes_conventional": 0.2,
                               "p_yes_unconventional": 0.3,
                               "says_unconventional": False, "says_conventional": False, "contradiction": True},
                              {"id": "b", "kind": "conventional", "p_yes_conventional": 0.7,
                               "p_yes_unconventional": 0.4,
                               "says_unconventional": False, "says_conventional": True, "contradiction": False}])
    rerun = [{"item_id": "a", "domain": "ps", "scores": {"Problem Difficulty": 2.0, "Unconventionality": u,
                                                         "Efficiency": 3.0},
              "argmax": {"Problem Difficulty": 2.0, "Unconventionality": round(u), "Efficiency": 3.0}, "state": "ok",
              "via": "logprobs", "analysis": "x", "model": "j", "variant": k + 1, "attempts": {}}
             for k, u in enumerate([1.0, 2.0])]
    write(tmp_path, "rerun", rerun)
    write(tmp_path, "data_sources", [{"data": "MacGyver", "where": "shared:/x", "labels": "yes"}])
    write(tmp_path, "example", [{"id": "p00::verified", "group": "p00", "kind": "unconventional",
                                 "text": "tie a <rope>",
                                 "tokens": ["tie", "a", "<rope>", "now"], "span_L": 5, "spans": [[1, 3]],
                                 "reference": {"reference": "pool", "docs": 9}, "pos_tokens": 4, "template_n": 5,
                                 "template_hits": [{"start": 0, "words": ["tie", "a"], "tags": ["VB", "DT"]}]}])
    return Records(tmp_path, CFG)


def test_measures_take_the_perplexity_of_the_model_asked(recs):
    m = readers.measures(recs, "ps")
    assert list(m["ppl"]) == [10.0, 11.0, 12.0, 13.0, 14.0, 15.0] and m["ppl_cond"].iloc[0] == 5.0
    assert list(readers.measures(recs, "ps", "m2")["ppl"])[:2] == [100.0, 99.0]
    assert readers.measures(recs, "solver").empty


def test_checks_auroc_by_hand_and_skips(recs):
    t = report.table_checks(recs)
    ci = t[(t["check"] == "MacGyver unconventional vs conventional") & (t["measure"] == "creativity index")].iloc[0]
    assert ci["value"] == pytest.approx(8 / 9) and ci["n"] == 6 and ci["right direction"] == "yes"
    tested = t["p"].astype(float).notna()
    k = int(tested.sum())
    assert k >= 2 and ci["Holm p"] >= ci["p"] and ci["Holm p"] <= min(1.0, k * ci["p"]) + 1e-12   # Holm's bounds
    ppl = t[(t["check"].str.startswith("MacGyver unc")) & (t["measure"] == "perplexity")].iloc[0]
    assert ppl["value"] == pytest.approx(0.0) and ppl["right direction"] == "no"   # m1's PPL rises along the rows
    judge = t[(t["check"].str.startswith("MacGyver unc")) & (t["measure"] == "rubric judge")].iloc[0]
    assert judge["n"] == 2 and np.isnan(judge["value"])                        # 2 judged texts: below MIN_N
    solver = t[t["check"].str.startswith("MacGyver crowd")]
    assert len(solver) == 1 and solver["note"].iloc[0] == "skipped: no crowd solutions here"
    ttcw = t[t["check"] == "TTCW expert passes (0-42)"]
    assert ttcw[ttcw["measure"] == "creativity index"]["value"].iloc[0] == pytest.approx(0.8)   # 1 - 6 * 4 / 120
    assert t[t["check"] == "AUT human originality"]["note"].iloc[0] == "skipped: only the sample"
    m2 = report.table_checks(recs, model="m2")
    assert m2[(m2["check"].str.startswith("MacGyver unc")) & (m2["measure"] == "perplexity")]["value"].iloc[0] == 1.0


def test_table2_groups_and_further_model(recs):
    t = report.table2(recs)
    ps = t[t["set"] == "PS (MacGyver)"].set_index("group")
    assert ps.loc["unconventional", "CI"] == "0.80 ± 0.10" and ps.loc["conventional", "n"] == 3
    assert ps.loc["unconventional", "PPL"] == "11.00 ± 1.00" and ps.loc["conventional", "PPL (m2)"] == "96.00 ± 1.00"
    assert ps.loc["unconventional", "template rate (TPT)"] == "100.0% (0.250)"
    assert ps.loc["unconventional", "CR-POS"] == 5.5
    assert ps.loc["unconventional", "judge"] == "2.50 ± 0.00" and ps.loc["conventional", "words"] == 11.0
    assert t[t["set"] == "crowd vs GPT-4 (MacGyver)"]["note"].iloc[0] == "no crowd solutions here"
    assert "PPL under m1" in t.attrs["caption"]
    # the judge's score beside its n and the length of the one text it scored per group (too few for an interval)
    assert ps.loc["unconventional", "judge [95% CI] (n; words judged)"] == "2.50 (n=1; 10 words)"
    assert ps.loc["conventional", "judge [95% CI] (n; words judged)"] == "1.50 (n=1; 10 words)"
    assert "Unconventionality (1-5: 1 = the standard way anyone would do it;" in t.attrs["caption"]
    assert "Originality (1-5: 1 = entirely predictable or borrowed;" in t.attrs["caption"]


def test_ttcw_judges_and_invariance(recs):
    j = report.table_ttcw_judges(recs)
    assert j["rho vs expert passes"].iloc[0] == pytest.approx(0.8) and j["mean Yes count (of 14)"].iloc[0] == 3.0
    # the judge's score with its interval, its n and the mean length of the stories it judged; the scale stated
    cell = j["Yes count [95% CI] (n; words judged)"].iloc[0]
    assert cell.startswith("3.00 [") and cell.endswith("(n=5; 100 words)")
    assert "Scale: 0-14, the tests a story passes (0 = it passes none" in j.attrs["caption"]
    inv = report.table_invariance(recs).set_index("measure")
    assert inv.loc["creativity index", "mean |diff| paraphrase"] == pytest.approx(0.05)
    assert inv.loc["creativity index", "mean |diff| different"] == pytest.approx(0.55)
    assert inv.loc["creativity index", "pairs"] == 4 and np.isnan(inv.loc["perplexity", "mean |diff| paraphrase"])


def test_l_ranges_templates_twist_rerun(recs):
    lr = figures.table_l_ranges(recs)
    row = lr[(lr["L range"] == "5..7") & (lr["agg"] == "mean")].iloc[0]
    gap = (np.mean([np.mean([uniq(c, L) for L in (5, 6, 7)]) for c in UNC])
           - np.mean([np.mean([uniq(c, L) for L in (5, 6, 7)]) for c in CONV]))
    assert row["gap (positive - other)"] == pytest.approx(gap)
    assert list(lr["L range"].unique()) == ["5..7", "5..8"] and row["AUROC"] == pytest.approx(8 / 9)
    modes = figures.table_template_modes(recs)
    assert list(modes["mode"]) == ["sequence", "compat"] * 3 and list(modes["group"])[:2] == ["conventional"] * 2
    assert list(modes["set"]) == ["ps"] * 4 + ["ttcw"] * 2 and list(modes["n"]) == [3, 3, 3, 3, 5, 5]
    fig = figures.fig_template_n(recs)
    assert [tr.name for tr in fig.data] == ["ps: conventional (n=3)", "ps: unconventional (n=3)",
                                            "ttcw: GPT4 (n=5)"]
    assert list(fig.data[0].x) == [4, 5] and list(fig.data[0].y) == [0.5, 1.0]
    tw = report.table_twist(recs).set_index("kind")
    assert tw.loc["all", "contradictions"] == 0.5 and tw.loc["all", "p_yes_conventional"] == pytest.approx(0.45)
    rr = report.table_rerun(recs).set_index("aspect")
    assert rr.loc["Unconventionality", "mean_sd"] == pytest.approx(np.std([1.0, 2.0], ddof=1))
    assert rr.loc["Unconventionality", "argmax_changes"] == 1.0 and rr.loc["Efficiency", "mean_sd"] == 0.0


def test_example_renders_the_spans_the_run_recorded(recs):
    ex = report.table_example(recs).set_index("measure")["value"]
    assert ex.iloc[0] == "tie <mark>a &lt;rope&gt;</mark> now"
    assert ex["creativity index (mean of uniq_L, L = 5..7)"] == "0.900"
    assert ex["perplexity / PPL given the problem / bits per byte"] == "10.00 / 5.00 / 1.000"
    assert ex["template occurrences / tokens (first shown)"] == "1 / 4: tie a [VB DT]"
    assert ex["rubric judge Unconventionality (expected value, 1-5)"] == "2.50"


def test_mark_spans_equals_the_measures_highlight():
    docs = [("a", "tie the rope to the chair and pull hard"), ("b", "then tie the rope to the chair and climb")]
    idx = NgramIndex.build(docs, range(1, 6), "t")
    text = "first tie the rope to the chair and pull, then <go>"
    spans = C.reused_spans(word_tokenize(text), idx, 3, "x")
    import html
    want = html.escape(C.highlight(text, idx, 3, "x", ("\x01", "\x02")))
    want = want.replace("\x01", "<mark>").replace("\x02", "</mark>")
    assert report.mark_spans(word_tokenize(text), spans) == want and "<mark>" in want


def test_report_reaches_no_model(recs, monkeypatch):
    import creval.models.registry as registry

    def boom(*a, **k):
        raise AssertionError("a report loaded a model")
    monkeypatch.setattr(registry, "load_model", boom)
    for f in (report.table2, report.table_checks, report.table_example, report.table_rerun, report.table_twist,
              figures.fig_l_sensitivity, report.data_sources):
        f(recs)
    assert report.data_sources(recs)["where"].iloc[0] == "the staged copy (x)"      # no machine's path


def test_correlation_cells_carry_n_and_an_interval_per_pair(recs):
    from creval.measures.stats import correlation as corr
    t = figures.correlation_cells(recs, "ps").set_index(["a", "b"])
    ci_len = t.loc[("creativity index", "length (words)")]
    rho = corr.spearman(UNC + CONV, [10, 11, 12, 10, 11, 12])["rho"]
    assert ci_len["n"] == 6 and ci_len["rho"] == pytest.approx(rho)
    assert "rubric judge" not in set(t.reset_index()["b"])               # two judged texts: too few for a cell
    fig = figures.fig_correlations(recs, "ps")
    assert "n = 6" in " ".join(h for row in fig.data[0].hovertext for h in row)
    assert all(str(c).lower() != "nan" for row in fig.data[0].text for c in row)      # a missing value is blank


def test_reading_values_are_the_tables_numbers_rounded_once(recs):
    v = reading.reading_values(recs)
    assert v["ps"]["n_pos"] == 3 and v["ps"]["n_neg"] == 3
    assert v["ps"]["ci_pos"] == "0.800" and v["ps"]["ci_neg"] == "0.617"       # (0.6 + 0.75 + 0.5) / 3
    # the interval resamples whole problems, so a resample can miss a class: counted, below the 5% that voids it
    assert v["ps"]["auc"]["value"] == pytest.approx(8 / 9) and v["ps"]["auc"]["text"].startswith("0.89 [")
    assert v["ps"]["auc"]["note"].endswith("resamples undefined")
    assert v["solver"] is None and v["aut"] is None                           # no labels: no sentence
    assert v["ttcw"]["stories"] == 5 and v["ttcw"]["rho"]["text"].startswith("0.80")
    assert v["ttcw"]["llm_judges"] == "0.80 to 0.80"
    assert v["ppl"]["median"] == "12.5" and v["ppl"]["range"] == "10.0-15.0" and v["ppl"]["texts"] == 6
    assert v["templates"]["rates"] == "100.0%" and v["templates"]["solver_tpt"] is None
    assert v["judge"]["checks"] == [] and v["judge"]["mean_score"] == "2.00"   # 2 judged texts: below MIN_N
    # the two judged texts (2.5 and 1.5) are 10 words each: the score with its n and their length
    assert v["judge"]["score"] == "2.00 (n=2; 10 words)"
    assert v["judge"]["contradictions"] == "50%" and v["judge"]["twist_pairs"] == 2
    assert reading.value_range(0.2349, 0.2351, 2) == "0.23-0.24"
    assert reading.value_range(1, 1.0004, 1, 100, "%") == "100.0%"


def test_the_chapters_sentences_link_every_count_to_rows_the_browser_holds(recs):
    md = sentences.closing_md(recs)
    to = "../browse/rethinking.html#t="
    assert (f"on [3]({to}measures_ps&f.label=true) unconventional and [3]({to}measures_ps&f.label=false) "
            "conventional solutions") in md
    assert f"[6 texts]({to}perplexity&f.model=m1)" in md and f"[5 TTCW stories]({to}measures_ttcw)" in md
    assert f"[100.0%]({to}templates&f.n=5&f.mode=sequence) of the texts" in md
    assert sentences.formatting_md(recs).startswith("No crowd vs GPT-4 solutions with their formatting control")
    shows = "\n".join(reading.what_this_shows(recs)["this build"])
    assert f'<a href="{to}measures_ps&amp;f.label=true">3</a> and' in shows
    assert dead_in("\n".join([md, shows, reading.l_range_sentence(recs)]), recs) == []


def test_the_rubric_judge_sentence_states_its_scale_and_links_its_scores(recs):
    ps = recs["measures_ps"]
    write(recs.root, "judge", [{"set": "ps", "id": r["id"], "kind": r["kind"], "label": r["label"],
                                "judge": 1.0 + 3 * r["ci"], "scores": {"Unconventionality": 1.0 + 3 * r["ci"]},
                                "state": "ok"} for r in ps.to_dict("records")])
    fresh = Records(recs.root, recs.cfg)
    md = sentences.closing_md(fresh)
    line = next(x for x in md.split("\n") if x.startswith("- **The rubric judge**"))
    assert "(n=6; 11 words)](../browse/rethinking.html#t=judge) on its 1-5 scale (Scale: Unconventionality (1-5: " \
           "1 = the standard way" in line
    assert "of [2 prompt-twist pairs](../browse/rethinking.html#t=twist)" in line
    assert dead_in(md, fresh) == []
