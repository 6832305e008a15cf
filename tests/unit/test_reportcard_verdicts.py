"""The card's verdicts by the one rule (issue 33), from fixture records: too few items are not testable, an
order-copying judge is "not testable (the judge copies the order)", a list setting measured entirely by the
log-prob fallback is shown as the fallback and counted once, and the compact card fits the page."""
import json

import numpy as np

from creval.measures.stats import numbers as num
from creval.measures.stats import tracking as TR
from creval.measures.stats import verdicts as V
from creval.studies import card
from creval.studies.aut.config import AutConfig
from creval.studies.contract import Records
from creval.studies.links import dead
from creval.studies.registry import STUDIES
from creval.studies.reportcard import report
from creval.studies.reportcard.config import ReportCardConfig
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.rethinking.grading import RETHINK_SETS
from creval.studies.validation.config import ValidationConfig


def _recs(root, cfg, tables):
    root.mkdir()
    for name, rows in tables.items():
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return Records(root, cfg)


N = 60
HUMAN = [1 + (k % 17) / 4 for k in range(N)]


def _row(scorer, mode, k, value, path, position=0):
    return {"dataset": "ocsai1", "object": f"o{k % 6}", "item_id": f"i{k}", "human": HUMAN[k], "scorer": scorer,
            "mode": mode, "group": 0, "position": position, "value": value, "parse_path": path}


def _aut_records(tmp_path):
    rng = np.random.default_rng(0)
    judge = [h + rng.normal(scale=0.5) for h in HUMAN]
    rows = [_row("j", "pointwise", k, v, "logprobs") for k, v in enumerate(judge)]
    rows += [_row("j", "segmented-score", k, v, "logprobs") for k, v in enumerate(judge)]     # the fallback again
    for k in range(N):                              # ranked forward and reversed; the judge keeps the order shown
        rows += [_row("j", "segmented-rank", k, (k % 8) / 7, "text", k % 8),
                 _row("j", "segmented-rank", k, 1 - (k % 8) / 7, "text", 7 - k % 8)]
    rows += [_row("length (words)", "baseline", k, float(len(str(k))), "text") for k in range(N)]
    return _recs(tmp_path / "aut", AutConfig(), {"human": rows})


def test_an_order_copying_judge_and_a_fallback_setting(tmp_path):
    rows = {r["measure"]: r for r in STUDIES["aut"].card(_aut_records(tmp_path), n_boot=200, seed=0)}
    rank = rows["LLM judge j (segmented-rank)"]
    assert rank["n"] == N and rank["verdict"] == card.UNCLAIMED and rank["tracking"] == V.TESTABLE
    assert rank["reason"] == ("the judge copies the order it was shown (every one of 60 items averages exactly 0.5 "
                              "under order swapping)")
    fallback = [m for m in rows if m.startswith("LLM judge j (segmented-score")]
    assert fallback == ["LLM judge j (segmented-score = the log-prob fallback)"]
    f = rows[fallback[0]]
    assert f["verdict"] == card.UNCLAIMED and f["tracking"] == V.TESTABLE and "counted there" in f["reason"]
    point = rows["LLM judge j (pointwise)"]
    # the judge tracks the ratings, but Rabeyah et al. claimed nothing about people: not tallied either way
    assert point["tracking"] == "tracks people" and point["verdict"] == card.UNCLAIMED
    assert point["value"] == f["value"]                                           # one measurement, counted once
    shown = report.what_this_shows(_recs(tmp_path / "card", ReportCardConfig(),
                                         {"card": card.with_adjusted(list(rows.values())), "sources": []}))
    shown = shown.set_index("verdict")
    assert shown.loc["supports the paper", "rows"] == 0 and shown.loc["contradicts the paper", "rows"] == 0
    assert shown.loc["not testable here", "rows"] == 0                # no claim of theirs: tallied apart
    assert shown.filter(like=card.UNCLAIMED, axis=0)["rows"].tolist() == [3]


def test_the_fallback_row_counts_when_there_is_no_pointwise_row(tmp_path):
    h = _aut_records(tmp_path)["human"]
    h = h[h["mode"] != "pointwise"]
    recs = _recs(tmp_path / "aut2", AutConfig(), {"human": h.to_dict("records")})
    rows = {r["measure"]: r for r in STUDIES["aut"].card(recs, n_boot=200, seed=0)}
    f = [r for m, r in rows.items() if "log-prob fallback" in m]
    assert len(f) == 1 and f[0]["tracking"] == "tracks people"
    assert f[0]["reason"].startswith("Rabeyah et al. report no human ratings")


