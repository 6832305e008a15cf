"""Pairwise novelty judge: both presentation orders, ties, cache, and O(n log n) comparisons."""
import math
import random

import numpy as np
import pytest

from creval.core.cache import CallCache
from creval.judges import novelty as N
from creval.models.base import BackendBase
from creval.models.cached import Model
from creval.models.records import ChoiceScores
from creval.models.spec import ModelSpec


class TruthBackend(BackendBase):
    """Fake judge backend: prefers the answer with the larger hidden novelty value (``bias`` adds to 'A')."""
    LOGPROB_KIND = "raw"

    def __init__(self, truth, bias=0.0):
        self.spec = ModelSpec(name="fake-judge", backend="llamacpp", model="fake")
        self.truth, self.bias, self.calls = truth, bias, 0

    def _value(self, text, label):
        body = text.split(f"Answer {label}\n", 1)[1]
        resp = body.split("Response: ", 1)[1].split("\n", 1)[0]
        return self.truth[resp]

    def choice_logprobs(self, reqs):
        out = []
        for r in reqs:
            self.calls += 1
            u = r.messages[-1]["content"]
            a, b = self._value(u, "A"), self._value(u, "B")
            za, zb = a + self.bias, b
            m = max(za, zb)
            lse = m + math.log(math.exp(za - m) + math.exp(zb - m))
            out.append(ChoiceScores({"A": za - lse, "B": zb - lse}, 10))
        return out

    def count_tokens(self, text):
        return len(text.split())


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    # never touch the real call cache (an empty CallCache is falsy, so cached_batch may fall back to the default)
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "c.sqlite"))


def make(truth, tmp_path, bias=0.0):
    be = TruthBackend(truth, bias)
    return Model(be, cache=CallCache(tmp_path / "c.sqlite")), be


def test_judge_ranks_by_hidden_novelty_and_caches(tmp_path):
    truth = {f"ans{i}": float(v) for i, v in enumerate([3, 1, 4, 0, 5, 2, 6, 7])}
    model, be = make(truth, tmp_path)
    items = [("q", a) for a in truth]
    r = N.rank_by_novelty(items, N.NoveltyJudge(model, "aut"), seed=1)
    best_first = sorted(range(8), key=lambda i: -truth[f"ans{i}"])
    assert r.order == best_first
    assert r.rank[7] == 1 and r.score[7] == 1.0 and r.score[3] == 0.0
    assert r.ties == 0 and r.llm_calls == 2 * r.comparisons == be.calls
    again = N.rank_by_novelty(items, N.NoveltyJudge(model, "aut"), seed=1)
    assert again.order == r.order and be.calls == r.llm_calls      # all served from the cache


def test_position_bias_becomes_ties(tmp_path):
    # the judge always prefers position A by a wide margin: the two orders disagree -> every comparison is a tie
    truth = {"a": 1.0, "b": 2.0, "c": 3.0}
    model, _ = make(truth, tmp_path, bias=10.0)
    c = N.NoveltyJudge(model).compare(("q", "a"), ("q", "c"))
    assert c.winner == 0 and c.votes == (1, -1)
    assert 0.0 < c.p_x < 0.5           # debiased probability still leans to the truly more novel 'c'
    r = N.rank_by_novelty([("q", k) for k in truth], N.NoveltyJudge(model), seed=0)
    assert r.ties == r.comparisons > 0
    shuffled = list(range(3))
    random.Random(0).shuffle(shuffled)
    assert r.order == shuffled          # ties keep the (seeded, shuffled) input order


def test_merge_sort_comparisons_are_n_log_n():
    n = 64
    rng = random.Random(7)
    for trial in range(5):
        xs = [rng.random() for _ in range(n)]
        out, count = N.merge_sort(xs, lambda a, b: (a > b) - (a < b))
        assert out == sorted(xs)
        assert count <= n * math.ceil(math.log2(n)) == 384
        _, bubble = N.bubble_sort(xs, lambda a, b: (a > b) - (a < b))
        assert bubble == n * (n - 1) // 2 == 2016
        assert count < bubble / 4
    # an intransitive random comparator still terminates within the bound
    _, count = N.merge_sort(list(range(n)), lambda a, b: rng.choice([-1, 0, 1]))
    assert count <= n * math.ceil(math.log2(n))


