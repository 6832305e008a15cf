"""The comparison's report on fixture records of three models with known differences, and its sources."""
import json

import numpy as np
import pandas as pd
import pytest

from creval.measures.stats import numbers as num
from creval.studies import scores as SC
from creval.studies.aut.values import values as aut_values
from creval.studies.compare import report
from creval.studies.compare.config import CompareConfig
from creval.studies.compare.sources import batch_sources, cost_rows, root_config, root_path
from creval.studies.convergent.values import values as convergent_values
from creval.studies.divergent.values import values as divergent_values
from creval.studies.links import dead
from creval.studies.rethinking.values import values as rethinking_values

N = 20
BASE = np.linspace(1.0, 2.9, N)                 # item difficulty shared by every model
WOBBLE = np.where(np.arange(N) % 2, 0.1, -0.1)  # mean 0


class Recs:
    """Records of a compare run: named tables and a cfg."""
    def __init__(self, cfg=None, **tables):
        self.cfg, self.tables = cfg, tables

    def __getitem__(self, name):
        return self.tables.get(name, pd.DataFrame())


def values_of(models: dict, measure="semantic entropy (macgyver)", judge="") -> pd.DataFrame:
    return pd.DataFrame([{"model": m, "study": "divergent", "measure": measure, "item": f"p{i}", "value": float(v),
                          "judge": judge} for m, xs in models.items() for i, v in enumerate(xs)])


def three() -> pd.DataFrame:
    # a = c + 1 on every item; b = a + (+-0.1), mean difference 0 from a
    return values_of({"a": BASE + 1.0, "b": BASE + 1.0 + WOBBLE, "c": BASE})


def test_estimates_and_intervals():
    est = report.model_estimates(three(), n_boot=300, seed=0).set_index("model")
    assert est.loc["a", "mean"] == pytest.approx(BASE.mean() + 1) and est.loc["a", "n"] == N
    assert est.loc["c", "lo"] < BASE.mean() < est.loc["c", "hi"]
    assert est.loc["a", "hi"] - est.loc["a", "lo"] == pytest.approx(est.loc["c", "hi"] - est.loc["c", "lo"])


def test_paired_verdicts_and_intervals():
    d = report.paired_differences(three(), n_boot=300, seed=0).set_index(["a", "b"])
    ac = d.loc[("a", "c")]
    assert ac["difference"] == pytest.approx(1.0) and ac["lo"] == pytest.approx(1.0) and ac["hi"] == pytest.approx(1.0)
    assert ac["verdict"] == "different" and ac["n"] == N
    ab = d.loc[("a", "b")]
    assert ab["difference"] == pytest.approx(0.0, abs=1e-12) and ab["lo"] < 0 < ab["hi"]
    assert ab["verdict"] == "not shown"
    bc = d.loc[("b", "c")]
    assert bc["difference"] == pytest.approx(1.0) and 0.9 <= bc["lo"] < 1.0 < bc["hi"] <= 1.1
    assert bc["verdict"] == "different"


def test_only_shared_items_are_paired_and_too_few_is_not_shown():
    v = values_of({"a": [1.0, 2.0, 3.0], "c": [0.0, 0.0, 0.0]})
    d = report.paired_differences(v, n_boot=100).iloc[0]
    assert d["n"] == 3 and d["verdict"] == "not shown" and "< 5" in d["note"] and np.isnan(d["lo"])
    v = three()
    v = v[~((v["model"] == "c") & (v["item"].isin(["p0", "p1"])))]      # c skipped two items
    assert report.paired_differences(v, n_boot=100).set_index(["a", "b"]).loc[("a", "c"), "n"] == N - 2


