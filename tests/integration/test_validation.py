"""AUT / MacGyver validation on a few real human-rated items with the real embedder and smollm2-135m."""
import math
import subprocess
import sys

import numpy as np
import pytest

from creval.measures import diversity as D
from creval.datasets import aut, macgyver
from creval.measures import stats as S

pytestmark = pytest.mark.integration

needs_data = pytest.mark.skipif(aut.source(allow_download=False).is_sample
                                or macgyver.source(allow_download=False).is_sample,
                                reason="AUT / MacGyver data not found (set CREVAL_AUT_DIR, CREVAL_MACGYVER_DIR)")


@needs_data
def test_aut_metrics_on_real_rated_items():
    df = aut.load_ocsai(n=30, objects=2, seed=0)
    assert len(df) == 30 and df["source"].eq("ocsai1").all() and df["prompt"].nunique() == 2
    assert df["score"].between(1.0, 5.0).all()
    it = D.item_originality(list(df["response"]), list(df["prompt"]))
    sd = D.semdis(list(df["prompt"]), list(df["response"]))
    assert it["cosine_to_others"].between(-1, 1).all() and np.all((sd >= 0) & (sd <= 2))
    r = S.spearman(sd, df["score"])
    assert r["n"] == 30 and -1 <= r["rho"] <= 1 and 0 <= r["p"] <= 1
    # deterministic: the same seed draws the same items and gives the same statistic
    again = aut.load_ocsai(n=30, objects=2, seed=0)
    assert again["item_id"].tolist() == df["item_id"].tolist()
    assert S.spearman(D.semdis(list(again["prompt"]), list(again["response"])), again["score"])["rho"] == \
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
    rho = S.spearman(nov["novelty_score"], df["score"], min_n=5)
    assert rho["n"] == 6 and (math.isnan(rho["rho"]) or -1 <= rho["rho"] <= 1)


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
    from creval.studies.validation.config import ValidationConfig
    from creval.studies.validation.run import records, run

    cfg = ValidationConfig.from_params(effective_params(load_params(REPO / "params/smoke.yaml",
                                                                    [f"run_root={tmp_path}"])))
    recs = records(cfg)
    assert set(TABLES) <= set(recs.tables) and recs.manifest["complete"]
    assert set(recs.sample_size["n"]) == {cfg.n_samples, cfg.n_large}
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