def test_merge_sort_is_stable_on_ties():
    items = [(1, "a"), (0, "b"), (1, "c"), (0, "d")]
    out, _ = N.merge_sort(items, lambda x, y: x[0] - y[0])
    assert out == [(0, "b"), (0, "d"), (1, "a"), (1, "c")]
    out, _ = N.merge_sort(items, lambda x, y: 0)
    assert out == items


def test_rank_groups_within_groups(tmp_path):
    truth = {"w1": 0.0, "w2": 5.0, "w3": 1.0, "v1": 9.0, "v2": 2.0}
    model, _ = make(truth, tmp_path)
    df = N.rank_groups(["brick"] * 3 + ["box"] * 2, list(truth), ["brick"] * 3 + ["box"] * 2,
                       N.NoveltyJudge(model, "aut"))
    assert df["novelty_rank"].tolist() == [3, 1, 2, 1, 2]
    assert df["novelty_score"].tolist() == pytest.approx([0.0, 1.0, 0.5, 1.0, 0.0])
    assert df["group_size"].tolist() == [3, 3, 3, 2, 2]


class AnyBackend(TruthBackend):
    """Prefers the longer response (any text accepted)."""

    def _value(self, text, label):
        body = text.split(f"Answer {label}\n", 1)[1]
        return float(len(body.split("Response: ", 1)[1].split("\n", 1)[0])) / 10


def _fake_records(rng):
    import pandas as pd
    steps, probs = [], []
    words = "rope tape hook spoon wire cup towel foil string stick".split()
    for d in ("macgyver", "bookmia"):
        for p in range(6):
            ses = []
            for k in range(3):
                samples = [{"text": " ".join(rng.choice(words, size=4)), "mean_logprob": -1.0} for _ in range(4)]
                se = float(rng.random())
                ses.append(se)
                steps.append({"problem_id": f"{d}{p}", "domain": d, "model": "m", "step_index": k, "samples": samples,
                              "semantic_entropy": se, "naive_entropy": se + 0.1, "discrete_entropy": se,
                              "n_clusters": 2, "is_stop": False})
            steps.append({"problem_id": f"{d}{p}", "domain": d, "model": "m", "step_index": 3,
                          "samples": [{"text": "STOP"}] * 4, "semantic_entropy": 0.0, "naive_entropy": 0.0,
                          "discrete_entropy": 0.0, "n_clusters": 1, "is_stop": True})
            probs.append({"problem_id": f"{d}{p}", "domain": d, "model": "m", "problem_text": f"problem {p}",
                          "solution": "x" * (p + 1), "mean_semantic_entropy": float(np.mean(ses)),
                          "min_semantic_entropy": min(ses), "max_semantic_entropy": max(ses),
                          "mean_naive_entropy": float(np.mean(ses)) + 0.1, "mean_discrete_entropy": float(np.mean(ses)),
                          "duplicate_filtered": False})
    return pd.DataFrame(steps), pd.DataFrame(probs)


