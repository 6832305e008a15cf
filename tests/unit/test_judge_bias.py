"""Whom and what length a judge favours beyond the people (issue 64, creval.measures.stats.bias), on simulated
panels whose truth is known: a judge that adds a fixed bonus to the models' texts, one that adds length, and one
that only copies the people."""
import numpy as np

from creval.measures.stats import bias as B


def panel(n_prompts=60, per=6, bonus=0.0, per_word=0.0, seed=0):
    rng = np.random.default_rng(seed)
    prompt = np.repeat(np.arange(n_prompts), per)
    person = np.tile(np.r_[True, np.zeros(per - 1, bool)], n_prompts)
    quality = rng.normal(size=prompt.size) + rng.normal(size=n_prompts)[prompt]
    words = rng.integers(100, 900, prompt.size).astype(float)
    people = quality + rng.normal(scale=0.5, size=prompt.size)
    judge = quality + rng.normal(scale=0.5, size=prompt.size) + bonus * ~person + per_word * (words - 500) / 400
    return judge, people, person, prompt, words


def test_a_judge_that_only_copies_the_people_shows_no_gap_and_no_lean():
    j, p, who, g, w = panel(seed=1)
    gap, lean = B.author_gap(j, p, who, g, 500, 0), B.length_lean(j, p, w, g, 500, 0)
    assert gap["lo"] < 0 < gap["hi"] and gap["n_prompts"] == 60
    assert lean["lo"] < 0 < lean["hi"] and lean["n"] == 360


def test_a_bonus_for_models_is_found_with_its_size_and_sign():
    j, p, who, g, w = panel(bonus=1.0, seed=2)
    gap = B.author_gap(j, p, who, g, 500, 0)
    assert gap["hi"] < 0 and abs(gap["value"] + 1.0) < 0.3 and gap["lo"] < -1.0 < gap["hi"] + 0.2


def test_a_judge_paid_by_the_word_leans_on_length():
    j, p, who, g, w = panel(per_word=1.0, seed=3)
    lean = B.length_lean(j, p, w, g, 500, 0)
    assert lean["lo"] > 0.2


def test_the_gap_is_exact_by_hand_and_texts_without_length_are_left_out():
    # one prompt: the judge gives the person's text 4 and the model's 2 (gap 2), the people 3 and 3 (gap 0)
    assert B.author_gap([4, 2], [3, 3], [True, False], ["p", "p"], n_boot=0)["value"] == 2.0
    assert np.isnan(B.words(["", None, "three small words"])[:2]).all() and B.words(["a b c"])[0] == 3


def test_no_effect_is_rarely_called_a_bias():
    # across 40 simulated panels without any bias, the 95% interval of the gap excludes 0 in few of them
    hits = 0
    for s in range(40):
        j, p, who, g, w = panel(n_prompts=30, seed=100 + s)
        gap = B.author_gap(j, p, who, g, 300, s)
        hits += not (gap["lo"] <= 0 <= gap["hi"])
    assert hits <= 5
