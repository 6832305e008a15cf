"""AUT / MacGyver validation on a few real human-rated items with the real embedder and smollm2-135m."""
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from creval.datasets import aut, macgyver
from creval.measures import diversity as D
from creval.measures.stats import correlation as corr
from creval.models.embeddings import Embedder

pytestmark = pytest.mark.integration

needs_data = pytest.mark.skipif(aut.source(allow_download=False).is_sample
                                or macgyver.source(allow_download=False).is_sample,
                                reason="AUT / MacGyver data not found (set CREVAL_AUT_DIR, CREVAL_MACGYVER_DIR)")


def spearman_by_hand(x, y) -> float:
    """Spearman's rho written out independently of creval's stats: Pearson's r of the average ranks."""
    rx = pd.Series(np.asarray(x, float)).rank(method="average").to_numpy()
    ry = pd.Series(np.asarray(y, float)).rank(method="average").to_numpy()
    rx, ry = rx - rx.mean(), ry - ry.mean()
    return float((rx * ry).sum() / np.sqrt((rx ** 2).sum() * (ry ** 2).sum()))


@needs_data
def test_aut_metrics_on_real_rated_items():
    df = aut.load_ocsai(n=30, objects=2, seed=0)
    assert len(df) == 30 and df["source"].eq("ocsai1").all() and df["prompt"].nunique() == 2
    assert df["score"].between(1.0, 5.0).all()
    it = D.item_originality(list(df["response"]), list(df["prompt"]))
    sd = D.semdis(list(df["prompt"]), list(df["response"]))
    # both measures recomputed here from the raw embeddings: SemDis is 1 - cos(object, response), the cosine
    # to others the mean cosine with the other responses to the same object
    emb = Embedder()                                 # the embedder the measures use by default
    e_obj, e_resp = emb.encode(list(df["prompt"])), emb.encode(list(df["response"]))
    unit = lambda m: m / np.linalg.norm(m, axis=1, keepdims=True)  # noqa: E731
    assert sd == pytest.approx(1 - (unit(e_obj) * unit(e_resp)).sum(axis=1), abs=1e-5)
    sim, same = unit(e_resp) @ unit(e_resp).T, df["prompt"].to_numpy()
    for i in range(len(df)):
        others = [j for j in range(len(df)) if j != i and same[j] == same[i]]
        assert it["cosine_to_others"].iloc[i] == pytest.approx(sim[i, others].mean(), abs=1e-5)
    r = corr.spearman(sd, df["score"])
    assert r["n"] == 30 and r["rho"] == pytest.approx(spearman_by_hand(sd, df["score"]), abs=1e-9)
    assert 0 <= r["p"] <= 1
    # deterministic: the same seed draws the same items and gives the same statistic
    again = aut.load_ocsai(n=30, objects=2, seed=0)
    assert again["item_id"].tolist() == df["item_id"].tolist()
    assert corr.spearman(D.semdis(list(again["prompt"]), list(again["response"])), again["score"])["rho"] == \
        pytest.approx(r["rho"], abs=1e-6)


@needs_data
def test_cambridge_and_macgyver_loaders():
    c = aut.load_cambridge(n=10)
    assert len(c) == 10 and c["score"].between(0, 4).all() and set(c["prompt"]) <= {"bowl", "paperclip"}
    u = macgyver.load_unconventional(n_per_class=3)
    assert u["unconventional"].sum() == 3 and len(u) == 6 and u["source"].eq("macgyver").all()
    sets = macgyver.human_solution_sets(min_solutions=3, problems=2)
    assert len(sets) == 2 and all(len(s) >= 3 for s in sets["solutions"])