def test_report_tables_on_fake_records(tmp_path, monkeypatch):
    """Every novelty/entropy table of the chapter from synthetic divergent records: the run's computations
    (fake embedder, fake judge), their rows through a run store, then the pure report over the read-back tables."""
    from creval.core.runs import RunStore
    from creval.measures import diversity as D
    from creval.studies.contract import Records
    from creval.studies.validation import report, run

    class HashEmbedder:
        def encode(self, texts):
            out = np.zeros((len(texts), 16))
            for i, t in enumerate(texts):
                for w in t.split():
                    out[i, hash(w) % 16] += 1.0
            return out

    monkeypatch.setattr(D, "_embedder", lambda e: e or HashEmbedder())
    model, be = make({}, tmp_path)
    model.backend = AnyBackend({})
    steps, probs = _fake_records(np.random.default_rng(0))
    store = RunStore(tmp_path / "run")
    store.write("step_diversity", run.step_diversity(steps).to_dict("records"))
    for (m, d), g in probs.groupby(["model", "domain"]):
        store.append("solution_novelty", run.solution_novelty(g, N.NoveltyJudge(model, d), seed=0).to_dict("records"))
    recs = Records(tmp_path / "run")
    div = recs.step_diversity
    assert len(div) == 36 and not div["self_bleu"].isna().any()          # STOP rows dropped
    t = report.table_entropy_vs_diversity(recs, n_boot=50)
    assert set(t["level"]) == {"step", "solution"} and (t["n"] == 18).sum() == 8 and (t["n"] == 6).sum() == 8
    assert t.attrs["caption"].startswith("Tables 8-10")
    nov = recs.solution_novelty
    # the fake judge prefers longer solutions: solution p has length p + 1, so rank 1 is problem 5
    assert nov.loc[nov["problem_id"] == "macgyver5", "novelty_rank"].item() == 1
    assert nov.loc[nov["problem_id"] == "macgyver0", "novelty_score"].item() == 0.0
    t11 = report.table_novelty_vs_entropy(recs, n_boot=50)
    assert t11["domain"].tolist() == ["bookmia", "macgyver", "all (pooled)"] and t11["n"].tolist() == [6, 6, 12]
    t13 = report.table_naive_vs_semantic(recs)
    t14 = report.table_aggregation(recs)
    assert {"naive rho", "semantic rho"} <= set(t13.columns) and {"min rho", "max rho", "mean rho"} <= set(t14.columns)
    # naive entropy is semantic entropy + 0.1 in the fake records: the same ranks, the same rho
    assert t13["naive rho"].tolist() == pytest.approx(t13["semantic rho"].tolist())
    summary = report.run_summary(recs)
    assert summary["problems"].tolist() == [6, 6] and summary["steps"].tolist() == [18, 18]


def _recursive_merge_sort(xs, cmp):
    """The sequential top-down merge sort, one comparison after another (the reference)."""
    if len(xs) <= 1:
        return xs
    left, right = _recursive_merge_sort(xs[:len(xs) // 2], cmp), _recursive_merge_sort(xs[len(xs) // 2:], cmp)
    out = []
    while left and right:
        out.append(right.pop(0) if cmp(right[0], left[0]) < 0 else left.pop(0))
    return out + left + right


def test_level_merge_sort_batches_a_level_and_matches_the_sequential_sort():
    def cmp(a, b):          # intransitive, with ties, but a function of the pair: any order of asking agrees
        return [-1, 0, 1][hash((min(a, b), max(a, b), 7)) % 3] * (1 if a < b else -1)
    for n in (0, 1, 2, 5, 13, 64):
        xs = list(range(n))
        random.Random(n).shuffle(xs)
        batches = []

        def cmp_many(pairs):
            batches.append(len(pairs))
            return [cmp(a, b) for a, b in pairs]
        out, count = N.merge_sort_levels(xs, cmp_many)
        assert out == _recursive_merge_sort(xs, cmp) and count == sum(batches) == N.merge_sort(xs, cmp)[1]
        if n == 64:
            assert batches[0] == 32 and len(batches) < count / 2      # the 32 merges of two singletons: one batch


def test_rank_by_novelty_asks_each_round_in_one_batch(tmp_path):
    truth = {f"ans{i}": float(v) for i, v in enumerate([3, 1, 4, 0, 5, 2, 6, 7])}
    model, be = make(truth, tmp_path)
    sizes = []
    many = model.choice_logprobs_many
    model.choice_logprobs_many = lambda items, **kw: sizes.append(len(items)) or many(items, **kw)
    r = N.rank_by_novelty([("q", a) for a in truth], N.NoveltyJudge(model, "aut"), seed=1)
    assert r.order == sorted(range(8), key=lambda i: -truth[f"ans{i}"])
    assert sizes[0] == 8 and sum(sizes) == 2 * r.comparisons == r.llm_calls   # level 1: 4 pairs, both orders
    assert len(sizes) <= 1 + 2 + 7                                              # rounds: 1, <= 3, <= 7 per level
