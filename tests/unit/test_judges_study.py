"""Chapter 07c's judges study (issue 64): a judge read against the very references a person is (each person held
out in turn), its lead over the people's ceiling as a paired difference, on simulated panels of known truth; the
study's tables from a panel; a source without judges read as a note, never as numbers."""

import numpy as np
import pandas as pd

from creval.grade import judges as J
from creval.grade import raters as R
from creval.studies.judges import report, run
from creval.studies.judges.config import JudgesConfig
from creval.studies.judges.panels import Panel


def simulate(n_prompts=40, per=8, people_noise=1.0, judge_noise=1.0, n_people=6, seed=0):
    """Texts of ``n_prompts`` prompts, each scored by 3 of ``n_people`` people and by one judge, on a 1-5 scale;
    prompts differ in their level (which the within-prompt reading removes)."""
    rng = np.random.default_rng(seed)
    prompt = np.repeat(np.arange(n_prompts), per).astype(str)
    truth = rng.normal(size=prompt.size) + 2 * rng.normal(size=n_prompts)[np.repeat(np.arange(n_prompts), per)]
    m = np.full((prompt.size, n_people + 1), np.nan)
    for i in range(prompt.size):
        for p in rng.choice(n_people, 3, replace=False):
            m[i, p] = truth[i] + rng.normal(scale=people_noise)
    m[:, n_people] = truth + rng.normal(scale=judge_noise, size=prompt.size)
    return np.clip(np.round(m + 3), 1, 5), prompt


def test_a_judge_as_noisy_as_a_person_is_read_as_level_with_the_ceiling():
    # the judge and the people share one noise: its lead's interval holds 0 in most runs (nominal 95%)
    held = 0
    for s in range(12):
        m, g = simulate(seed=s)
        a = J.agreement_rows(m, list(range(6)), g, n_boot=150, seed=s)
        held += a["lead_lo"][6] <= 0 <= a["lead_hi"][6]
    assert held >= 10


def test_a_judge_closer_to_the_truth_than_any_person_leads_and_a_noisier_one_trails():
    m, g = simulate(judge_noise=0.2, seed=1)
    a = J.agreement_rows(m, list(range(6)), g, n_boot=200, seed=0)
    assert a["lead_lo"][6] > 0 and a["values"][6] > a["ceiling"]
    m, g = simulate(judge_noise=3.0, seed=2)
    a = J.agreement_rows(m, list(range(6)), g, n_boot=200, seed=0)
    assert a["lead_hi"][6] < 0


def test_the_people_ceiling_is_the_one_the_card_draws():
    m, g = simulate(seed=3)
    a = J.agreement_rows(m, list(range(6)), g, n_boot=0)
    assert abs(a["ceiling"] - R.ceiling_within(m[:, :6], g)["agreement"]) < 1e-12


