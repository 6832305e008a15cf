"""Diversity metrics and human-data loaders against hand-computed values (statistics: test_stats.py)."""
import json
import math

import numpy as np
import pytest

from creval.measures import diversity as D
from creval.models.base import BackendBase


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
    assert (r["judge_model"], r["tokens"]) == (c.judge_model, c.rethink_judge_tokens)
    n = _filled(["metrics", "novelty", "f.txt"])
    assert (n["judge_model"], n["seed"]) == (c.judge_model, c.seed)
    # the judge model is --judge-model on every command; the old --model still works and says the new name
    assert _filled(["metrics", "novelty", "f.txt", "--model", "x"])["judge_model"] == "x"
    # a parameter profile moves them; an option given on the line wins
    prof = tmp_path / "p.yaml"
    prof.write_text("rethink_ci_l_min: 3\nrethink_ci_l_max: 4\njudge_model: qwen2.5-coder-1.5b\n"
                    "rethink_template_top: 7\n")
    assert _filled(["metrics", "ci", "f.txt", "--params", str(prof)])["L"] == [3, 4]
    assert _filled(["metrics", "rubric", "f.txt", "--params", str(prof)])["judge_model"] == "qwen2.5-coder-1.5b"
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


# -- `creval metrics` over a user's table: ids, columns, per-text output, saturation, resuming (issue 42) -----
def test_ci_echoes_ids_reads_a_named_text_column_and_writes_one_row_per_text(tmp_path, capsys):
    import csv

    from creval.cli import main
    f = tmp_path / "t.csv"
    f.write_text("key,story\nk1,tie the rope to the chair and pull it hard\nk2,use the rope to the chair and "
                 "pull to climb\nk3,nothing alike at all in these words here\n")
    out = tmp_path / "ci.csv"
    f.write_text(f.read_text().replace("key,story", "key,story,who").replace("hard", "hard,ann")
                 .replace("climb", "climb,bo").replace("here", "here,ann"))
    assert main(["metrics", "ci", str(f), "--text", "story", "--id", "key", "--L", "3", "3",
                 "--out", str(out), "--keep", "who"]) == 0
    printed = capsys.readouterr().out
    assert "k1" in printed and "k3" in printed and "leave-own-item-out" in printed
    rows = list(csv.DictReader(out.open()))
    assert [r["id"] for r in rows] == ["k1", "k2", "k3"] and [r["who"] for r in rows] == ["ann", "bo", "ann"]
    # k1: 10 words, its 3-grams "the rope to", "rope to the", "to the chair", "the chair and", "chair and pull"
    # occur in k2, covering words 2..8 (7 of 10); k3 shares nothing with the others
    assert float(rows[0]["ci"]) == pytest.approx(1 - 7 / 10)
    assert float(rows[2]["ci"]) == 1.0 and rows[2]["n_tokens"] == "8"


def test_ci_leave_group_out_drops_the_own_groups_reuse(tmp_path, capsys):
    import json as js

    from creval.cli import main
    f = tmp_path / "t.jsonl"
    rows = [{"id": "a", "g": "box", "text": "uses for a box: a hat for a cat"},
            {"id": "b", "g": "box", "text": "uses for a box: a bed for a dog"},
            {"id": "c", "g": "brick", "text": "a hat for a cat made of clay"}]
    f.write_text("".join(js.dumps(r) + "\n" for r in rows))
    own = tmp_path / "own.jsonl"
    grp = tmp_path / "grp.jsonl"
    assert main(["metrics", "ci", str(f), "--id", "id", "--L", "4", "4", "--out", str(own)]) == 0
    assert main(["metrics", "ci", str(f), "--id", "id", "--L", "4", "4", "--leave", "group", "--group", "g",
                 "--out", str(grp)]) == 0
    ci_own = {r["id"]: r["ci"] for r in map(js.loads, own.read_text().splitlines())}
    ci_grp = {r["id"]: r["ci"] for r in map(js.loads, grp.read_text().splitlines())}
    # "uses for a box:" is shared by a and b only: reuse against the pool, none once the own group is left out;
    # "a hat for a cat" of a is also in c (another group), so it counts either way
    assert ci_own["b"] < 1.0 and ci_grp["b"] == 1.0
    assert ci_grp["a"] < 1.0 and ci_grp["a"] > ci_own["a"]
    assert main(["metrics", "ci", str(f), "--leave", "group"]) == 2
    assert "--leave group needs --group COL" in capsys.readouterr().err


def test_ci_warns_when_most_texts_sit_at_the_bound(tmp_path, capsys):
    from creval.cli import main
    f = tmp_path / "t.txt"
    f.write_text("one short line\nanother tiny text\nthird one here\n")
    assert main(["metrics", "ci", str(f)]) == 0
    err = capsys.readouterr().err
    assert "warning: the creativity index saturates: 100% of 3 texts score exactly 1" in err


