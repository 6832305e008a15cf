"""Judges with a scripted model wrapped in the real cached Model (real cache, ledger, ChromaDB, MiniLM)."""
from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from creval.core.cache import CallCache
from creval.datasets import macgyver as human
from creval.judges import make_judge, run_judge
from creval.judges.retrieval import RetrievalJudge, split_discussion, split_points
from creval.judges.store import FragmentStore
from creval.models.base import BackendBase
from creval.models.cached import Model
from creval.models.records import ChoiceScores, Completion
from creval.models.spec import ModelSpec


@dataclass(frozen=True)
class Crit:
    name: str
    definition: str


CRITS = [Crit("feasibility", "the plan can be carried out with the items given"),
         Crit("effectiveness", "the plan achieves the goal efficiently")]
PROBLEM = "A door keeps slamming. Items: newspaper, shoelace, soup bowl."
SOLUTION = "Step 1: fold the newspaper into a wedge. Step 2: push it under the door."


class Panel(BackendBase):
    """A rule-based backend: answers each judge prompt in format; confidence set per role."""
    LOGPROB_KIND = "raw"

    def __init__(self, conf=None):
        self.spec = ModelSpec(name="panel", backend="llamacpp", model="panel")
        self.conf = conf or {"problem analyst": 0.9, "solution analyst": 0.6, "criterion analyst": 0.3}
        self.prompts = []

    def _reply(self, msgs):
        text = "\n".join(m["content"] for m in msgs)
        self.prompts.append(text)
        if "Write short, separate insights" in text:
            return "[[POINT]] the newspaper can be folded thick [[POINT]] the wedge holds by friction under the door"
        if "in three labelled parts" in text:
            who = re.search(r"You are the (\w+ analyst)", text).group(1)
            return (f"[[ANSWERS]] none [[OPINION]] as {who} I think the wedge of paper works well "
                    f"[[QUESTIONS]] To Criterion Analyst: how thick must the wedge be?")
        if "How sure are you" in text:
            who = re.search(r"You are the (\w+ analyst)", text).group(1)
            return f"Clear enough. [[{self.conf[who]:.1f}]] ([YES])"
        if "final, strict but fair decision" in text:
            return "[[YES]] the wedge works."
        if "The discussion is over" in text:
            return "[[YES]] ([0.8]) fine"
        if "Your turn" in text:
            return "I argue the paper wedge is a sound plan for holding the door."
        return "[[NO]] ([0.3])"

    def chat(self, reqs):
        return [Completion(self._reply(r.messages), sum(len(m["content"].split()) for m in r.messages),
                           7) for r in reqs]

    def choice_logprobs(self, reqs):
        return [ChoiceScores({"[[YES]]": -0.2, "[[NO]]": -1.8}, 5) for _ in reqs]

    def count_tokens(self, t):
        return len(t.split())


@pytest.fixture(autouse=True)
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "cache.sqlite"))


def model(panel=None, tmp=None):
    return Model(panel or Panel())


def test_split_helpers():
    assert split_points("[[POINT]] one two three [[POINT]] four five six", 50) == ["one two three", "four five six"]
    frags, qs = split_discussion("[[ANSWERS]] none [[OPINION]] it works fine here [[QUESTIONS]] "
                                 "To Solution Analyst: why the wedge? To Problem Analyst: how heavy is the door?")
    assert frags == ["it works fine here"]
    assert qs == [("SA", "why the wedge?"), ("PA", "how heavy is the door?")]


def test_fragment_store_roundtrip():
    st = FragmentStore(None)
    from creval.judges.store import Fragment
    st.reset("p1")
    st.add("p1", [Fragment("a", "the ladder is two metres tall", "PA", "init", 0, "*"),
                  Fragment("b", "bananas are yellow fruit", "SA", "init", 0, "*"),
                  Fragment("c", "round two note about the ladder height", "CA", "discussion", 2, "feasibility"),
                  Fragment("d", "safety note about the ladder", "CA", "discussion", 1, "safety")])
    got = st.get("p1", "how tall is the ladder", 5, "feasibility", max_round=1)
    assert [f.id for f in got] == ["a", "b"]            # round-2 and other-criterion fragments invisible
    got = st.get("p1", "how tall is the ladder", 1, "feasibility", max_round=2)
    assert got[0].id in ("a", "c") and got[0].distance < 0.7


