"""The offline cross-encoder end to end: trained on first use (a few minutes on 2 cores), then scored
on held-out SICK pairs and used for clustering real sentences."""
import pytest

from creval.measures.clustering import CountingNLI, cluster, cluster_naive
from creval.measures.nli.backends import CrossEncoderNLI, Label, load_nli, resolved_name
from creval.measures.nli.evaluate import evaluate_nli
from creval.measures.nli.train import is_trained, model_dir

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "calls.sqlite"))


@pytest.fixture(scope="module")
def minilm():
    if resolved_name("minilm-sick") != "minilm-sick":      # a clean clone with no SICK (the book falls back)
        pytest.skip("SICK cannot be had here (no CREVAL_SICK_DIR, nothing staged, offline): nothing to train on")
    nli = load_nli("minilm-sick")  # trains it if missing
    assert is_trained(model_dir())
    return nli


def test_trained_model_beats_chance_on_sick_test(minilm):
    assert isinstance(minilm, CrossEncoderNLI)
    r = evaluate_nli(minilm, "sick", limit=200, seed=0)
    assert r["n"] == 200
    assert r["accuracy"] > 0.6
    assert r["accuracy"] > r["baseline_accuracy"]


def test_labels_on_clear_pairs(minilm):
    got = minilm.classify([("A man is playing a guitar.", "A man is playing a guitar."),
                           ("A man is playing a guitar.", "Nobody is playing a guitar.")])
    assert got[0] is Label.ENTAILMENT
    assert got[1] is Label.CONTRADICTION


def test_clustering_groups_identical_and_separates_unrelated(minilm):
    texts = ["Use the towel to soak up the water.", "Use the towel to soak up the water.",
             "Tie the plastic bag around the leaking pipe.", "Use the towel  to soak up the water."]
    counted = CountingNLI(minilm)
    ids = cluster(texts, counted)
    assert ids == [0, 0, 1, 0]
    assert counted.pairs == 2  # one pair of distinct texts, both directions
    # the naive way (also asking each sentence about itself) agrees
    assert cluster_naive(texts, minilm) == ids
