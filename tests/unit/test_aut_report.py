"""Chapter 07's human tables from fixture records: rater pairs, the ceilings, judge vs baseline."""
import json
from pathlib import Path

import numpy as np
import pytest

from creval.measures.stats import correlation as corr
from creval.measures.stats import numbers as num
from creval.measures.stats import raters as RT
from creval.studies.aut import human, reading, report
from creval.studies.aut.config import AutConfig
from creval.studies.contract import Records
from creval.studies.links import dead_in


def _records(tmp_path, tables):
    for name, rows in tables.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return Records(tmp_path, AutConfig(n_boot=200))


def _human(scorer, mode, values, humans):
    return [{"dataset": "d", "object": "brick", "item_id": f"i{k}", "human": h, "scorer": scorer, "mode": mode,
             "group": 0, "position": 0, "value": v, "parse_path": "text"}
            for k, (v, h) in enumerate(zip(values, humans))]


def test_rater_pairs_and_what_they_allow_a_judge(tmp_path):
    rng = np.random.default_rng(0)
    truth = rng.normal(size=60)
    raters = [truth + rng.normal(scale=s, size=60) for s in (0.5, 1.0, 1.5)]
    rows = []
    for i in range(60):                       # each item has two of the three raters
        skip = i % 3
        rows.append({"item_id": f"c{i}", "source": "cambridge",
                     **{f"rater{j + 1}": (None if j == skip else float(raters[j][i])) for j in range(3)}})
    t = human.table_human_reference(_records(tmp_path, {"raters": rows})).set_index("reference")
    pairs = [k for k in t.index if " vs rater" in k]
    assert len(pairs) == 3 and all(t.loc[k, "n"] == 20 for k in pairs)
    r = float(np.average([t.loc[k, "rho pooled"] for k in pairs], weights=[20, 20, 20]))
    mean_row = next(k for k in t.index if "n-weighted mean" in k)
    assert t.loc[mean_row, "rho pooled"] == pytest.approx(r)
    row = lambda words: next(k for k in t.index if words in k)   # noqa: E731
    assert t.loc[row("one more person"), "rho pooled"] == pytest.approx(RT.one_vs_mean(r, 2))
    assert t.loc[row("noise ceiling"), "rho pooled"] == pytest.approx(RT.noise_ceiling(r, 2))


def test_judge_minus_baseline_on_the_same_items(tmp_path):
    humans = list(range(1, 21))
    judge = [h + (0.1 if k % 2 else -0.1) for k, h in enumerate(humans)]       # ranks the humans perfectly
    length = list(reversed(humans))                                          # perfectly wrong
    recs = _records(tmp_path, {"human": _human("j", "pointwise", judge, humans) +
                               _human("length (words)", "baseline", length, humans)})
    t = human.table_vs_baselines(recs).iloc[0]
    assert t["judge"] == "j" and t["baseline"] == "length (words)" and t["n"] == 20
    assert t["rho judge - rho baseline"] == pytest.approx(2.0) and t["verdict"] == "better"


def test_a_judge_against_baseline_word_a_seed_could_flip_is_marked(tmp_path, monkeypatch):
    humans = list(range(1, 21))
    recs = _records(tmp_path, {"human": _human("j", "pointwise", humans, humans) +
                               _human("length (words)", "baseline", list(reversed(humans)), humans)})
    monkeypatch.setattr(human.corr, "paired_diff_ci", lambda *a, **k: {
        "n": 20, "diff": 0.2, "lo": 0.004, "hi": 0.4, "note": "",
        **dict(zip(("verdict", "borderline"), corr.paired_word(0.004, 0.4, (0.01, 0.01))))})
    assert human.table_vs_baselines(recs).iloc[0]["verdict"] == "better, borderline"
    assert reading.reading_values(recs)["human"]["vs_baseline"] == {"better": 1, "indistinguishable": 0, "worse": 0}


def test_self_preference_keeps_its_margins_and_its_verdict_can_be_borderline(tmp_path, monkeypatch):
    import pandas as pd
    cols = list(report.table_self_preference(_records(tmp_path, {})).columns)
    assert cols[-2:] == ["mc_lo", "mc_hi"]
    row = {"setting": "s", "judge": "a", "sp": 0.2, "lo": 0.004, "hi": 0.4, "n_own": 40, "n_other": 40, "note": "",
           "mc_lo": 0.01, "mc_hi": 0.01}
    monkeypatch.setattr(reading, "table_self_preference", lambda recs: pd.DataFrame([row]))
    md = reading.what_this_shows(Records(tmp_path, AutConfig(model="g", judge_model="g"))).split("\n")
    assert md[-1].startswith("- **supports the paper, borderline**")
    monkeypatch.setattr(reading, "table_self_preference", lambda recs: pd.DataFrame([{**row, "mc_lo": 0.001}]))
    md = reading.what_this_shows(Records(tmp_path, AutConfig(model="g", judge_model="g"))).split("\n")
    assert md[-1].startswith("- **supports the paper**")


