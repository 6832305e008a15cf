"""Chapter 07's human tables from fixture records: rater pairs, the ceilings, judge vs baseline."""
import json

import numpy as np
import pytest

from creval.measures import stats as S
from creval.studies.aut import human, reading, report
from creval.studies.aut.config import AutConfig
from creval.studies.contract import Records


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
    assert t.loc[next(k for k in t.index if "one more person" in k), "rho pooled"] == pytest.approx(S.one_vs_mean(r, 2))
    assert t.loc[next(k for k in t.index if "noise ceiling" in k), "rho pooled"] == pytest.approx(S.noise_ceiling(r, 2))


def test_judge_minus_baseline_on_the_same_items(tmp_path):
    humans = list(range(1, 21))
    judge = [h + (0.1 if k % 2 else -0.1) for k, h in enumerate(humans)]       # ranks the humans perfectly
    length = list(reversed(humans))                                          # perfectly wrong
    recs = _records(tmp_path, {"human": _human("j", "pointwise", judge, humans) +
                               _human("length (words)", "baseline", length, humans)})
    t = human.table_vs_baselines(recs).iloc[0]
    assert t["judge"] == "j" and t["baseline"] == "length (words)" and t["n"] == 20
    assert t["rho judge - rho baseline"] == pytest.approx(2.0) and t["verdict"] == "better"


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
    assert S.fmt_number(reading.null_halfwidth(24)) == "0.34"
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
    assert md[1].startswith("- **reproduced (3 item(s)")
    assert "(judged by g) the mean SRC against the oracle is 1.00" in md[1]
    assert md[2].startswith("- **reproduced (3 item(s)") and "for 1 of 1 generator(s)" in md[2]
    assert md[3].startswith("- **not testable here**")