def test_retrieval_early_exit_and_most_confident_gives_verdict():
    panel = Panel()   # mean confidence (0.9+0.6+0.3)/3 = 0.6
    j = RetrievalJudge(Model(panel), confidence_via="text", threshold=0.5, max_rounds=2)
    vs = j.judge(PROBLEM, SOLUTION, CRITS, "p::m")
    assert [v.criterion for v in vs] == ["feasibility", "effectiveness"]
    v = vs[0]
    assert v.verdict is True and v.rounds == 1 and v.early_exit and not v.unparsed
    assert v.confidence == pytest.approx(0.6)
    assert v.extra["verdict_agent"] == "PA"
    verdict_turn = [t for t in v.transcript if t["phase"] == "verdict"][0]
    assert verdict_turn["agent"] == "PA" and 0 < len(verdict_turn["retrieved"]) <= 8
    assert [verdict_turn["input_tokens"], verdict_turn["output_tokens"]] == v.tokens_by["PA/verdict"] != [0, 0]
    disc = [t for t in v.transcript if t["phase"] == "discussion"]
    assert len(disc) == 3 and all(1 <= len(t["retrieved"]) <= 5 for t in disc)
    # fragments: 2 shared init (PA) + 2 (SA) + 2 CA init + 3 opinions, for this criterion
    assert v.extra["fragments"] >= 9
    # tokens: counted from the ledger and split across agents/phases
    assert v.input_tokens > 0 and v.output_tokens > 0
    assert {"PA/discussion", "SA/discussion", "CA/discussion", "CA/init", "PA/verdict"} <= set(v.tokens_by)
    assert sum(x[0] for x in v.tokens_by.values()) == v.input_tokens


def test_retrieval_continues_below_threshold_and_routes_questions():
    panel = Panel()
    j = RetrievalJudge(Model(panel), confidence_via="text", threshold=0.7, max_rounds=2)
    v = j.judge(PROBLEM, SOLUTION, CRITS[:1], "p2")[0]
    assert v.rounds == 2 and not v.early_exit
    ca_round2 = [t for t in v.transcript if t["phase"] == "discussion" and t["round"] == 2 and t["agent"] == "CA"][0]
    assert ca_round2["prompt"].startswith("answer 2 question")   # from PA and SA; its own question is not routed
    # a rerun with another threshold reuses cached turns (the first round is identical)
    from creval.core.ledger import LEDGER
    with LEDGER.collect() as t:
        v2 = RetrievalJudge(Model(panel), confidence_via="text", threshold=0.5).judge(PROBLEM, SOLUTION, CRITS[:1],
                                                                                      "p2")[0]
    recs = [r for r in t.records if r.kind == "chat"]
    assert v2.rounds == 1
    assert all(r.cached for r in recs if r.tags.get("phase") != "verdict"), [r.tags for r in recs if not r.cached]
    assert v2.input_tokens > 0   # cache hits still count their tokens


def test_chateval_history_grows_and_majority():
    panel = Panel()
    j = make_judge("chateval", Model(panel), max_rounds=2)
    v = j.judge(PROBLEM, SOLUTION, CRITS[:1], "p3")[0]
    turns = [p for p in panel.prompts if "Your turn" in p]
    assert len(turns) == 6
    counts = [p.count("I argue the paper wedge") for p in turns]
    assert counts == [0, 1, 2, 3, 4, 5]
    assert v.verdict is True and v.p_yes == pytest.approx(0.8) and v.confidence == pytest.approx(0.8)
    disc_in = [t["input_tokens"] for t in v.transcript if t["phase"] == "discussion"]
    assert disc_in == sorted(disc_in) and disc_in[-1] > disc_in[0]