def test_rows_on_too_few_items_are_not_testable_whatever_their_difference(tmp_path):
    y = list(range(8))
    good = card.graded(card.TAN, "m", "d", y, {"length": [0, 1] * 4}, y, "spearman", 200, 0)
    assert good["difference"] > 0
    assert good["verdict"] == V.TESTABLE and good["reason"] == "8 item(s), fewer than the 30 a verdict needs"
    const = card.graded(card.TAN, "m", "d", [2.0] * 40, {"length": list(range(40))}, list(range(40)), "spearman",
                        200, 0)
    assert const["verdict"] == V.TESTABLE and const["reason"] == "a constant score (2 on all 40 items)"


def test_the_pairwise_judge_that_copies_the_order(tmp_path):
    # one item of 60 off 0.5 (an imputed one) does not hide the order-copying judge: the share is shown
    items = [{"novelty_score": 0.5 if k else 0.75, "semdis": k / 60, "score": 1 + k % 5, "source": "ocsai1",
              "prompt": f"o{k % 6}", "response": "a b c"} for k in range(60)]
    recs = _recs(tmp_path / "val", ValidationConfig(), {"aut_items": items, "macgyver_items": []})
    r = STUDIES["validation"].card(recs, n_boot=200, seed=0)[0]
    assert r["n"] == 60 and r["verdict"] == V.TESTABLE and r["units"] == 60    # responses within objects
    assert r["reason"] == ("the judge copies the order it was shown (59 of 60 (98%) items average exactly 0.5 "
                           "under order swapping)")


def test_the_compact_card_and_the_full_one(tmp_path):
    aut = _aut_records(tmp_path)
    rows = card.with_adjusted(STUDIES["aut"].card(aut, n_boot=200, seed=0))
    stored = [{k: r.get(k) for k in card.COLUMNS + card.SOURCE} for r in rows]
    recs = _recs(tmp_path / "card", ReportCardConfig(), {"card": stored, "sources": []})
    compact = report.table_card(recs)
    assert list(compact.columns) == report.COMPACT and len(compact.columns) == 7
    name = "measure · human data"
    point = compact[compact[name].str.startswith("LLM judge j (pointwise)")].iloc[0]
    r = [x for x in rows if x["measure"] == "LLM judge j (pointwise)"][0]
    # n links to the judge's ratings in the AUT browser: the rows the statistic was computed from
    to = "../browse/aut.html#t=human&amp;f.dataset=ocsai1&amp;f.scorer=j&amp;f.mode="
    assert point["value [95% interval]"] == (f"Spearman rho {num.fmt_estimate(r['value'], r['lo'], r['hi'])}, n = "
                                             f'<a href="{to}pointwise">60</a>')
    lead = point["lead over the strongest baseline"]
    assert lead.startswith(f"{r['baseline']}: ") and "; lead " in lead
    assert point["what it tracks"].split(",")[0] in {TR.word_label({"word": w, "beaten by": r["beaten by"]})
                                                      for w in TR.WORDS}
    assert point["the paper said · here"].startswith("Rabeyah et al.: no human data")
    assert len(report.table_card_full(recs).columns) == len(card.COLUMNS)
    skipped = report.table_untestable(recs)
    assert "LLM judge j (segmented-rank) · ocsai1: AUT originality" in skipped[name].tolist()
    shows = report.what_this_shows(recs)
    cells = "\n".join(list(compact["value [95% interval]"]) + list(shows["which"]) + list(skipped[name])
                      + list(skipped["n"]))
    assert "LLM judge j (segmented-score = the log-prob fallback)" in cells and f"{to}segmented-score" in cells
    assert dead(cells, {"aut": {"human": aut.rows("human")}}) == []


def test_holm_is_shown_beside_the_raw_verdict(tmp_path):
    rows = [{"verdict": card.SUPPORTS, "p": 0.002}, {"verdict": card.SUPPORTS, "p": 0.03},
            {"verdict": V.TESTABLE, "p": float("nan")}, {"verdict": "inconclusive here", "p": float("nan")}]
    adj = card.with_adjusted(rows)
    # three tested claims: 0.002 * 3 = 0.006 stays, 0.03 * 2 = 0.06 does not
    assert [a["adjusted"] for a in adj] == [card.SUPPORTS, "inconclusive here", V.TESTABLE, "inconclusive here"]
    assert report._verdict_text({**adj[1], "borderline": True}) == \
        "supports the paper, borderline (after Holm: inconclusive here, borderline)"
    # with B = 1000 resamples, 0.03 * 2 = 0.06 could be below 0.05 under another seed; 0.002 * 3 could not reach it
    near = card.with_adjusted(rows, n_boot=1000)
    assert [a["adjusted borderline"] for a in near] == [False, True, False, False]
    assert report._verdict_text(near[1]) == "supports the paper (after Holm: inconclusive here, borderline)"
    assert report._verdict_text(near[0]) == "supports the paper"