def test_the_study_writes_every_table_from_a_panel_and_a_note_for_a_source_without_judges():
    m, g = simulate(n_prompts=12, seed=4)
    rng = np.random.default_rng(0)
    judge = np.column_stack([m[:, 6], np.clip(m[:, 6] + rng.integers(-1, 2, len(m)), 1, 5)])
    p = Panel("sim", "surprise", "Surprise (1-5)", "sim", False, [f"t{i}" for i in range(len(m))], g,
              np.arange(len(m)) % 8 == 0, rng.integers(50, 500, len(m)).astype(float), m[:, :6],
              [f"p{i}" for i in range(6)], "crowd", {"J": judge}, {"J": 0.0})
    cfg = JudgesConfig.from_params({"n_boot": 100, "judges_irt_boot": 3})
    info, raters, variants, bias, texts = run.panel_tables(cfg, p)
    assert info["n_texts"] == len(m) and info["n_prompts"] == 12 and info["n_judges"] == 1 and not info["note"]
    assert len(texts) == len(m) and texts[0]["judge:J"] == (judge[0, 0] + judge[0, 1]) / 2
    assert texts[0]["people"] == np.nanmean(m[0, :6]) and texts[0]["n_people"] == 3
    assert [r["rater"] for r in raters] == [*(f"p{i}" for i in range(6)), "J"]
    assert raters[-1]["alt_passes"] in ("yes", "no") and raters[0]["alt_passes"] == ""
    assert len(variants) == 1 and 0 <= variants[0]["flip_rate"] <= 1 and variants[0]["variants"] == 2
    assert len(bias) == 1 and bias[0]["n_prompts"] == 12
    empty = run.panel_tables(cfg, Panel("hanna", "surprise", "Surprise", "sample:x", True, note="no judges"))
    assert empty[0]["note"] == "no judges" and empty[1:] == ([], [], [], [])
    recs = {"panels": pd.DataFrame([info, empty[0]]), "raters": pd.DataFrame(raters),
            "variants": pd.DataFrame(variants), "bias": pd.DataFrame(bias), "own": pd.DataFrame()}
    text = report.summary(recs)
    assert "not read (no judges)" in text and "**sim · Surprise (1-5)** (96 texts on 12 prompts" in text
    assert len(report.table_raters(recs)) == 7


class Rater:
    """A scripted judge behind the real cached Model, read by parsing (no raw log-probs, as a server): it gives
    people's stories 5 and the generators' 2, and answers one story's questions with no rating at all."""

    def __init__(self, mute: str):
        from creval.models.spec import ModelSpec
        self.spec, self.mute, self.asked = ModelSpec(name="scripted", backend="openai", model="scripted"), mute, 0

    LOGPROB_KIND = "none"

    def chat(self, reqs):
        from creval.models.records import Completion
        out = []
        for r in reqs:
            self.asked += 1
            text = r.messages[1]["content"]
            aspect = "Surprise" if "Surprise" in text else "Complexity"
            reply = ("I would rather not say." if self.mute in text else
                     f"[[{aspect}: {5 if 'Mara read the envelope' in text else 2}]]")
            out.append(Completion(reply, 50, 5))
        return out

    def count_tokens(self, t):
        return len(t.split())


def test_your_judge_rates_the_seeded_stories_is_placed_among_the_released_and_an_unreadable_one_is_unparsed(
        tmp_path, monkeypatch):
    from creval.models.base import BackendBase
    from creval.models.cached import Model
    from creval.studies.judges import panels as P
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "cache.sqlite"))
    hanna = [p for p in P.panels_of(("hanna",)) if p.readable]
    mute = hanna[0].texts[-1][:40]                       # one generator's story gets no rating
    backend = type("Scripted", (Rater, BackendBase), {})(mute)
    monkeypatch.setattr(run, "load_model", lambda name: Model(backend))
    spec = tmp_path / "my-judge.yaml"          # a server's spec (never reached: the backend is scripted)
    spec.write_text("backend: openai\nmodel: scripted\nbase_url: http://127.0.0.1:9/v1\nconcurrency: 4\n")
    cfg = JudgesConfig.from_params({"judge_model": str(spec), "judges_own_prompts": 2, "n_boot": 50,
                                    "judges_irt_boot": 0, "run_root": str(tmp_path / "runs")})
    store = type("Store", (), {"note_model": lambda self, m: None})()
    panels, rows = run.own_judge(cfg, store, hanna)
    picked = run.own_prompts(cfg, hanna[0])
    assert len(picked) == 2 and picked == run.own_prompts(cfg, hanna[0])          # seeded: the same two again
    assert len(rows) == 2 * 3 * 2 and {r["criterion"] for r in rows} == {"surprise", "complexity"}
    bad = [r for r in rows if r["state"] == "unparsed"]
    assert all(r["score"] is None and r["tries"] == 3 for r in bad)               # asked, then re-asked twice
    assert all(r["score"] in (2.0, 5.0) for r in rows if r["state"] == "ok")
    assert [p.set for p in panels] == [run.YOURS] * 2 and "yours: my-judge" in panels[0].judges
    info, raters, _, _, texts = run.panel_tables(cfg, panels[0])
    assert info["n_texts"] == 6 and "yours: my-judge" in [r["rater"] for r in raters]
    asked = backend.asked
    again, _ = run.own_judge(cfg, store, hanna)                                     # a rerun: every call cached
    assert backend.asked == asked and len(again) == 2
    # the embedded default is never asked: one note, no rows
    note, none = run.own_judge(JudgesConfig.from_params({"judges_own_prompts": 2}), store, hanna)
    assert none == [] and len(note) == 1 and "not testable" in note[0].note