def test_tables_figure_and_reading():
    from creval.studies.compare.config import CompareConfig
    cfg = CompareConfig(n_boot=200)
    recs = Recs(cfg, values=three(), sources=pd.DataFrame([{"root": "runs/x", "study": "aut", "status": "missing",
                                                             "run_dir": "", "models": ["a"], "note": "n"}]))
    t = report.table_models(recs)
    assert list(t.columns) == ["measure", "higher means", "a", "b", "c"] and "caption" in t.attrs
    assert t.loc[0, "c"].startswith(f"{BASE.mean():.2f} [") and t.loc[0, "c"].endswith(f"(n={N})")
    diff = report.table_differences(recs).set_index("a - b")
    assert diff.loc["a - c", "difference [95% CI]"] == "1.000 [1.000, 1.000]"
    assert diff.loc["a - b", "verdict"] == "not shown"
    fig = report.fig_models(recs)
    assert [tr.name for tr in fig.data] == ["a", "b", "c"]
    z = {tr.name: tr.x[0] for tr in fig.data}
    sd = three()["value"].std(ddof=1)
    assert z["a"] - z["c"] == pytest.approx(1.0 / sd) and z["a"] + z["b"] + z["c"] == pytest.approx(0.0, abs=1e-12)
    r = report.reading_values(recs)
    assert r["models"] == ["a", "b", "c"] and r["pairs"] == 3 and r["different"] == 2
    assert r["missing"] == ["aut in runs/x"]
    assert "2 of 3 paired differences" in report.reading_markdown(recs)
    assert f"on [{r['measures']} measures](../browse/compare.html#t=values):" in report.reading_markdown(recs)
    assert not dead(report.reading_markdown(recs), {"compare": {"values": recs["values"].to_dict("records")}})


def test_one_model_says_what_to_run_and_names_the_judge():
    recs = Recs(CompareConfig(model="m1"), values=values_of({"m1": BASE}, "AUT originality (judge score 1-5)", "jm"))
    md = report.reading_markdown(recs)
    assert "creval batch m1 <other model or spec.yaml>" in md and "models=[" in md and "`jm`" in md
    assert report.table_differences(recs).empty and report.table_homogeneity(recs).empty
    assert report.table_costs(recs).empty
    empty = Recs(CompareConfig())
    for f in (report.table_models, report.table_differences, report.table_homogeneity, report.table_costs,
              report.table_cost_per_point, report.table_sources):
        assert "caption" in f(empty).attrs
    assert len(report.fig_models(empty).data) == 0 and "One model only" in report.reading_markdown(empty)


def test_cost_per_point_splits_the_shared_calls():
    values = pd.concat([values_of({"a": BASE[:4], "b": BASE[:4]})])
    cols = ["root", "study", "model", "calls", "input tokens", "output tokens", "cost usd", "sandbox runs"]
    costs = pd.DataFrame([("r", "divergent", "a", 8, 40, 0, 0.4, 2), ("r", "divergent", "shared", 4, 0, 0, 0.0, 0)],
                         columns=cols)
    c = report.cost_per_point(values, costs).set_index("model")
    assert c.loc["a", "sandbox runs / point"] == pytest.approx(2 / 4) and c.loc["b", "sandbox runs / point"] == 0
    assert c.loc["a", "calls / point"] == pytest.approx((8 + 2) / 4) and c.loc["a", "USD / point"] == pytest.approx(0.1)
    assert c.loc["b", "calls / point"] == pytest.approx(2 / 4) and c.loc["b", "tokens / point"] == 0


def test_homogeneity_estimates_name_the_kinds():
    h = pd.DataFrame([{"task": "t", "prompt": f"p{i}", "a": a, "b": b, "n_a": 2, "n_b": 2, "cosine": c + 0.01 * i,
                       "overlap": o} for i in range(6) for a, b, c, o in
                      (("m1", "m2", 0.5, 0.25), ("m1", "m1", 0.6, 0.5), ("people", "people", 0.2, 0.0),
                       ("m1", "people", 0.3, 0.0))])
    e = report.homogeneity_estimates(h, n_boot=200).set_index(["a", "b"])
    assert e.loc[("m1", "m2"), "kind"] == "between models" and e.loc[("people", "people"), "kind"] == "people - people"
    assert e.loc[("m1", "m1"), "kind"] == "within one model" and e.loc[("m1", "people"), "kind"] == "model vs people"
    assert e.loc[("m1", "m2"), "cosine"] == pytest.approx(0.525) and e.loc[("m1", "m2"), "overlap"] == 0.25
    assert e.loc[("m1", "m2"), "overlap lo"] == 0.25 == e.loc[("m1", "m2"), "overlap hi"]
    assert e.loc[("m1", "m2"), "cosine lo"] < 0.525 < e.loc[("m1", "m2"), "cosine hi"]