def test_agreement_counts_the_cells_without_a_value(tmp_path):
    rows = []
    for g, lvl, code, v in (("g", "common", 1, 1.0), ("g", "creative", 2, 2.0), ("g", "highly_creative", 3, None)):
        rows.append({"object": "fork", "au_id": f"{lvl}", "generator": g, "level": lvl, "level_code": code,
                     "judge": "j", "self_judged": True, "method": "score", "setting": "comprehensive", "group": 0,
                     "n_items": 3, "order": "forward", "position": code - 1, "raw": v, "value": v,
                     "parse_path": "text" if v is not None else "unparsed", "attempts": 1, "identity_order": False})
    t = report.table_agreement(_records(tmp_path, {"judgments": rows})).iloc[0]
    assert t["cells without a value"] == 1
    assert t["src"] == pytest.approx(-0.5)      # the unparsed highly creative cell went last: [2, 1, 3] vs [3, 2, 1]


def test_reading_values_come_from_the_tables(tmp_path):
    assert reading.null_halfwidth(24) == pytest.approx(1.6449 / np.sqrt(23))
    assert num.fmt_number(reading.null_halfwidth(24)) == "0.34"
    humans = list(range(1, 21))
    judge = [h + (0.1 if k % 2 else -0.1) for k, h in enumerate(humans)]
    recs = _records(tmp_path, {"human": _human("j", "pointwise", judge, humans) +
                               _human("length (words)", "baseline", list(reversed(humans)), humans)})
    v = reading.reading_values(recs)
    h = v["human"]
    assert h["per_object"] == "20" and h["halfwidths"] == "±0.38 at n = 20"        # 1.6449 / sqrt(19)
    assert h["judge_rho"] == "1.00 to 1.00" and h["judge_rows"] == 1 and h["judge_ci_hold_zero"] == 0
    assert h["vs_baseline"] == {"better": 1, "indistinguishable": 0, "worse": 0} and not h["sample"]
    assert v["raters"] is None and v["levels"] is None and v["bias"] is None
    assert v["ocsai"]["ocsai-chatgpt (fine-tuned gpt-3.5)"] == "0.79"
    md = reading.reading_md(recs)
    assert "ranges 1.00 to 1.00 over 1 rows" in md and "90% interval of ±0.38 at n = 20" in md
    assert "better 1 times" in md and "The levels in this build" not in md


def _judgment(judge, g, lvl, code, v, obj="fork"):
    return {"object": obj, "au_id": f"{g}-{lvl}", "generator": g, "level": lvl, "level_code": code, "judge": judge,
            "self_judged": judge == g, "method": "score", "setting": "comprehensive", "group": 0, "n_items": 6,
            "order": "forward", "position": code - 1, "raw": v, "value": v, "parse_path": "text", "attempts": 1,
            "identity_order": False}


def test_what_this_shows_with_one_judge_and_ordered_levels(tmp_path):
    uses = [{"object": "fork", "generator": "g", "level": lvl, "level_code": code, "semdis": 0.2 * code,
             "words": 3, "idx": 0, "text": "x", "au_id": f"g-{lvl}"}
            for lvl, code in (("common", 1), ("creative", 2), ("highly_creative", 3))]
    rows = [_judgment("g", "g", lvl, code, float(code)) for lvl, code in
            (("common", 1), ("creative", 2), ("highly_creative", 3))]
    recs = Records(tmp_path, AutConfig(model="g", judge_model="g"))
    for name, t in (("uses", uses), ("judgments", rows)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in t))
    md = reading.what_this_shows(recs).split("\n")
    assert md[0].startswith("- **not testable here**") and "1 judge(s) (g)" in md[0]
    # the object is the unit of agreement: one object cannot carry a verdict, however high its SRC
    assert md[1].startswith("- **not testable here (1 object(s), fewer than the 30 a verdict needs)**")
    assert "(Judged by g.) Here the mean over settings and judge pairs is 1.00" in md[1]
    assert "(bootstrap over [1 objects](../browse/aut.html#t=judgments))" in md[1]      # the count links to its items
    assert not dead_in("\n".join(md), recs)
    assert md[2].startswith("- **not testable here (") and "for 1 of 1 generator(s)" in md[2]
    assert md[3].startswith("- **not testable here**")


def _uses(texts, level="highly_creative", obj="fork"):
    return [{"object": obj, "generator": "g", "level": level, "level_code": 3, "semdis": 0.5, "words": 3, "idx": i,
             "text": t, "au_id": f"u{i}", "turn": 1} for i, t in enumerate(texts)]


def test_uses_that_echo_the_prompt_are_flagged_in_generation_health(tmp_path):
    texts = ["Shape: think of things with a similar shape", "a comb for a doll", "stir paint",
             "take something from a field where a fork is never used"]
    assert [report.echoes_prompt(t, "fork") for t in texts] == [True, False, False, True]
    assert not report.echoes_prompt("think of things", "fork")        # three words are not an echo
    turns = [{"generator": "g", "level": "highly_creative", "attempt": 0, "refusal": False}]
    recs = _records(tmp_path, {"uses": _uses(texts), "turns": turns})
    row = report.generation_health(recs).iloc[0]
    assert row["echo the prompt"] == 2 and row["uses kept"] == 4
    assert "2 of the 4 highly creative uses kept repeat the prompt's own words" in reading.reading_md(recs)