def test_a_panel_on_some_of_its_prompts_keeps_whole_prompts_and_only_their_people():
    m, g = simulate(n_prompts=10, per=4, n_people=8, seed=5)
    m[:, 7] = np.where(np.isin(g, ["0", "1"]), 3.0, np.nan)      # person 7 rated prompts 0 and 1 only
    p = Panel("sim", "surprise", "S", "sim", False, [f"t{i}" for i in range(len(m))], g, np.zeros(len(m), bool),
              np.ones(len(m)), m[:, :8], [f"p{i}" for i in range(8)], "crowd", {"J": m[:, 8:]}, {"J": 0.0})
    q = p.first_prompts(3, seed=1)
    assert len(set(q.prompt.tolist())) == 3 and len(q.ids) == 12 and q.judges["J"].shape == (12, 1)
    assert q.ids == p.first_prompts(3, seed=1).ids and q.ids != p.first_prompts(3, seed=2).ids
    assert np.isfinite(q.people).any(axis=0).all()                 # nobody left who rated none of them
    later = p.subset(np.isin(g, ["2", "3"]))
    assert "p7" not in later.people_names and "p7" in p.subset(np.isin(g, ["1", "2"])).people_names
    assert p.first_prompts(0, 1) is p and p.first_prompts(99, 1) is p


def test_the_card_grades_a_ttcw_judge_against_the_people_and_its_flips_against_theirs():
    from creval.studies import card as C
    from creval.studies.judges import grading
    m, g = simulate(n_prompts=30, judge_noise=0.3, seed=6)
    rng = np.random.default_rng(1)
    steady = np.column_stack([m[:, 6]] * 4)                          # four wordings that never change its order
    texts = [" ".join(["word"] * int(k)) for k in rng.integers(50, 400, len(m))]   # length unrelated to quality
    p = Panel("ttcw", "tests_passed", "Torrance tests passed (0-14)", "sim", False, [f"t{i}" for i in range(len(m))],
              g, np.arange(len(m)) % 4 == 0, np.array([len(t.split()) for t in texts], float), m[:, :6],
              [f"p{i}" for i in range(6)], "expert", {"J": steady}, {"J": 0.0}, texts=texts)
    cfg = JudgesConfig.from_params({"n_boot": 200, "judges_irt_boot": 0})
    info, raters, variants, bias, rows = run.panel_tables(cfg, p)
    recs = {"panels": pd.DataFrame([info]), "variants": pd.DataFrame(variants), "texts": pd.DataFrame(rows)}
    card = grading.card_rows(recs, 200, 0)
    judged, steadiness = card
    assert judged["measure"] == "LLM judge J" and judged["tracking"] == "tracks people"
    assert judged["raters"] == info["people"] and judged["ceiling"] == info["ceiling"]
    assert judged["source_filters"] == {"set": "ttcw", "criterion": "tests_passed"}
    # the judge's wordings never flip an order while the people's raters often do: Lu et al.'s claim contradicted
    assert steadiness["question"] == C.STEADINESS_Q and steadiness["hi"] < 0
    assert steadiness["verdict"] == C.CONTRADICTS and steadiness["tracking"] == "flips less often than the people"
    assert steadiness["value"] == -variants[0]["people_flip"] and 0 < steadiness["p"] < 0.05
    # a HANNA panel's released judges are chapter 07b's rows: only the flips come from here
    recs["texts"] = pd.DataFrame([{**r, "set": "hanna"} for r in rows])
    assert [r["question"] for r in grading.card_rows(recs, 200, 0)] == [C.STEADINESS_Q]


