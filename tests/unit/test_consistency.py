"""A judge's steadiness across prompt variants (issue 64): order flips between two texts of one prompt, and the
variance share of the variant, on data of known truth and by hand."""
import numpy as np

from creval.measures.stats import consistency as K


def test_flips_by_hand():
    # two texts, three variants: A above B, A above B, B above A -> 3 variant pairs, 2 of them disagree
    s = np.array([[3.0, 4.0, 1.0], [2.0, 1.0, 2.0]])
    f = K.flip_rate(s)
    assert (f["flips"], f["pairs"], f["rate"]) == (2, 3, 2 / 3)
    # a tie under a variant orders nothing; texts of different prompts are never compared
    assert K.flip_rate(np.array([[1.0, 2.0], [1.0, 1.0]]))["pairs"] == 0
    assert K.flip_rate(s, group=["p", "q"])["pairs"] == 0


def test_a_steady_judge_rarely_flips_and_a_prompt_bound_one_often_does():
    rng = np.random.default_rng(0)
    q = rng.normal(size=200)
    g = np.repeat(np.arange(20), 10)
    steady = q[:, None] + 0.1 * rng.normal(size=(200, 4))
    erratic = q[:, None] + 1.5 * rng.normal(size=(200, 4))
    assert K.flip_rate(steady, g)["rate"] < 0.1 < 0.3 < K.flip_rate(erratic, g)["rate"]
    a, b = K.variant_share(steady), K.variant_share(erratic)
    assert a["text"] > 0.95 and b["inconsistency"] > 0.5
    shifted = q[:, None] + np.array([0.0, 1.0, 2.0, 3.0])          # each variant adds its own constant
    got = K.variant_share(shifted)
    assert got["inconsistency"] < 1e-12 and got["variant"] > 0.5
    assert K.flip_rate(shifted, g)["flips"] == 0                     # a shift changes no order


def test_the_flip_interval_resamples_prompts_and_covers_the_truth():
    # 40 prompts of 6 texts; each variant adds noise as large as the texts' spread: the interval over prompts
    # holds the pooled rate, narrows with more prompts, and one prompt gives none
    rng = np.random.default_rng(3)
    def make(n_prompts):
        q = rng.normal(size=n_prompts * 6)
        return q[:, None] + rng.normal(size=(q.size, 4)), np.repeat(np.arange(n_prompts), 6)
    s, g = make(40)
    f = K.flip_rate(s, g, n_boot=400, seed=1)
    assert f["lo"] < f["rate"] < f["hi"] and 0.1 < f["rate"] < 0.45
    s2, g2 = make(160)
    f2 = K.flip_rate(s2, g2, n_boot=400, seed=1)
    assert f2["hi"] - f2["lo"] < f["hi"] - f["lo"]
    one = K.flip_rate(s[:6], g[:6], n_boot=400)
    assert one["rate"] == one["rate"] and one["lo"] != one["lo"]


def _panel(rng, n_prompts, judge_noise, people_noise=1.0, per=6, raters=3, wordings=4):
    """Texts of ``n_prompts`` prompts with a true quality; each rater and each wording adds its own noise."""
    q = rng.normal(size=n_prompts * per)
    people = q[:, None] + people_noise * rng.normal(size=(q.size, raters))
    judge = q[:, None] + judge_noise * rng.normal(size=(q.size, wordings))
    return judge, people, np.repeat(np.arange(n_prompts), per)


def test_the_gap_to_the_people_by_hand():
    # one prompt of two texts: the judge's 3 wordings flip 2 of 3 pairs of orders, the people's 2 raters 0 of 1
    judge = np.array([[3.0, 4.0, 1.0], [2.0, 1.0, 2.0]])
    people = np.array([[5.0, 4.0], [1.0, 2.0]])
    g = K.flip_gap(judge, people, ["p", "p"])
    assert (g["judge"], g["people"], g["value"], g["prompts"]) == (2 / 3, 0.0, 2 / 3, 1)
    assert g["lo"] != g["lo"]                                     # one prompt: no interval


def test_a_judge_as_noisy_as_a_person_is_rarely_called_unsteady_and_a_noisier_one_usually_is():
    # 60 prompts (HANNA has 96): the judge's wordings move its scores as much as a change of rater moves the
    # people's, so the gap's interval should hold 0 in about 95% of runs; with 2.5x the noise it should lie above 0
    rng = np.random.default_rng(11)
    runs = 60
    level = [K.flip_gap(*_panel(rng, 60, 1.0), n_boot=300, seed=i) for i in range(runs)]
    above = sum(g["lo"] > 0 for g in level)
    below = sum(g["hi"] < 0 for g in level)
    assert above + below <= 0.1 * runs                            # nominal 5%, binomial slack at 60 runs
    noisy = [K.flip_gap(*_panel(rng, 60, 2.5), n_boot=300, seed=i) for i in range(20)]
    assert sum(g["lo"] > 0 for g in noisy) >= 18
    assert all(0 < g["p"] <= 0.51 for g in level + noisy)          # one-sided, on the side the resamples lean
    assert np.mean([g["p"] < 0.05 for g in noisy]) >= 0.9