def _scored(judge, path_of, setting):
    rows = []
    for lvl, code in (("common", 1), ("creative", 2), ("highly_creative", 3)):
        r = _judgment(judge, "g", lvl, code, float(code))
        rows.append({**r, "setting": setting, "parse_path": path_of(lvl)})
    return rows


def test_settings_that_all_came_from_the_fallback_are_one_measurement_shown_once(tmp_path):
    rows = (_scored("g", lambda lvl: "logprobs", "comprehensive") + _scored("g", lambda lvl: "logprobs", "segmented"))
    recs = _records(tmp_path, {"judgments": rows})
    assert report.fallback_settings(recs) == ["comprehensive score", "segmented score"]
    t = report.table_agreement(recs)
    assert t["setting"].tolist() == [report.FALLBACK] and t["from fallback"].tolist() == [True]
    assert "shown once" in t.attrs["caption"]
    assert "One measurement under 2 name(s)" in reading.reading_md(recs)
    # one value read from the text: the comprehensive setting is its own measurement again
    mixed = (_scored("g", lambda lvl: "text" if lvl == "common" else "logprobs", "comprehensive")
             + _scored("g", lambda lvl: "logprobs", "segmented"))
    recs = _records(tmp_path, {"judgments": mixed})
    assert report.fallback_settings(recs) == ["segmented score"]
    t = report.table_agreement(recs)
    assert t["setting"].tolist() == ["comprehensive score", report.FALLBACK]
    assert t["from fallback"].tolist() == [False, True]


def test_the_papers_table2_prints_means_over_five_objects_not_multiples_of_an_eighth():
    """The chapter's sentence: per-object SRCs are multiples of 1/8 (12 cells), Table 2 means over five objects
    are multiples of 1/40 rounded to two decimals, so some printed values are no multiple of 1/8."""
    v = report.PAPER_TABLE2.to_numpy().ravel()
    assert all(min(abs(x - k / 40) for k in range(-40, 41)) <= 0.0051 for x in v)
    assert any(min(abs(x - k / 8) for k in range(-8, 9)) > 0.0051 for x in v)
    assert report.paper_table2().shape[0] == 5
    nb = json.loads((Path(__file__).resolve().parents[2] / "chapters" / "07-aut-agreement.ipynb").read_text())
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "Every correlation the paper prints is a multiple of 1/8" not in text
    assert "means over the five\nobjects, so multiples of 1/40" in text


def test_degenerate_settings_are_left_out_of_the_agreement_verdicts(tmp_path):
    """A ranking that copies the order shown, a constant score: agreement with them is no evidence."""
    uses = [{"object": "fork", "generator": "g", "level": lvl, "level_code": code, "semdis": 0.2 * code,
             "words": 3, "idx": 0, "text": "x", "au_id": f"g-{lvl}"}
            for lvl, code in (("common", 1), ("creative", 2), ("highly_creative", 3))]
    levels = (("common", 1), ("creative", 2), ("highly_creative", 3))
    const = [_judgment("g", "g", lvl, code, 3.0) for lvl, code in levels]
    copied = [{**_judgment("g", "g", lvl, code, 1 - (code - 1) / 2), "method": "rank", "identity_order": True}
              for lvl, code in levels]
    recs = _records(tmp_path, {"uses": uses, "judgments": const + copied})
    assert report.degenerate_settings(recs) == {
        "comprehensive rank": "a judge that copies the presented order (1 of 1 rankings, 100%)",
        "comprehensive score": "a constant score (3 on all 3 items)"}
    t = report.table_agreement(recs).set_index("setting")
    assert t.loc["comprehensive score", "degenerate"] == "a constant score (3 on all 3 items)"
    assert "Degenerate settings (comprehensive rank, comprehensive score" in report.table_agreement(recs).attrs[
        "caption"]
    assert "(degenerate)" in report.fig_heatmaps(recs).layout.annotations[0].text
    md = reading.what_this_shows(recs).split("\n")
    assert md[1].startswith("- **not testable here (comprehensive rank: a judge that copies the presented order (1 "
                            "of 1 rankings, 100%); comprehensive score: a constant score (3 on all 3 items))**")
    good = [_judgment("g", "g", lvl, code, float(code)) for lvl, code in levels]
    recs = _records(tmp_path, {"uses": uses, "judgments": good + copied})
    assert list(report.degenerate_settings(recs)) == ["comprehensive rank"]
    md = reading.what_this_shows(recs).split("\n")
    assert "the mean over settings and judge pairs is 1.00" in md[1]
    assert ("Left out, as degenerate: comprehensive rank: a judge that copies the presented order (1 of 1 rankings, "
            "100%).") in md[1]