class Answerer(Rater):
    """A scripted judge that says a story passes a test when the story holds "bold", and answers one story's
    tests with no verdict at all."""

    def chat(self, reqs):
        from creval.models.records import Completion
        out = []
        for r in reqs:
            self.asked += 1
            text = r.messages[1]["content"]
            reply = ("No idea." if self.mute in text else f"[[Passes: {1 if 'bold' in text else 0}]]")
            out.append(Completion(reply, 50, 5))
        return out


def test_your_judge_answers_ttcws_tests_on_whole_plots_and_a_story_with_an_unread_test_gets_no_count(
        tmp_path, monkeypatch):
    from creval.models.base import BackendBase
    from creval.models.cached import Model
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "cache.sqlite"))
    m, g = simulate(n_prompts=6, per=4, seed=7)
    texts = [("" if i % 4 == 0 else f"story {i}: a {'bold' if i % 2 else 'timid'} tale") for i in range(len(m))]
    p = Panel("ttcw", "tests_passed", "Torrance tests passed (0-14)", "sim", False, [f"t{i}" for i in range(len(m))],
              g, np.arange(len(m)) % 4 == 0, np.full(len(m), 300.0), m[:, :6], [f"p{i}" for i in range(6)], "expert",
              {"J": m[:, 6:7]}, {"J": 0.0}, texts=texts)
    tests = pd.DataFrame([{"ttcw_idx": k, "dimension": "d", "category": f"c{k}", "question": f"q{k}?",
                           "background": "what it looks for"} for k in range(1, 15)])
    monkeypatch.setattr(run.ttcw, "load_tests", lambda: tests)
    backend = type("Scripted", (Answerer, BackendBase), {})("")
    monkeypatch.setattr(run, "load_model", lambda name: Model(backend))
    spec = tmp_path / "my-judge.yaml"
    spec.write_text("backend: openai\nmodel: scripted\nbase_url: http://127.0.0.1:9/v1\nconcurrency: 4\n")
    cfg = JudgesConfig.from_params({"judge_model": str(spec), "judges_own_prompts": 0, "judges_own_plots": 2,
                                    "n_boot": 50, "judges_irt_boot": 0, "run_root": str(tmp_path / "runs")})
    store = type("Store", (), {"note_model": lambda self, m: None})()
    plots = run.own_plots(cfg, p)
    told = [i for i, k in enumerate(g) if k in plots and texts[i]]          # the released texts of the 2 plots
    backend.mute = texts[told[0]]                                           # its tests get no verdict
    panels, rows = run.own_judge(cfg, store, [p])
    assert len(plots) == 2 and len(rows) == 14 * len(told) == 14 * 6
    assert {r["criterion"] for r in rows} == {f"test-{k:02d}" for k in range(1, 15)}
    (q,) = panels
    assert q.set == run.YOURS_TTCW and q.ids == [f"t{i}" for i in told]
    got = dict(zip(q.ids, q.judges["yours: my-judge"][:, 0]))
    assert np.isnan(got[f"t{told[0]}"])        # one unread test of 14: no count for that story
    assert all(got[f"t{i}"] == (14.0 if i % 2 else 0.0) for i in told[1:])   # 14 for a bold story, 0 for a timid one
    assert sum(r["state"] == "unparsed" and r["tries"] == 3 for r in rows) == 14
    asked = backend.asked
    run.own_judge(cfg, store, [p])                                           # a rerun: every call cached
    assert backend.asked == asked