class CountingPanel(Panel):
    """A panel that records the size of every batch it is asked."""

    def __init__(self):
        super().__init__()
        self.batches = []

    def chat(self, reqs):
        self.batches.append(len(reqs))
        return super().chat(reqs)


def test_chateval_batches_each_turn_over_the_criteria_with_the_same_judgements():
    """Criteria discussed together (one batch per turn, one for every first verdict) judge as when alone."""
    both = CountingPanel()
    together = make_judge("chateval", Model(both), max_rounds=2).judge(PROBLEM, SOLUTION, CRITS, "p5")
    assert both.batches == [2] * 6 + [6]                      # 2 rounds x 3 analysts, then 3 analysts x 2 criteria
    alone = [make_judge("chateval", Model(Panel()), max_rounds=2).judge(PROBLEM, SOLUTION, [c], "p5")[0] for c in CRITS]
    assert [v.to_dict(with_transcript=True) for v in together] == [v.to_dict(with_transcript=True) for v in alone]


def test_retrieval_discusses_the_criteria_together_each_as_if_alone():
    """Each step is one batch over the criteria still discussing: feasibility's panel is sure after round 1,
    effectiveness's is not and goes on alone; each judgement is the one the criterion gets judged alone."""
    class ByCriterion(CountingPanel):
        def _reply(self, msgs):
            text = "\n".join(m["content"] for m in msgs)
            if "How sure are you" in text:
                return "[[0.9]] ([YES])" if 'criterion "feasibility"' in text else "[[0.3]] ([NO])"
            return super()._reply(msgs)
    both = ByCriterion()
    vs = RetrievalJudge(Model(both), confidence_via="text", threshold=0.5).judge(PROBLEM, SOLUTION, CRITS, "p6")
    assert both.batches == [2, 2, 6, 6, 3, 3, 2]     # PA+SA, CA, round 1, certainties, round 2 (one panel), verdicts
    assert [(v.rounds, v.early_exit) for v in vs] == [(1, True), (2, False)]
    alone = [RetrievalJudge(Model(ByCriterion()), confidence_via="text", threshold=0.5).judge(
        PROBLEM, SOLUTION, [c], "p6")[0] for c in CRITS]
    assert [(v.value, v.rounds, v.extra["confidences"]) for v in vs] == \
        [(v.value, v.rounds, v.extra["confidences"]) for v in alone]
    shared, (a, b) = 4, [v.extra["fragments"] for v in alone]            # PA and SA write two points each
    assert [v.extra["fragments"] for v in vs] == [a, a + b - shared]     # the pair's count as judged in turn


def test_fragment_stores_in_threads_see_only_their_own_pairs():
    """In-memory stores share ChromaDB's one system: each names its collections apart; pairs judged in
    threads (one collection each, one lock) give a serial run's fragments."""
    from concurrent.futures import ThreadPoolExecutor

    from creval.judges.store import Fragment
    a, b = FragmentStore(None), FragmentStore(None)
    for st, text in ((a, "the ladder is two metres tall"), (b, "bananas are yellow fruit")):
        st.reset("same")
        st.add("same", [Fragment("x", text, "PA", "init", 0, "*")])
    assert [f.text for f in a.get("same", "ladder", 5, "f", 0)] == ["the ladder is two metres tall"]
    assert a.count("same") == b.count("same") == 1

    def fill(st, i):
        st.reset(f"p{i}")
        st.add(f"p{i}", [Fragment(f"f{k}", f"note {k} about item {i} and its use", "SA", "init", 0, "*")
                         for k in range(3)])
        return [(f.id, round(f.distance, 5)) for f in st.get(f"p{i}", f"item {i}", 2, "f", 0)]
    shared = FragmentStore(None)
    with ThreadPoolExecutor(8) as ex:
        together = list(ex.map(lambda i: fill(shared, i), range(16)))
    assert together == [fill(FragmentStore(None), i) for i in range(16)]
    assert all(shared.count(f"p{i}") == 3 for i in range(16))