def _graded_rows(tmp_path) -> list[dict]:
    """Card rows from every graded study's fixture records (a few items each: only their sources matter)."""
    conv = _recs(tmp_path / "conv", None, {"labels_source": [{"line": "Human labels"}], "human_verdicts": [
        {"judge": "retrieval", "pair_id": f"p{k}", "criterion": "c", "label": k % 2 == 0, "verdict": True,
         "unparsed": False, "confidence": 0.9} for k in range(6)]})
    val = _recs(tmp_path / "val", ValidationConfig(), {
        "aut_items": [{"novelty_score": k / 6, "semdis": k / 7, "score": k, "source": "ocsai1", "prompt": f"o{k % 2}",
                       "response": "a b"} for k in range(6)],
        "macgyver_items": [{"novelty_score": k / 6, "semdis": 1 / (k + 1), "unconventional": k % 2 == 0,
                            "problem_id": f"q{k // 2}", "solution": "Step 1: a"} for k in range(6)]})
    model = RethinkingConfig().model
    texts = {ts: [{"id": f"{ts}{k}", "group": f"g{k // 2}", "text": "a b", "label": k % 2 == 0, "kind": "k",
                   "passes": k, "ci": k / 6, "tpt": 0.1 * k, "n_words": 10 + k} for k in range(6)]
             for ts in ("solver", "ttcw")}
    ret = _recs(tmp_path / "ret", RethinkingConfig(), {
        **{f"measures_{ts}": rows for ts, rows in texts.items()},
        "sets": [{"set": ts, "texts": 6, "labelled": True, "why": ""} for ts in texts],
        "perplexity": [{"set": ts, "model": model, "id": r["id"], "ppl": 5.0 + k}
                       for ts, rows in texts.items() for k, r in enumerate(rows)],
        "formatting": [{"set": "solver", "id": r["id"], "marked": k % 2 == 0, "ci_unmarked": k / 5,
                        "n_words_unmarked": 1} for k, r in enumerate(texts["solver"])]})
    up = {"convergent": conv, "validation": val, "rethinking": ret, "aut": _aut_records(tmp_path)}
    return [r for name, recs in up.items() for r in STUDIES[name].card(recs, n_boot=20, seed=0)]


# what the card linked each row to when the source was read off its paper, measure and human data
LINKED = {"convergent judge retrieval": ("convergent", "human_verdicts", {"judge": "retrieval"}),
          ("pairwise novelty judge", "Ocsai-1: AUT originality ratings"): ("validation", "aut_items", {}),
          ("pairwise novelty judge", "MacGyver: unconventional vs conventional solutions"):
              ("validation", "macgyver_items", {}),
          **{f"{m} {ts}": ("rethinking", f"measures_{ts}", {}) for m in ("creativity index",
             "templates per token (negated)") for ts in ("solver", "ttcw")},
          **{f"perplexity {ts}": ("rethinking", "perplexity", {"set": ts}) for ts in ("solver", "ttcw")},
          "creativity index, step markers stripped (formatting control) solver":
              ("rethinking", "formatting", {"set": "solver"}),
          **{f"LLM judge j ({mode})": ("aut", "human", {"dataset": "ocsai1", "scorer": "j", "mode": mode.split(" ")[0]})
             for mode in ("pointwise", "segmented-score = the log-prob fallback", "segmented-rank")}}


def _key(r: dict):
    if r["measure"] == "pairwise novelty judge":
        return r["measure"], r["human data"]
    ts = next((t for t, d, *_ in RETHINK_SETS if d == r["human data"]), None)
    return f"{r['measure']} {ts}" if r["paper"] == card.LU_R else r["measure"]


def test_each_card_row_names_the_study_table_and_filters_it_was_computed_from(tmp_path):
    from creval.book.browse import declared_columns
    rows = _graded_rows(tmp_path)
    assert sorted(map(str, map(_key, rows))) == sorted(map(str, LINKED))          # every kind of row, once
    for r in rows:
        where = (r["source_study"], r["source_table"], r["source_filters"])
        assert report.source_of(r) == where == LINKED[_key(r)], r["measure"]
        kind = STUDIES[where[0]].tables[where[1]]          # a table the study writes, on columns it declares
        assert set(where[2]) <= set(declared_columns(kind)), where
    # a card written before the rows named their source (or a row of no study) links nothing
    assert report.source_of({k: v for k, v in rows[0].items() if k not in card.SOURCE}) is None
    assert report.source_of({**rows[0], **card.sourced(None, None)}) is None