def test_saturation_share():
    from creval.measures.pertext import saturation
    assert saturation([1.0, 1.0, 0.5, 0.2], 1.0, "x", share=0.5).startswith("x saturates: 50% of 4 texts")
    assert saturation([1.0, 0.9, 0.5, 0.2], 1.0, "x", share=0.5) is None
    assert saturation([float("nan")], 1.0, "x") is None


def test_a_bad_column_and_an_empty_text_are_one_clear_error(tmp_path, capsys):
    from creval.cli import main
    f = tmp_path / "t.csv"
    f.write_text("id,body\n1,some words\n")
    assert main(["metrics", "ci", str(f)]) == 2
    err = capsys.readouterr().err
    assert f"{f}: no column 'text' (its columns: id, body)" in err
    assert main(["metrics", "ci", str(f), "--text", "body", "--id", "nope"]) == 2
    assert "no column 'nope'" in capsys.readouterr().err
    from creval.core.errors import CrevalError
    from creval.core.table import read_table
    g = tmp_path / "e.csv"
    g.write_text("id,text\nx,fine\ny,\n")
    with pytest.raises(CrevalError, match=r"column 'text', row 2 \(id y\) is empty"):
        read_table(g, id="id")
    g.write_text("id,text\nx,fine\nx,again\n")
    with pytest.raises(CrevalError, match="id 'x' of column 'id' appears on rows 1 and 2"):
        read_table(g, id="id")


class CountingBackend(BackendBase):
    """A local backend scoring 1 nat per word; it counts the texts it computes and can be made to stop
    (a Ctrl-C) after ``stop_after`` texts."""
    LOGPROB_KIND = "raw"

    def __init__(self, stop_after=None):
        from creval.models.spec import ModelSpec
        self.spec = ModelSpec(name="counting", backend="llamacpp", model="counting.gguf")
        self.computed, self.stop_after = [], stop_after

    def loglikelihood(self, reqs):
        from creval.models.records import LogLikelihood
        out = []
        for r in reqs:
            if self.stop_after is not None and len(self.computed) >= self.stop_after:
                raise KeyboardInterrupt
            self.computed.append(r.text)
            lps = tuple([-1.0] * len(r.text.split()))
            out.append(LogLikelihood(sum(lps), lps, len(r.text.encode()), model="counting"))
        return out


def test_an_interrupted_ppl_run_resumes_without_rescoring_a_text(tmp_path, monkeypatch, capsys):
    from creval.cli import main
    from creval.commands import metrics
    from creval.core.cache import CallCache
    from creval.models.cached import Model
    cache = CallCache(tmp_path / "cache.sqlite")
    texts = [f"text number {i} has {i + 1} more words" + " w" * i for i in range(6)]
    f = tmp_path / "t.csv"
    f.write_text("sid,text\n" + "".join(f"s{i},{t}\n" for i, t in enumerate(texts)))
    first = CountingBackend(stop_after=4)
    monkeypatch.setattr(metrics, "load_model", lambda name: Model(first, cache))
    assert main(["metrics", "ppl", str(f), "--id", "sid", "--quiet"]) == 130       # interrupted after 4 texts
    assert first.computed == texts[:4]
    again = CountingBackend()
    monkeypatch.setattr(metrics, "load_model", lambda name: Model(again, cache))
    out = tmp_path / "ppl.jsonl"
    assert main(["metrics", "ppl", str(f), "--id", "sid", "--out", str(out)]) == 0
    assert again.computed == texts[4:]                        # the four scored before are read from the cache
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == [f"s{i}" for i in range(6)]
    assert rows[2]["n_tokens"] == len(texts[2].split()) and rows[2]["ppl"] == pytest.approx(math.e)
    assert "perplexity under counting" in capsys.readouterr().err      # the progress bar, with its rate


class GatheringCounter(CountingBackend):
    """The counting backend, slow enough that calls overlap; it records the most calls it saw at once. Like
    transformers' backend it takes no per-call lock (it gathers calls in flight itself)."""
    from creval.models.gather import UNLOCKED as CALL_LOCK

    def __init__(self):
        super().__init__()
        import threading
        self.now, self.most, self.guard = 0, 0, threading.Lock()

    def loglikelihood(self, reqs):
        import time
        with self.guard:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.02)
        try:
            return super().loglikelihood(reqs)
        finally:
            with self.guard:
                self.now -= 1


def test_perplexity_each_keeps_width_calls_in_flight_in_order_each_text_cached(tmp_path):
    from creval.core.cache import CallCache
    from creval.measures.pertext import perplexity_each
    from creval.models.cached import Model
    texts = [" ".join(["w"] * (i + 1)) for i in range(12)]
    backend, steps = GatheringCounter(), []
    recs = perplexity_each(Model(backend, CallCache(tmp_path / "c.sqlite")), texts, width=4,
                           step=lambda: steps.append(1))
    assert [r.n_tokens for r in recs] == list(range(1, 13))        # the texts' order, whatever finished first
    assert backend.most > 1 and backend.most <= 4 and len(steps) == 12
    again = CountingBackend()
    perplexity_each(Model(again, CallCache(tmp_path / "c.sqlite")), texts, width=4)
    assert again.computed == []                                    # every text was cached on its own
