"""Diversity metrics and human-data loaders against hand-computed values (statistics: test_stats.py)."""
import math

import numpy as np
import pytest

from creval.measures import diversity as D


class FakeEmbedder:
    def __init__(self, table):
        self.table = table

    def encode(self, texts):
        return np.asarray([self.table[t] for t in texts], dtype=float)


def test_tokenize_documented_example():
    assert D.tokenize("Tie the rope; don't cut it!") == ["tie", "the", "rope", "don't", "cut", "it"]


def test_distinct_n_hand_computed():
    texts = ["a b a b", "A, b c."]
    # 1-grams: a b a b | a b c -> 7 total, {a,b,c} unique
    assert D.distinct_n(texts, 1) == pytest.approx(3 / 7)
    # 2-grams within texts only: ab ba ab | ab bc -> 5 total, {ab, ba, bc}
    assert D.distinct_n(texts, 2) == pytest.approx(3 / 5)
    assert math.isnan(D.distinct_n(["one"], 2))


def test_self_bleu_matches_formula():
    # hyp "the cat sat" vs ref "the cat ran": p1 = 2/3, p2 = 1/2, p3 = 0 matches of 1 -> exp smoothing 1/(2*1);
    # no 4-grams (effective order 3); equal lengths -> BP = 1.  BLEU = (2/3 * 1/2 * 1/2) ** (1/3)
    expected = (2 / 3 * 1 / 2 * 1 / 2) ** (1 / 3)
    assert D.sentence_bleu("the cat sat", ["the cat ran"]) == pytest.approx(expected, abs=1e-9)
    assert D.self_bleu(["the cat sat", "the cat ran"]) == pytest.approx(expected, abs=1e-9)
    assert D.self_bleu(["x y z", "x y z"]) == pytest.approx(1.0)
    assert D.self_bleu(["alpha", "beta"]) == 0.0
    assert math.isnan(D.self_bleu(["only one"]))


def test_self_bleu_brevity_penalty():
    # hyp "the cat" (2) vs ref "the cat sat" (3): p1 = 1, p2 = 1 (effective order 2), BP = exp(1 - 3/2)
    assert D.sentence_bleu("the cat", ["the cat sat"]) == pytest.approx(math.exp(1 - 1.5), abs=1e-9)


def test_cosine_on_hand_made_vectors():
    emb = FakeEmbedder({"x": [1, 0], "y": [0, 1], "z": [1, 1]})
    # pairs: x.y = 0, x.z = y.z = 1/sqrt(2) -> mean sqrt(2)/3
    assert D.avg_cosine_similarity(["x", "y", "z"], emb) == pytest.approx(math.sqrt(2) / 3)
    assert math.isnan(D.avg_cosine_similarity(["x"], emb))
    d = D.diversity(["x", "y"], emb)
    assert d["cosine"] == pytest.approx(0.0) and d["n"] == 2


def test_diversity_many_batches_and_handles_singletons():
    emb = FakeEmbedder({"x": [1, 0], "y": [0, 1], "z": [1, 1]})
    out = D.diversity_many([["x", "z"], ["y"], []], emb)
    assert out[0]["cosine"] == pytest.approx(1 / math.sqrt(2))
    assert math.isnan(out[1]["cosine"]) and math.isnan(out[2]["self_bleu"])


def test_item_originality_and_semdis():
    emb = FakeEmbedder({"x": [1, 0], "y": [0, 1], "z": [1, 1], "obj": [1, 0]})
    df = D.item_originality(["x", "y", "z"], groups=[1, 1, 1], embedder=emb)
    r = 1 / math.sqrt(2)
    assert df["cosine_to_others"].tolist() == pytest.approx([r / 2, r / 2, r])
    # mean of the per-item terms is the set metric
    assert df["cosine_to_others"].mean() == pytest.approx(D.avg_cosine_similarity(["x", "y", "z"], emb))
    single = D.item_originality(["x", "y"], groups=["a", "b"], embedder=emb)
    assert single["cosine_to_others"].isna().all()
    assert D.semdis(["obj", "obj"], ["x", "y"], emb).tolist() == pytest.approx([0.0, 1.0])


# -- `creval metrics`: every default comes from the studies' Configs --------------------------------------
def _filled(argv):
    """The options a `creval metrics ...` command line runs with, after the Config defaults fill the rest."""
    from creval.cli import build_parser
    from creval.commands.metrics import fill_defaults
    return vars(fill_defaults(build_parser().parse_args(argv)))


def test_metrics_cli_defaults_are_the_rethinking_config(tmp_path):
    from creval.studies.rethinking.config import RethinkingConfig
    c = RethinkingConfig()
    assert _filled(["metrics", "ci", "f.txt"])["L"] == [c.rethink_ci_l_min, c.rethink_ci_l_max]
    assert _filled(["metrics", "ci", "f.txt"])["agg"] == c.rethink_ci_agg
    t = _filled(["metrics", "templates", "f.txt"])
    assert (t["n"], t["top"]) == (c.rethink_template_n, c.rethink_template_top)
    assert _filled(["metrics", "ppl", "f.txt"])["model"] == c.model
    r = _filled(["metrics", "rubric", "f.txt"])
    assert (r["model"], r["tokens"]) == (c.judge_model, c.rethink_judge_tokens)
    n = _filled(["metrics", "novelty", "f.txt"])
    assert (n["model"], n["seed"]) == (c.judge_model, c.seed)
    # a parameter profile moves them; an option given on the line wins
    prof = tmp_path / "p.yaml"
    prof.write_text("rethink_ci_l_min: 3\nrethink_ci_l_max: 4\njudge_model: qwen2.5-coder-1.5b\n"
                    "rethink_template_top: 7\n")
    assert _filled(["metrics", "ci", "f.txt", "--params", str(prof)])["L"] == [3, 4]
    assert _filled(["metrics", "rubric", "f.txt", "--params", str(prof)])["model"] == "qwen2.5-coder-1.5b"
    assert _filled(["metrics", "templates", "f.txt", "--params", str(prof), "--top", "9"])["top"] == 9


def test_metrics_cli_ci_uses_the_config_range(tmp_path, capsys):
    from creval.cli import main
    f = tmp_path / "t.txt"
    f.write_text("tie the rope to the chair and pull it\nuse the rope to the chair and pull to climb\nnothing alike\n")
    assert main(["metrics", "ci", str(f)]) == 0
    assert "CI = mean of uniq_L, L = 5..7" in capsys.readouterr().out
    prof = tmp_path / "p.yaml"
    prof.write_text("rethink_ci_l_min: 2\nrethink_ci_l_max: 3\nrethink_ci_agg: sum\n")
    assert main(["metrics", "ci", str(f), "--params", str(prof)]) == 0
    assert "CI = sum of uniq_L, L = 2..3" in capsys.readouterr().out