# -- values from each study's records ---------------------------------------------------------------------
def test_values_from_study_records():
    d = Recs(problems=pd.DataFrame([("a", "macgyver", "p1", 1.5), ("z", "macgyver", "p1", 9.0)],
                                   columns=["model", "domain", "problem_id", "mean_semantic_entropy"]),
             steps=pd.DataFrame([{"model": "a", "domain": "macgyver", "problem_id": "p1", "n": 3, "is_stop": False,
                                  "cluster_ids": ids} for ids in ([0, 1, 1], [0, 0, 0])] +
                                [{"model": "a", "domain": "macgyver", "problem_id": "p1", "n": 3, "is_stop": True,
                                  "cluster_ids": [0, 1, 2]}]))
    rows = {r["measure"]: r for r in divergent_values(d, ["a"])}
    assert rows["semantic entropy (macgyver)"]["value"] == 1.5 and rows["distinct@3 (macgyver)"]["value"] == 1.5
    v = Recs(bench_verdicts=pd.DataFrame([{"model": "a", "domain": "macgyver", "pair_id": "p1::a", "verdict": x,
                                           "unparsed": u} for x, u in ((True, False), (False, False), (None, True))]))
    (row,) = convergent_values(v, ["a"], "jm")
    assert row["value"] == 0.5 and row["item"] == "p1" and row["judge"] == "jm"
    j = Recs(judgments=pd.DataFrame([{"judge": jd, "method": m, "generator": "a", "object": "fork", "level": "common",
                                      "value": x} for jd, m, x in (("jm", "score", 2.0), ("jm", "score", 4.0),
                                                                   ("other", "score", 5.0), ("jm", "rank", 0.0))]))
    (row,) = aut_values(j, ["a"], "jm")
    assert row["value"] == 3.0 and row["item"] == "fork/common"


# -- sources: a root's missing study is named, never run --------------------------------------------------
def test_batch_roots_read_only_finished_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path))
    cfg = CompareConfig(compare_roots=("runs/m1", "runs/empty"))
    c = root_config(cfg, "runs/m1", "divergent", "m1")
    c.run_dir.mkdir(parents=True)
    (c.run_dir / "manifest.json").write_text(json.dumps({"complete": True, "params": {"run_id": c.run_id,
                                                                                       "model": "m1"}}))
    (c.run_dir / "calls.jsonl").write_text("\n".join(json.dumps(x) for x in (
        {"model": "m1", "cached": False, "input_tokens": 5, "output_tokens": 2, "cost_usd": 0.01, "seconds": 1},
        {"model": "judge", "cached": True, "input_tokens": 5, "output_tokens": 2, "cost_usd": 0.01, "seconds": 1})))
    other = root_path("runs/m1") / "aut" / "x1"
    other.mkdir(parents=True)
    (other / "manifest.json").write_text(json.dumps({"complete": True, "params": {"run_id": "x1", "model": "m1"}}))
    got = {(s.root, s.study): s for s in batch_sources(cfg)}
    assert got[("runs/m1", "divergent")].status == "read" and got[("runs/m1", "divergent")].models == ("m1",)
    assert got[("runs/m1", "aut")].status == "missing" and "other parameters: x1" in got[("runs/m1", "aut")].note
    assert got[("runs/m1", "neocoder")].status == "missing"
    assert all(got[("runs/empty", s)].status == "missing" for s in ("divergent", "aut"))
    assert not (root_path("runs/m1") / "neocoder").exists()          # nothing was run
    (cost,) = cost_rows(got[("runs/m1", "divergent")])
    assert (cost["model"], cost["calls"], cost["input tokens"], cost["cost usd"]) == ("m1", 2, 10, 0.02)
    assert cfg.resolved()["roots"]["runs/m1"]["divergent"] == c.run_id


def test_a_run_of_several_models_splits_its_calls_and_the_judge_is_shared(tmp_path):
    from creval.studies.compare.sources import Source
    from creval.studies.contract import Records
    (tmp_path / "calls.jsonl").write_text("\n".join(json.dumps({"kind": k, "model": m, "cached": False,
                                                                "input_tokens": 1, "output_tokens": 0})
                                                    for k, m in (("chat", "m1"), ("chat", "m2"), ("chat", "m2"),
                                                                 ("chat", "jm"), ("embed", "e"), ("sandbox", "x"))))
    src = Source("r", "aut", ("m1", "m2"), CompareConfig(judge_model="jm"), Records(tmp_path), shared=True)
    assert {r["model"]: r["calls"] for r in cost_rows(src)} == {"m1": 1, "m2": 2, "shared": 2}
    src = Source("r", "aut", ("m1", "m2"), CompareConfig(judge_model="m2"), Records(tmp_path), shared=True)
    assert {r["model"]: r["calls"] for r in cost_rows(src)} == {"m1": 1, "shared": 4}
    # the sandbox run is local work: not a call, but counted in its own column (no model asked: shared)
    assert {r["model"]: r["sandbox runs"] for r in cost_rows(src)} == {"m1": 0, "shared": 1}
    costs = pd.DataFrame(cost_rows(src))
    assert report.cost_by_model(costs).set_index("model").loc["shared", "sandbox runs"] == 1
    assert "'sandbox runs'" in report.table_costs(Recs(CompareConfig(), costs=costs)).attrs["caption"]


