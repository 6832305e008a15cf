"""Chapter 10, the declared human sets (issue 63): the loaders' long tables, the fold to texts, the raters'
ceiling, the card rows (the within-prompt estimand, prompts as the unit, the raters named, the ceiling drawn)
and the report; on the bundled samples the rows say they are not testable, on the staged data they have words."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from creval.core import paths
from creval.datasets import hanna, rated, slm
from creval.datasets.rated import fold
from creval.grade import raters as R
from creval.measures.stats import verdicts as V
from creval.studies.humansets import grading, report
from creval.studies.humansets.run import judge_columns, whose

STAGED = paths.REPO.parent / "shared" / "data"


class Recs(dict):
    """The three tables of a humansets run."""


def recs_of(name: str, long: pd.DataFrame, sample: bool) -> Recs:
    hs = {"hanna": hanna.SET, "slm": slm.SET}[name]
    texts, mats, raters = fold(long, [c.column for c in hs.criteria])
    rng = np.random.default_rng(0)
    t = texts.assign(set=name, words=texts["text"].str.split().str.len().astype(float),
                     lines=1.0, mattr=rng.normal(size=len(texts)), distinct_1=texts["text"].str.len() % 7)
    ceil = [{"set": name, "criterion": c.column, **R.ceiling_within(mats[c.column], texts["prompt"].to_numpy()),
             "pooled": R.ceiling_within(mats[c.column])["agreement"]} for c in hs.creative]
    return Recs({"texts": t, "ceilings": pd.DataFrame(ceil),
                 "sets": pd.DataFrame([{"set": name, "title": hs.title, "source": "x", "sample": sample,
                                        "why": "the bundled sample" if sample else "", "n_texts": len(texts),
                                        "n_prompts": texts["prompt"].nunique(), "n_raters": len(raters),
                                        "raters": whose(long, hs.rater_kind), "cite": hs.cite}])})


def test_the_samples_load_through_the_chain_and_fold_per_text(monkeypatch):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    for hs in (hanna.SET, slm.SET):
        long, src = hs.load()
        assert src.is_sample and list(long.columns) == [*rated.LONG, *(c.column for c in hs.criteria)]
        texts, mats, raters = fold(long, [c.column for c in hs.creative])
        c = hs.creative[0].column
        assert len(texts) == long["id"].nunique() and mats[c].shape == (len(texts), len(raters))
        by_hand = long.groupby("id", sort=False)[c].mean().reindex(texts["id"]).to_numpy()
        assert np.allclose(texts[c].to_numpy(), by_hand)


def test_rows_on_a_sample_are_not_testable_and_say_so(monkeypatch):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    long, _ = hanna.SET.load()
    rows = grading.set_rows(recs_of("hanna", long, True), "hanna", 100, 0)
    assert len(rows) == 2 * 2            # Surprise and Complexity x the two measures of the fixture
    assert {r["tracking"] for r in rows} == {V.TESTABLE} and all("sample" in r["reason"] for r in rows)
    assert all(r["raters"] == "3 raters per text, 3 in all (crowd)" for r in rows)


def test_the_ceiling_is_one_rater_held_out_against_the_others():
    rng = np.random.default_rng(2)
    q = rng.normal(size=200)
    g = np.repeat(np.arange(20), 10)
    m = np.column_stack([q + s * rng.normal(size=200) for s in (0.5, 0.5, 0.5)])
    got = R.ceiling_within(m, g)
    # by hand: rater 0 against the mean of 1 and 2, within prompts
    from creval.measures.stats import correlation as corr
    from creval.measures.stats.prompts import within_ranks
    one = corr.spearman(within_ranks(m[:, 0], g), within_ranks(m[:, 1:].mean(axis=1), g))["rho"]
    assert got["n_raters"] == 3 and abs(got["agreement"] - one) < 0.1 and 0.6 < got["agreement"] < 0.95
    level = np.repeat(rng.normal(size=20), 10)           # raters who agree only on each prompt's level
    prompt_only = np.column_stack([level + 0.01 * rng.normal(size=200) for _ in range(3)])
    assert R.ceiling_within(prompt_only)["agreement"] > 0.9
    assert abs(R.ceiling_within(prompt_only, g)["agreement"]) < 0.3


@pytest.mark.skipif(not (STAGED / "hanna").is_dir() or not (STAGED / "slm_synopses").is_dir(),
                    reason="HANNA or the SLM synopses not staged beside the checkout")
def test_the_staged_sets_give_rows_with_words_narrower_than_ttcws():
    for name, hs, n, prompts in (("hanna", hanna.SET, 1056, 96), ("slm", slm.SET, 122, 61)):
        long, src = hs.load()
        assert not src.is_sample and long["id"].nunique() == n and long["prompt"].nunique() == prompts
        recs = recs_of(name, long, False)
        recs["texts"] = recs["texts"].assign(**judge_columns(hs, list(recs["texts"]["id"])))
        rows = grading.set_rows(recs, name, 200, 0)
        assert rows and all(r["tracking"] != V.TESTABLE for r in rows)
        judges = [r for r in rows if r["measure"].startswith("LLM judge")]
        assert len(judges) == (10 if name == "hanna" else 0)          # HANNA's 5 released judges x 2 criteria
        # a text none of whose prompt variants the judge answered readably is left out of its row
        assert all(r["paper"] == "this book's own question" and 1000 < r["n"] <= 1056 for r in judges)
        assert {r["units"] for r in rows} == {prompts}                       # prompts resampled whole
        if name == "hanna":
            assert all(r["hi"] - r["lo"] < 0.2 for r in rows)                  # TTCW's 12 plots give ~0.8
            assert all(r["ceiling"] is not None and 0 < r["ceiling"] < 1 for r in rows)
            assert {r["raters"] for r in rows} == {"3 raters per text, 22 in all (crowd)"}


def test_the_report_leads_with_the_findings():
    t = pd.DataFrame([{"id": f"t{i}", "prompt": f"p{i // 4}", "prompt_text": "", "author": "Human" if i % 4 == 0
                       else "GPT", "kind": "person" if i % 4 == 0 else "model",
                       "text": " ".join(["w"] * (10 + i)), "rater": r, "rater_kind": "crowd",
                       **{c.column: float((i * 7 + j) % 5 + 1) for c in hanna.CRITERIA}}
                      for i in range(48) for j, r in enumerate(("a", "b", "c"))])
    recs = recs_of("hanna", t, False)
    rows = grading.set_rows(recs, "hanna", 100, 0)
    assert report.summary(recs, rows).startswith("**HANNA")
    df = report.table_rows(rows)
    assert len(df) == len(rows) and list(df.columns) == report.ROWS and df.attrs["caption"]
    assert report.fig_rows(rows).data                                           # the forest plot draws
    assert len(report.table_sets(recs)) == 1 and len(report.table_ceilings(recs)) == 2
    assert report.summary(Recs({"sets": pd.DataFrame()}), []) == "No human set was read."


@pytest.mark.skipif(not (STAGED / "hanna" / hanna.JUDGE_FILE).exists(), reason="HANNA's judge scores not staged")
def test_hannas_released_judges_load_as_a_long_table_with_unread_replies_kept_apart():
    j = hanna.load_judges()
    assert len(j) == 5 * 4 * 1056 * 6 and set(j["judge"]) == set(hanna.JUDGES)
    assert j["score"].dropna().between(1, 5).all() and (~j["parsed"]).sum() == j["score"].isna().sum() > 0
    human = hanna.load()[0].groupby("id")["surprise"].mean()
    one = j[(j["judge"] == "ChatGPT") & (j["variant"] == 1) & (j["criterion"] == "surprise")].set_index("id")
    assert set(one.index) == set(human.index)                 # every story, joined by its id


def test_the_sample_judges_are_read_and_a_folder_without_the_judge_file_has_none(monkeypatch, tmp_path):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    j = hanna.load_judges()
    assert set(j["judge"]) == {"SampleJudge-A", "SampleJudge-B"} and len(j) == 2 * 6 * 2 * 12
    assert (~j["parsed"]).sum() == 1 and j["score"].isna().sum() == 1       # the one reply marked unreadable
    (tmp_path / hanna.FILE).write_bytes((hanna.source().path / hanna.FILE).read_bytes())
    assert hanna.load_judges(tmp_path).empty


def test_a_set_rated_by_experts_and_lay_readers_gets_rows_for_each_kind(monkeypatch, tmp_path):
    # 12 prompts x 3 texts, each scored by 2 of 4 experts (who follow the text's length) and 2 of 4 lay readers (who
    # do not): every criterion is read over all raters, then over each kind alone, with that kind's own ceiling
    from creval.datasets.base import Dataset, Source
    from creval.studies.humansets import run as H
    from creval.studies.humansets.config import HumansetsConfig
    rng = np.random.default_rng(4)
    rows = []
    for g in range(12):
        for w in range(3):
            n = int(rng.integers(20, 120))
            text = " ".join(f"w{int(x)}" for x in rng.integers(0, 400, n))
            for kind, who in (("expert", rng.choice(4, 2, replace=False)), ("lay", rng.choice(4, 2, replace=False))):
                for r in who:
                    score = 1 + 4 * (n - 20) / 100 + rng.normal(0, 0.3) if kind == "expert" else rng.integers(1, 6)
                    rows.append({"id": f"t{g}-{w}", "prompt": f"p{g}", "prompt_text": f"prompt {g}", "author": "a",
                                 "kind": "person" if w == 0 else "model", "text": text, "rater": f"{kind}{r}",
                                 "rater_kind": kind, "originality": float(np.clip(score, 1, 5))})
    long = pd.DataFrame(rows)
    crit = (rated.Criterion("originality", "Originality", 1, 5, creative=True),)
    ds = Dataset(name="mixed", env="X", shared="mixed", files={}, required=())
    hs = rated.HumanSet("mixed", "Mixed", ds, crit, lambda: (long, Source("local", tmp_path)), "expert and lay",
                        short="MIXED")
    monkeypatch.setitem(H.SETS, "mixed", hs)
    monkeypatch.setitem(grading.SETS, "mixed", hs)
    info, texts, ceilings = H.set_tables(HumansetsConfig.from_params({"humansets_measures": ["lexical"]}), "mixed")
    t = pd.DataFrame([{**r, **r["values"]} if "values" in r else r for r in texts])
    experts = long[long["rater_kind"] == "expert"].groupby("id")["originality"].mean()
    assert np.allclose(t.set_index("id")["originality@expert"], experts.reindex(t["id"]))
    assert [c["criterion"] for c in ceilings] == ["originality", "originality@expert", "originality@lay"]
    recs = Recs({"texts": t.assign(set="mixed"), "ceilings": pd.DataFrame(ceilings), "sets": pd.DataFrame([info])})
    card = grading.set_rows(recs, "mixed", 200, 0)
    kinds = {r["human data"]: r["raters"] for r in card if r["measure"] == card[0]["measure"]}
    assert set(kinds) == {"MIXED: Originality (1-5, raters' mean)", "MIXED: Originality (1-5, expert raters' mean)",
                          "MIXED: Originality (1-5, lay raters' mean)"}
    assert kinds["MIXED: Originality (1-5, lay raters' mean)"].startswith("lay raters only")
    ceil = {c["criterion"]: c["agreement"] for c in ceilings}
    assert ceil["originality@expert"] > 0.6 > 0.3 > ceil["originality@lay"]   # experts agree; lay readers do not
