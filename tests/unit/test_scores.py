"""A judge score is shown with its n, its interval and the mean length of the texts it scored; a scale with its
anchors (creval.studies.scores), and chapter 07's table of judge scores built from it."""
import json

import numpy as np

from creval.measures.stats import correlation as corr
from creval.studies import scores as SC
from creval.studies.aut import report
from creval.studies.aut.config import AutConfig
from creval.studies.contract import Records


def test_summary_counts_only_scored_texts_and_their_lengths():
    s = SC.score_summary([1, 2, np.nan, 3, 4, 5], words=[10, 20, 999, 30, 40, 50], n_boot=200, seed=0)
    assert s["n"] == 5 and s["mean"] == 3.0
    assert s["words"] == 30.0                  # the unscored text (999 words) is not counted
    assert (s["lo"], s["hi"]) == corr.bootstrap_ci(np.mean, np.array([1., 2, 3, 4, 5]), n_boot=200, seed=0)
    assert 1.0 <= s["lo"] < 3.0 < s["hi"] <= 5.0


def test_cell_states_n_interval_and_words():
    s = {"n": 5, "mean": 3.0, "lo": 2.0, "hi": 4.2, "words": 30.4}
    assert SC.fmt_score(s) == "3.00 [2.00, 4.20] (n=5; 30 words)"
    # too few texts for an interval, and no lengths: both left out, n still shown
    few = SC.score_summary([4, 5], n_boot=100)
    assert np.isnan(few["lo"]) and np.isnan(few["words"])
    assert SC.fmt_score(few) == "4.50 (n=2)"
    assert SC.fmt_score(SC.score_summary([np.nan])) == "– (n=0)"


def test_scale_note_names_range_and_anchors():
    note = SC.scale_note([("Logic", (1, 2, 3, 4, 5), "1 = incoherent; 5 = coherent"),
                          ("Soundness", (1, 1.5, 4), "1 = poor; 4 = excellent")])
    assert note == "Scales: Logic (1-5: 1 = incoherent; 5 = coherent); Soundness (1-4: 1 = poor; 4 = excellent)."
    assert SC.scale_note([]) == ""


def test_aut_judge_scores_table_has_n_interval_words_and_anchors(tmp_path):
    uses, rows = [], []
    for i in range(6):
        for lvl, code, score in (("common", 1, 1 + i % 2), ("creative", 2, 3 + i % 3)):
            au = f"{lvl}{i}"
            uses.append({"object": "fork", "generator": "g", "level": lvl, "level_code": code, "idx": i,
                         "text": "w " * (code * 4), "au_id": au, "semdis": 0.1, "words": code * 4})
            base = {"object": "fork", "au_id": au, "generator": "g", "level": lvl, "level_code": code,
                    "judge": "j", "self_judged": False, "setting": "comprehensive", "group": 0, "n_items": 12,
                    "order": "forward", "position": i, "parse_path": "text", "attempts": 1, "identity_order": False}
            rows.append({**base, "method": "score", "raw": score, "value": float(score)})
            rows.append({**base, "method": "rank", "raw": 1, "value": 1.0})     # not on the scale: left out
    for name, t in (("uses", uses), ("judgments", rows)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in t))
    t = report.table_judge_scores(Records(tmp_path, AutConfig(n_boot=200)))
    assert list(t["setting"].unique()) == ["comprehensive score"]
    common = t[t["level"] == "common"].iloc[0]
    assert common["n"] == 6 and common["mean"] == 1.5 and common["words"] == 4.0
    creative = t[t["level"] == "creative"].iloc[0]
    assert creative["mean"] == 4.0 and creative["words"] == 8.0
    assert creative["score [95% CI] (n; words)"].startswith("4.00 [") and "(n=6; 8 words)" in creative[
        "score [95% CI] (n; words)"]
    assert "1 = least creative" in t.attrs["caption"] and "5 = most creative" in t.attrs["caption"]
