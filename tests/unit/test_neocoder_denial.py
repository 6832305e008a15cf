"""Denial prompting (Algorithm 1) with a fake model: keyed draws, the thread, one record per round."""
import pytest

from creval.datasets import neocoder as neocoder_data
from creval.measures.techniques import StaticDetector
from creval.models.records import Completion
from creval.studies.neocoder.config import NeoCoderConfig
from creval.studies.neocoder.denial import benchmark_problem, constrained_statement, denial_prompting, draw_ban

LOOP = ("```python\ndef solve():\n    for _ in range(int(input())):\n        input()\n"
        "        print(sum(x for x in map(int, input().split()) if x % 2 == 0))\n```")
WHILE = ("```python\ndef solve():\n    t = int(input())\n    while t:\n        t -= 1\n        input()\n"
         "        print(sum(filter(lambda x: x % 2 == 0, map(int, input().split()))))\n```")


class FakeChat:
    name = "fake-coder"

    def __init__(self, replies):
        self.replies, self.threads = list(replies), []

    def chat(self, messages, **kw):
        self.threads.append(list(messages))
        return Completion(self.replies.pop(0), 10, 20)


def test_draw_is_keyed_and_order_free():
    a = draw_ban(["while loop", "for loop", "if statement"], 0, "neocoder-1A", 1)
    b = draw_ban(["if statement", "for loop", "while loop"], 0, "neocoder-1A", 1)
    assert a == b and a[0] in {"while loop", "for loop", "if statement"}
    picks = {draw_ban(["a", "b", "c", "d"], s, "p", 1)[0] for s in range(40)}
    assert len(picks) > 1                       # the seed matters
    assert draw_ban([], 0, "p", 2) == (None, "0:p:2")


def test_constraint_block():
    s = constrained_statement("T. Title\nBody", ["while loop", "for loop"])
    assert s == f"T. Title\n{neocoder_data.CONSTRAINT_HEADER}\n- while loop\n- for loop\nBody"
    assert constrained_statement("T\nB", []) == "T\nB"


def test_denial_loop(monkeypatch, tmp_path):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "c.sqlite"))
    ps, _ = neocoder_data.load()
    p = next(x for x in ps if x.native == "S1A")
    model = FakeChat([LOOP, WHILE, WHILE])
    cfg = NeoCoderConfig(neocoder_rounds=2, seed=3)
    rows = denial_prompting(model, p, cfg, StaticDetector())
    assert [r.round for r in rows] == [0, 1, 2]
    r0, r1, r2 = rows
    assert r0.banned == [] and r0.state == 0 and r0.verdict_strict["verdict"] == "OK"
    assert r1.candidates == sorted(set(r0.techniques)) and r1.chosen in r1.candidates
    assert r1.banned == [r1.chosen] and r1.state == 1
    assert neocoder_data.CONSTRAINT_HEADER in r1.prompt
    # round 1 is sent in the same thread: system, user0, assistant0, user1
    assert [m["role"] for m in model.threads[1]] == ["system", "user", "assistant", "user"]
    assert model.threads[1][2]["content"] == LOOP
    assert r2.chosen in (None, *r2.candidates) and r2.rng_key == "3:neocoder-S1A:2"
    assert r1.follows == (r1.chosen not in r1.techniques)
    assert r1.neogauge_term == pytest.approx(float(r1.follows and r1.verdict_strict["correct"]) * r1.novelty)


def test_benchmarking_mode_uses_fresh_conversations(monkeypatch, tmp_path):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "c.sqlite"))
    ps, _ = neocoder_data.load()
    p = next(x for x in ps if x.native == "S1A")
    model = FakeChat([LOOP] * 6)
    rows = benchmark_problem(model, p, NeoCoderConfig(), StaticDetector())
    assert [r.state for r in rows] == sorted(p.states)
    assert [r.round for r in rows] == [p.states[t] for t in sorted(p.states)]
    assert all(len(th) == 2 for th in model.threads)           # system + one user turn, no history
    assert rows[1].banned == ["for loop"] and not rows[1].follows and rows[0].follows