def test_a_constant_judge_is_flagged_in_the_table_and_the_figure():
    # a judge that gives 2 to all but one of 20 items: its mean's narrow interval is no finding
    flat = np.full(N, 2.0)
    flat[0] = 1.0
    recs = Recs(CompareConfig(n_boot=100), values=values_of({"a": flat, "b": BASE}, "AUT originality", "jm"))
    t = report.table_models(recs)
    assert "CONSTANT: a near-constant value (2 on 19 of 20 (95%) items)" in t.loc[0, "a"]
    assert "CONSTANT" not in t.loc[0, "b"] and "1 cell(s) marked CONSTANT" in t.attrs["caption"]
    fig = report.fig_models(recs)
    assert [list(tr.marker.symbol) for tr in fig.data] == [["x-open"], ["circle"]]
    assert "a constant value" in fig.layout.title.text
    # a judge's 1-5 scores averaged per item, about 2 everywhere: flagged once rounded to the scale
    about2 = np.where(np.arange(N) % 4 == 0, 1.9, 2.0)
    assert report.flat_values(about2, judged=True) == ("a constant judge score (2 on all 20 items), rounded to the "
                                                        "1-5 scale")
    assert report.flat_values(about2) == "" and report.flat_values(BASE, judged=True) == ""


def test_compare_over_other_roots_runs_nothing_upstream_here():
    from creval.studies.registry import in_order
    here = [s.name for s in in_order(["compare"], {})]
    assert here[-1] == "compare" and {"divergent", "convergent", "neocoder", "rethinking", "aut"} <= set(here)
    assert [s.name for s in in_order(["compare"], {"compare_roots": ["runs/a", "runs/b"]})] == ["compare"]


def test_a_judged_measure_judged_differently_is_left_out_and_the_caption_says_why(tmp_path):
    """Judge provenance on the upstream judged values (issue 36 item 3): two models whose AUT originality was
    judged under different judge prompts are not put side by side; the same provenance is."""
    from creval.studies.compare.values import judge_provenance
    same = judge_provenance(CompareConfig(judge_model="smollm2-135m"))
    assert set(same) == {"judge_model", "judge_version", "prompt_sha", "sampling", "order_seed"}
    other = {**same, "prompt_sha": "0" * 16}
    v = values_of({"a": BASE + 1.0, "c": BASE}, measure="AUT originality (judge score 1-5)", judge="smollm2-135m")
    v["provenance"] = [same] * len(v)
    assert set(report.model_estimates(v, n_boot=50)["model"]) == {"a", "c"}
    v.loc[v["model"] == "c", "provenance"] = pd.Series([other] * N, index=v.index[v["model"] == "c"])
    assert report.refused_measures(v) and "prompt_sha" in report.refused_measures(v)[
        "AUT originality (judge score 1-5)"]
    assert report.model_estimates(v, n_boot=50).empty and report.paired_differences(v, n_boot=50).empty
    unjudged = three()
    assert report.refused_measures(unjudged) == {} and len(report.model_estimates(unjudged, n_boot=50)) == 3
    caption = report.table_models(Recs(CompareConfig(n_boot=50), values=pd.concat([unjudged, v]))).attrs
    assert "judged differently" in json.dumps(caption, default=str)
    wordier = CompareConfig.from_params({"judge_model": "smollm2-135m", "judge_word_limit": 99})
    assert judge_provenance(wordier)["sampling"] != same["sampling"]