@pytest.mark.parametrize("mode", ["zero-shot", "few-shot", "cot"])
def test_single_judges(mode):
    panel = Panel()
    vs = make_judge(mode, Model(panel)).judge(PROBLEM, SOLUTION, CRITS, "p4")
    assert [(v.verdict, v.p_yes) for v in vs] == [(False, 0.3), (False, 0.3)]
    assert vs[0].confidence == pytest.approx(0.7) and vs[0].calls == 1 and vs[0].input_tokens > 0


def test_run_judge_resumes(tmp_path):
    rows = [{"problem_id": "1", "model": "m", "problem_text": PROBLEM, "solution": SOLUTION}]
    st = run_judge("zero-shot", Model(Panel()), rows, CRITS, tmp_path / "run", progress=False)
    assert len(st.read("verdicts")) == 2 and len(st.read("transcripts")) == 2
    st = run_judge("zero-shot", Model(Panel()), rows, CRITS, tmp_path / "run", progress=False)
    assert len(st.read("verdicts")) == 2
    assert (tmp_path / "run" / "manifest.json").exists()


def test_human_mapping_and_bundled_sample(monkeypatch, tmp_path):
    assert human.labels_for("correct_inefficient") == {"feasibility": True, "effectiveness": False}
    assert human.labels_for("correct_efficient") == {"feasibility": True, "effectiveness": True}
    assert human.labels_for("wrong_fail_solvability_status") == {"feasibility": False, "effectiveness": False}
    for k, v in {"CREVAL_SHARED_DATA": "none", "CREVAL_OFFLINE": "1", "CREVAL_HOME": str(tmp_path)}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("CREVAL_MACGYVER_DIR", raising=False)
    rows, src = human.load_annotations()
    assert "illustrative" in src and len(rows) == 5            # correct_unsolvable excluded by default
    assert human.sample_pairs(3, seed=1) == human.sample_pairs(3, seed=1)


def test_score_expectation_reads_certainty_from_log_probs():
    import math

    from creval.judges.retrieval import SCORES, score_expectation
    assert SCORES[0] == "[[0.0]]" and SCORES[-1] == "[[1.0]]" and len(SCORES) == 11
    one_hot = {s: (0.0 if s == "[[0.7]]" else -math.inf) for s in SCORES}
    assert math.isclose(score_expectation(one_hot), 0.7)
    uniform = {s: math.log(1 / 11) for s in SCORES}
    assert math.isclose(score_expectation(uniform), 0.5)
    two = {"[[0.0]]": math.log(0.1), "[[0.8]]": math.log(0.3)}   # renormalised
    assert math.isclose(score_expectation(two), 0.75 * 0.8)
    assert score_expectation({}) is None                        # no finite log-prob: unparsed, not 0.0
    assert score_expectation({s: -math.inf for s in SCORES}) is None


def test_confidence_path_follows_the_backends_log_probs():
    class Local:
        logprob_kind = "raw"

    class Server:
        logprob_kind = "server"

    assert RetrievalJudge(Local()).confidence_via == "logprobs"
    assert RetrievalJudge(Server()).confidence_via == "text"
    assert RetrievalJudge(Local(), confidence_via="text").confidence_via == "text"
    with pytest.raises(ValueError, match="confidence_via"):
        RetrievalJudge(Local(), confidence_via="digits")