@needs_data
def test_novelty_judge_on_real_aut_items(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "calls.sqlite"))
    from creval.judges.novelty import rank_groups
    from creval.judges.registry import make_judge
    from creval.models.registry import load_model
    df = aut.load_ocsai(n=6, objects=2, seed=1)
    judge = make_judge("novelty", load_model("smollm2-135m"), domain="aut")    # as the validation run builds it
    q = [f"Name an unusual use for a {o}." for o in df["prompt"]]
    nov = rank_groups(q, list(df["response"]), list(df["prompt"]), judge)
    assert sorted(nov["novelty_rank"].tolist()) == [1, 1, 2, 2, 3, 3]
    per_group = nov.assign(prompt=df["prompt"]).drop_duplicates("prompt")["group_comparisons"]
    assert (per_group >= 2).all() and (per_group <= 3).all()      # merge sort of 3 items: 2 or 3 comparisons
    assert judge.calls == 2 * per_group.sum()                       # both presentation orders every time
    # the score is (n - rank) / (n - 1) within each object of three: 1, 0.5, 0 when the ranks are 1, 2, 3
    assert nov["novelty_score"].tolist() == pytest.approx([(3 - r) / 2 for r in nov["novelty_rank"]])
    rho = corr.spearman(nov["novelty_score"], df["score"], min_n=5)
    assert rho["n"] == 6
    if df["score"].nunique() > 1:                    # defined whenever the human scores are not all equal
        assert rho["rho"] == pytest.approx(spearman_by_hand(nov["novelty_score"], df["score"]), abs=1e-9)
    else:
        assert math.isnan(rho["rho"])


def test_cli_diversity_and_bad_file(tmp_path):
    f = tmp_path / "t.jsonl"
    f.write_text('{"text": "the cat sat"}\n{"text": "the cat ran"}\n')
    out = subprocess.run([sys.executable, "-m", "creval", "metrics", "diversity", str(f), "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    import json
    d = json.loads(out.stdout)
    assert d["self_bleu"] == pytest.approx((2 / 3 * 1 / 2 * 1 / 2) ** (1 / 3), abs=1e-9)
    assert d["distinct_1"] == pytest.approx(4 / 6)
    bad = tmp_path / "bad.csv"
    bad.write_text("words\nhello\n")
    out = subprocess.run([sys.executable, "-m", "creval", "metrics", "diversity", str(bad)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "bad.csv" in out.stderr and "text" in out.stderr


TABLES = ("data_sources", "step_diversity", "solution_novelty", "sample_size", "aut_items", "cambridge",
          "macgyver_items", "human_reference")


def test_validation_run_resumes_a_cut_run(tmp_path):
    """The smoke run writes every table; a run cut short (no manifest, a table lost, a table and its units
    lost) is finished by the next run from the call cache, with the same rows."""
    from creval.book.params import effective_params, load_params
    from creval.core.ledger import LEDGER
    from creval.core.paths import REPO
    from creval.studies.validation import STUDY
    from creval.studies.validation.config import ValidationConfig
    from creval.studies.validation.run import run

    cfg = ValidationConfig.from_params(effective_params(load_params(REPO / "params/smoke.yaml",
                                                                    [f"run_root={tmp_path}"])))
    recs = STUDY.records(cfg)
    assert set(TABLES) <= set(recs.tables) and recs.manifest["complete"]
    assert set(recs.sample_size["n"]) == {cfg.divergent().divergent_n_samples, cfg.validation_n_large}
    assert len(recs.solution_novelty) == len(recs.step_diversity.drop_duplicates("problem_id"))
    before = {t: (cfg.run_dir / f"{t}.jsonl").read_text() for t in TABLES}
    (cfg.run_dir / "manifest.json").unlink()
    (cfg.run_dir / "aut_items.jsonl").unlink()
    (cfg.run_dir / "human_reference.jsonl").unlink()                    # and its units, as if cut before them
    done = cfg.run_dir / "units" / "calls.jsonl"
    done.write_text("".join(ln for ln in done.read_text().splitlines(True) if '"reference/' not in ln[:40]))
    with LEDGER.collect() as t:
        run(cfg)
    assert t.made == []
    assert {t: (cfg.run_dir / f"{t}.jsonl").read_text() for t in TABLES} == before