def test_texts_are_compared_in_bits_per_byte_not_perplexity():
    """A one-word text's perplexity runs to 10^5 and would swamp a mean; its bits per byte do not."""
    p = pd.DataFrame([{"set": "aut", "id": "a1", "model": "m", "ppl": 412544.0, "bpb": 2.34},
                      {"set": "aut", "id": "a2", "model": "m", "ppl": 30.0, "bpb": 0.9},
                      {"set": "aut", "id": "a3", "model": "other", "ppl": 5.0, "bpb": 0.5}])
    rows = rethinking_values({"perplexity": p}, ["m"])
    assert [(r["measure"], r["item"], r["value"]) for r in rows] == [("bits per byte (aut texts)", "a1", 2.34),
                                                                      ("bits per byte (aut texts)", "a2", 0.9)]


def test_human_ideas_come_from_the_study_that_offers_people_for_the_task(monkeypatch):
    from creval.core.errors import CrevalError
    from creval.studies.compare.values import human_ideas
    from creval.studies.contract import Study
    from creval.studies.registry import STUDIES
    answers = pd.DataFrame({"problem_id": ["q1", "q1", "q1", "q2"], "text": [" a ", "b", "c", "d"]})

    def people(task):
        if task == "broken task":
            raise CrevalError("no toy data here")
        return answers if task == "toy task" else None
    monkeypatch.setitem(STUDIES, "toy", Study("toy", "chapters/99-toy.ipynb", CompareConfig, run=lambda c: c,
                                              people=people))
    ideas = pd.DataFrame({"task": ["toy task", "toy task", "other task", "broken task"],
                          "prompt": ["q1", "q3", "q1", "q1"], "source": "m", "text": "x"})
    rows, notes = human_ideas(ideas, 2, 0)
    assert [(r["task"], r["prompt"], r["source"]) for r in rows] == [("toy task", "q1", "people")] * 2
    assert {r["text"] for r in rows} <= {"a", "b", "c"}                 # two of q1's three, stripped
    assert notes == ["broken task: no human responses (no toy data here)"]
    assert STUDIES["divergent"].people("divergent first step (hypogen)") is None
    assert STUDIES["aut"].people("divergent first step (macgyver)") is None


def test_every_judge_score_shows_n_interval_length_and_scale():
    aut = values_of({"a": BASE, "b": BASE + 0.5}, "AUT originality (judge score 1-5)", "jm")
    aut["item"] = [f"o{i % 2}/creative" for i in range(len(aut))]
    conv = values_of({"a": [0.5, 1.0, 0.0]}, "convergent judge score (macgyver)", "jm")
    ideas = pd.DataFrame([{"task": "AUT uses", "prompt": "o0", "source": "a", "text": "a hat for a cat"},
                          {"task": "AUT uses", "prompt": "o1", "source": "a", "text": "a doorstop"},
                          {"task": "AUT uses", "prompt": "o9", "source": "a", "text": "not scored here at all"},
                          {"task": "AUT uses", "prompt": "o0", "source": "b", "text": "a boat"}])
    recs = Recs(CompareConfig(n_boot=200), values=pd.concat([aut, conv, three()], ignore_index=True), ideas=ideas)
    t = report.table_judge_scores(recs)
    assert list(t.columns) == report.JUDGE_COLUMNS and set(t["measure"]) == {"AUT originality (judge score 1-5)",
                                                                            "convergent judge score (macgyver)"}
    a = t[(t["model"] == "a") & t["measure"].str.startswith("AUT")].iloc[0]
    s = SC.score_summary(BASE, n_boot=200, seed=0)
    assert a["n"] == N and a["score [95% CI]"] == num.fmt_estimate(s["mean"], s["lo"], s["hi"], 2)
    assert a["mean words of the texts scored"] == "4"            # (5 + 2) / 2 = 3.5 words; o9 was not scored
    assert a["scale"].startswith("Scale: creativity score (1-5: 1 = least creative")
    c = t[t["measure"].str.startswith("convergent")].iloc[0]
    assert c["n"] == 3 and c["mean words of the texts scored"] == "not recorded" and "0 = it meets no" in c["scale"]
    cells = report.table_models(recs).set_index("measure")
    assert cells.loc["AUT originality (judge score 1-5)", "b"].endswith(f"(n={N}; 2 words)")
    assert cells.loc["semantic entropy (macgyver)", "a"].endswith(f"(n={N})")      # no judge: no length
    assert report.table_judge_scores(Recs(CompareConfig())).attrs["caption"] == "No judged measure in these records."