def test_run_judge_resumes_its_folder_and_records_the_settings(tmp_path):
    """A folder holds one judge setting (the convergent study gives each its own folder inside its run
    folder): a rerun judges nothing again, and the settings are in the folder's manifest."""
    import json

    from creval.judges import run_judge
    calls = []

    class Backend(BackendBase):
        LOGPROB_KIND = "raw"
        spec = ModelSpec(name="yes-man", backend="llamacpp", model="y")

        def chat(self, reqs):
            calls.append(len(reqs))
            return [Completion("[[YES]] ([0.9])", 10, 3) for _ in reqs]

        def count_tokens(self, t):
            return 1

    m = Model(Backend(), CallCache(tmp_path / "c.sqlite"))
    pairs = [{"pair_id": "p1", "problem": "P", "solution": "S"}]
    from creval.core.ledger import LEDGER
    run_judge("zero-shot", m, pairs, CRITS[:1], tmp_path / "run", progress=False, retries=0)
    assert len(calls) == 1
    with LEDGER.collect() as t:   # resumed: only the new pair is judged
        st = run_judge("zero-shot", m, pairs + [{"pair_id": "p2", "problem": "P2", "solution": "S2"}], CRITS[:1],
                       tmp_path / "run", progress=False, retries=0)
    assert [r.tags["pair"] for r in t.records if r.kind == "chat"] == ["p2"] and len(calls) == 2
    assert [v["pair_id"] for v in st.read("verdicts")] == ["p1", "p2"] and st.read("verdicts")[0]["verdict"] is True
    # calls.jsonl holds each call once: one per pair, with its tokens
    assert [(c["tags"]["pair"], c["input_tokens"], c["output_tokens"]) for c in st.read("calls")
            if c["kind"] == "chat"] == [("p1", 10, 3), ("p2", 10, 3)]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["params"]["judge"] == "zero-shot" and manifest["params"]["judge_params"]["retries"] == 0
    assert not (tmp_path / "run" / "settings.json").exists()


def test_calls_are_recorded_with_each_finished_pair(tmp_path):
    rows = [{"problem_id": str(i), "model": "m", "problem_text": PROBLEM, "solution": SOLUTION} for i in range(2)]
    st = run_judge("retrieval", Model(Panel()), rows, CRITS, tmp_path / "run", width=2, progress=False,
                   confidence_via="text")
    verdicts, calls = st.read("verdicts"), [c for c in st.read("calls") if c["kind"] != "embed"]
    for pid in ("0::m", "1::m"):
        assert sum(v["input_tokens"] for v in verdicts if v["pair_id"] == pid) == \
            sum(c["input_tokens"] for c in calls if c["tags"]["pair"] == pid) > 0


def test_token_table_and_summary_compare_on_common_pairs(tmp_path):
    from creval.core.runs import RunStore
    from creval.studies.contract import Records
    from creval.studies.convergent import report
    rows = [  # judge, pair, criterion, input, output, early_exit, retries
        ("retrieval", "a", "f", 300, 50, True, 0), ("retrieval", "a", "e", 250, 50, False, 1),
        ("retrieval", "b", "f", 400, 100, True, 0),
        ("chateval", "a", "f", 900, 100, False, 2), ("chateval", "a", "e", 900, 100, False, 0),
        ("chateval", "b", "f", 1500, 100, False, 1), ("chateval", "c", "f", 9999, 9, False, 0)]   # c: chateval only
    cols = ["judge", "pair_id", "criterion", "input_tokens", "output_tokens", "early_exit", "retries"]

    def records(folder, keep=lambda r: True) -> Records:
        RunStore(tmp_path / folder).write("human_verdicts", [dict(zip(cols, r)) for r in rows if keep(r)])
        return Records(tmp_path / folder)
    v = records("both")
    tok = report.token_table(v).set_index("judge")
    assert tok.loc["retrieval", "total mean"] == (650 + 500) / 2
    assert tok.loc["chateval", "total mean"] == (2000 + 1600) / 2
    assert tok.loc["retrieval", "share of chateval"] == 1150 / 3600 and tok.loc["chateval", "pairs"] == 2
    s = report.token_summary(v)
    assert "32% of chateval" in s and "2 of 3 retrieval discussions" in s and "retrieval 1, chateval 3" in s
    assert f"{report.PAPER_SHARE:.1%}" == "36.5%"
    alone = records("alone", lambda r: r[0] == "retrieval")        # no baseline judged: an empty table, a sentence
    assert report.token_table(alone).empty and "judge" in report.token_table(alone)
    assert "needed" in report.token_summary(alone)


