
import pytest

from creval.core.errors import CrevalError
from creval.datasets import base, msrp, sick
from creval.measures.nli import backends
from creval.measures.nli.backends import LLMNLI, CosineNLI, CrossEncoderNLI, Label, label_from_name, load_nli
from creval.measures.nli.evaluate import evaluate_nli
from creval.models import heavy
from creval.models.records import ChoiceScores


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "calls.sqlite"))


def _tiny_classifier(path, id2label):
    """A randomly initialised 2-layer BERT classifier saved with the bundled MiniLM tokenizer (no download)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from creval.measures.nli.train import base_model_path
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, num_labels=len(id2label), id2label=id2label,
                     label2id={v: k for k, v in id2label.items()})
    BertForSequenceClassification(cfg).save_pretrained(path)
    AutoTokenizer.from_pretrained(str(base_model_path())).save_pretrained(path)
    return path


def test_label_names_case_insensitive():
    assert label_from_name("ENTAILMENT") is Label.ENTAILMENT
    assert label_from_name("Contradiction") is Label.CONTRADICTION
    assert label_from_name(" neutral ") is Label.NEUTRAL
    with pytest.raises(CrevalError):
        label_from_name("LABEL_0")


def test_cross_encoder_maps_id2label(tmp_path):
    path = _tiny_classifier(tmp_path / "m", {0: "CONTRADICTION", 1: "Entailment", 2: "neutral"})
    nli = CrossEncoderNLI(path, name="tiny", batch_size=2)
    assert nli._labels == [Label.CONTRADICTION, Label.ENTAILMENT, Label.NEUTRAL]
    pairs = [("A man plays a guitar.", "A person plays music."), ("It rains.", "The sun shines."),
             ("A dog runs.", "An animal moves."), ("Two kids swim.", "Nobody swims.")]
    got = nli.classify(pairs)
    expected = [nli._labels[i] for i in nli.logits(pairs).argmax(axis=1)]
    assert got == expected and all(isinstance(x, Label) for x in got)
    assert nli.classify(pairs) == got  # second time from the cache


def test_cross_encoder_rejects_non_nli_heads(tmp_path):
    path = _tiny_classifier(tmp_path / "m", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(CrevalError):
        CrossEncoderNLI(path)
    with pytest.raises(CrevalError, match="could not load"):
        CrossEncoderNLI(tmp_path / "does-not-exist")


class FakeModel:
    """choice_logprobs_many stand-in: the premise decides; records what it was asked."""
    name = "fake-llm"

    def __init__(self):
        self.asked = []

    def choice_logprobs_many(self, items):
        out = []
        for messages, choices in items:
            self.asked.append((messages, tuple(choices)))
            text = messages[-1]["content"]
            best = "contradiction" if "never" in text else "entailment" if "always" in text else "neutral"
            out.append(ChoiceScores({c: (-0.2 if c == best else -3.0) for c in choices}))
        return out


def test_llm_backend_argmax_of_label_logprobs():
    fm = FakeModel()
    nli = LLMNLI(fm)
    got = nli.classify([("It always works.", "It works."), ("It never works.", "It works."), ("Maybe.", "Yes.")])
    assert got == [Label.ENTAILMENT, Label.CONTRADICTION, Label.NEUTRAL]
    assert all(ch == ("entailment", "neutral", "contradiction") for _, ch in fm.asked)
    assert "It always works." in fm.asked[0][0][-1]["content"] and "It works." in fm.asked[0][0][-1]["content"]
    n = len(fm.asked)
    assert nli.classify([("It always works.", "It works.")]) == [Label.ENTAILMENT]
    assert len(fm.asked) == n  # cached
    assert nli.name == "llm:fake-llm"


def test_load_nli_unknown_name():
    with pytest.raises(CrevalError):
        load_nli("nonsense")
    with pytest.raises(CrevalError):
        load_nli("hf:")


def _has_sick_and_msrp() -> bool:
    try:
        sick.source(allow_download=False), msrp.source(allow_download=False)
    except CrevalError:
        return False
    return True


def test_data_readers_and_missing_dir(monkeypatch, tmp_path):
    if not _has_sick_and_msrp():
        pytest.skip("SICK/MSRP not staged here")
    train = sick.read_sick("train")
    assert len(train) == 4500 and Label(train[0][2]) is Label.NEUTRAL
    assert len(msrp.read_msrp("test")) == 1725
    monkeypatch.setenv("CREVAL_SICK_DIR", str(tmp_path))
    with pytest.raises(CrevalError, match="CREVAL_SICK_DIR"):
        sick.read_sick("train")


class AlwaysEntails:
    name = "always-entails"

    def classify(self, pairs):
        return [Label.ENTAILMENT] * len(pairs)


def test_evaluate_nli_with_a_constant_classifier():
    if not _has_sick_and_msrp():
        pytest.skip("SICK/MSRP not staged here")
    r = evaluate_nli(AlwaysEntails(), "msrp", limit=100, seed=0)
    # saying "entails" both ways for every pair = always "paraphrase": equals the baseline
    assert r["n"] == 100 and r["pairs_evaluated"] == 200
    assert r["accuracy"] == pytest.approx(r["baseline_accuracy"])
    assert r["recall"] == 1.0
    s = evaluate_nli(AlwaysEntails(), "sick", limit=50, seed=0)
    assert s["n"] == 50 and 0 < s["accuracy"] < 1
    assert s["predicted"]["entailment"] == 50
    # macro-F1 of a constant guess over 3 classes: one class gets 2a/(1+a), the others 0
    a = s["accuracy"]
    assert s["macro_f1"] == pytest.approx((2 * a / (1 + a)) / 3)
    with pytest.raises(CrevalError):
        evaluate_nli(AlwaysEntails(), "snli")
    assert s["dataset"] == s["requested"] == "sick" and s["source"].startswith(("local:", "shared:", "download:"))


@pytest.fixture
def no_sick(monkeypatch, tmp_path):
    """Nothing to train on: no CREVAL_SICK_DIR, ../shared hidden, offline, an empty data home."""
    monkeypatch.delenv("CREVAL_SICK_DIR", raising=False)
    monkeypatch.delenv("CREVAL_MSRP_DIR", raising=False)
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "calls.sqlite"))
    monkeypatch.setattr(backends, "LOADED", heavy.Loaded())
    base.FAILURES.reset()


def test_evaluate_falls_back_to_the_bundled_sample_and_says_so(no_sick):
    r = evaluate_nli(AlwaysEntails(), "sick")
    assert (r["dataset"], r["requested"], r["n"]) == ("sample", "sick", 50)
    assert r["source"].endswith("entailment/pairs.tsv")
    # always "entails" both ways = always "paraphrase": 18 of the 50 pairs are paraphrases
    assert r["accuracy"] == pytest.approx(18 / 50) == pytest.approx(r["baseline_accuracy"])
    assert r["nli3_accuracy"] == pytest.approx(26 / 50)          # 18 P + 8 E pairs entail A -> B
    assert evaluate_nli(AlwaysEntails(), "msrp", limit=10)["dataset"] == "sample"


def test_minilm_cosine_tells_a_paraphrase_from_an_unrelated_pair(no_sick):
    nli = CosineNLI()
    pairs = [("Use the coin to turn the screw.", "Turn the screw with the coin."),
             ("Use the coin to turn the screw.", "The orchestra played a waltz after the interval.")]
    cos = nli.cosines(pairs)
    assert cos[0] > 0.9 and cos[1] < 0.2
    assert nli.classify(pairs) == [Label.ENTAILMENT, Label.NEUTRAL]
    assert nli.classify([(b, a) for a, b in pairs]) == [Label.ENTAILMENT, Label.NEUTRAL]   # symmetric
    assert nli.name == nli.requested == "minilm-cosine" and load_nli("minilm-cosine").name == "minilm-cosine"
    r = evaluate_nli(nli, "sample")
    assert r["accuracy"] > r["baseline_accuracy"] + 0.3


def test_minilm_sick_without_sick_falls_back_without_training(no_sick, monkeypatch, caplog):
    import creval.measures.nli.train as train

    def no_training(**kw):
        raise AssertionError("must not train without SICK")
    monkeypatch.setattr(train, "train_minilm_sick", no_training)
    with caplog.at_level("WARNING", logger="creval.nli"):
        nli = load_nli("minilm-sick")
    assert isinstance(nli, CosineNLI) and nli.name == "minilm-cosine" and nli.requested == "minilm-sick"
    assert "sick data not found" in nli.fallback_reason and "minilm-cosine instead" in caplog.text
    assert not train.is_trained()
    assert backends.resolved_name("minilm-sick") == "minilm-cosine" and backends.resolved_name("deberta") == "deberta"
    # an explicitly given SICK that is broken is an error, not a silent fallback
    monkeypatch.setattr(backends, "LOADED", heavy.Loaded())
    monkeypatch.setenv("CREVAL_SICK_DIR", "/nonexistent/sick")
    with pytest.raises(CrevalError, match="CREVAL_SICK_DIR"):
        load_nli("minilm-sick")


def test_the_pairs_of_units_in_flight_are_classified_together(tmp_path):
    from creval.core.units import Unit, run_units
    path = _tiny_classifier(tmp_path / "m", {0: "CONTRADICTION", 1: "Entailment", 2: "neutral"})
    nli = CrossEncoderNLI(path, name="tiny", batch_size=64)
    pairs = {i: [(f"Statement {i} about a dog.", f"Claim {i}.{k} about an animal.") for k in range(3)]
             for i in range(12)}
    alone = {i: [nli._labels[k] for k in nli.logits(p).argmax(axis=1)] for i, p in pairs.items()}
    out = run_units(tmp_path / "run", "nli", [Unit(f"u{i}", i) for i in range(12)],
                    lambda u: {"labels": [{"i": u.item, "labels": [x.value for x in nli.classify(pairs[u.item])]}]},
                    width=12, progress=False)
    assert {r["i"]: [Label(x) for x in r["labels"]] for r in out["labels"]} == alone
    assert nli.gather.tally.batches < 12 and sum(nli.gather.tally.requests) == 12


def test_nli_training_loads_float32_weights_even_from_a_half_precision_base(tmp_path, monkeypatch):
    import torch
    from transformers import AutoModelForSequenceClassification

    from creval.measures.nli import train
    half = tmp_path / "half"
    _tiny_classifier(half, {0: "entailment", 1: "neutral", 2: "contradiction"})
    AutoModelForSequenceClassification.from_pretrained(half).half().save_pretrained(half)
    assert AutoModelForSequenceClassification.from_pretrained(half).dtype == torch.float16   # stored as float16
    monkeypatch.setattr(train, "base_model_path", lambda: half)
    model, _ = train.load_base({lab: i for i, lab in enumerate(train.LABELS)})
    assert {p.dtype for p in model.parameters()} == {torch.float32}