def test_registry_rejects_what_a_judge_does_not_declare():
    import inspect

    from creval.core.errors import CrevalError
    from creval.judges import JUDGES, judge_settings
    from creval.judges.chateval import ChatEvalJudge
    from creval.judges.retrieval import RetrievalJudge
    from creval.judges.single import SingleJudge
    with pytest.raises(CrevalError, match="judge 'chateval' takes no parameter 'rounds'"):
        make_judge("chateval", Model(Panel()), rounds=2)
    with pytest.raises(CrevalError, match="'k', 'threshold'"):
        make_judge("zero-shot", Model(Panel()), k=5, threshold=0.5, retries=1)
    with pytest.raises(CrevalError, match="unknown judge 'chat-eval'"):
        make_judge("chat-eval", Model(Panel()))
    assert make_judge("chateval", Model(Panel()), max_rounds=3, seed=None).params()["max_rounds"] == 3
    # every declared parameter reaches the judge's constructor under the same name
    for name, cls in [("retrieval", RetrievalJudge), ("chateval", ChatEvalJudge), ("cot", SingleJudge)]:
        accepted = set(inspect.signature(cls.__init__).parameters)
        assert set(JUDGES[name].params) - {"embedder"} <= accepted, name
    # one shared settings dict (the chapter's): each judge takes its share; a key no judge knows is an error
    shared = {"word_limit": 150, "k": 5, "j": 4, "l": 8, "threshold": 0.5, "max_rounds": 2, "retries": 1,
              "verdict_via": "text", "seed": 0}
    assert judge_settings("retrieval", shared) == shared
    assert judge_settings("chateval", shared) == {"word_limit": 150, "max_rounds": 2, "retries": 1,
                                                  "verdict_via": "text", "seed": 0}
    assert judge_settings("few-shot", {**shared, "embedder": None}) == {"retries": 1, "verdict_via": "text", "seed": 0}
    with pytest.raises(CrevalError, match="no judge takes the setting 'judge_max_rounds'"):
        judge_settings("chateval", {"judge_max_rounds": 2})


def test_judgement_holds_a_verdict_or_a_scale_value_and_reads_old_rows():
    from creval.judges import Judgement
    v = Judgement("p1::m", "feasibility", True, "zero-shot", "m", confidence=0.8, p_yes=0.8, parsed_by="text",
                  transcript=[{"agent": "judge"}])
    row = v.to_dict()
    assert row["verdict"] is True and row["unparsed"] is False and row["problem_id"] == "p1" and "transcript" not in row
    assert Judgement.from_dict({**row, "solution_model": "m", "domain": "macgyver"}) == \
        Judgement(**{**v.__dict__, "transcript": []})
    u = Judgement("p2", "safety", None, "cot", "m", parsed_by="text")
    assert u.unparsed and u.state == "unparsed" and u.parsed_by == "unparsed" and u.to_dict()["verdict"] is None
    s = Judgement("p3", "originality", 3.5, "rubric", "m", kind="scale", scale=(1, 5))
    assert s.verdict is None and Judgement.from_dict(s.to_dict()) == s and s.to_dict()["scale"] == [1, 5]
    with pytest.raises(ValueError):
        Judgement("p3", "originality", 3.5, "rubric", "m", kind="scale")
    old = {"pair_id": "p4", "criterion": "safety", "verdict": False, "confidence": 0.6, "judge": "cot", "model": "m",
           "unparsed": False, "verdict_path": "text-retry", "retries": 1}          # a row written before Judgement
    o = Judgement.from_dict(old)
    assert o.value is False and o.parsed_by == "text-retry" and o.state == "ok" and o.retries == 1
    assert Judgement.from_dict({**old, "verdict": None, "unparsed": True}).unparsed


def test_batched_turns_are_tagged_per_agent_in_the_ledger():
    from creval.core.ledger import LEDGER
    with LEDGER.collect() as t:
        RetrievalJudge(Model(Panel()), confidence_via="text", max_rounds=1).judge(PROBLEM, SOLUTION, CRITS[:1], "p9")
    recs = [r for r in t.records if r.kind == "chat"]
    disc = [r.tags["agent"] for r in recs if r.tags.get("phase") == "discussion"]
    init = [r.tags["agent"] for r in recs if r.tags.get("phase") == "init"]
    assert disc == ["PA", "SA", "CA"] and init == ["PA", "SA", "CA"]
    assert all(r.tags["pair"] == "p9" for r in recs)
