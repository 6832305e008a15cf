"""Technique vocabulary, the tolerant reply parser (no silent default) and the static detector's switches."""
from creval.judges.techniques import LLMDetector
from creval.measures.techniques import VOCABULARY, StaticDetector, parse_reply


def test_vocabulary():
    assert len(VOCABULARY) == 34 and len(set(VOCABULARY)) == 34
    assert "width first search" in VOCABULARY and "Kadanes algorithm" in VOCABULARY


def test_parser_is_tolerant():
    d = parse_reply("Techniques:\n- For Loop (to iterate)\n* `if statement`\n2. Breadth-First Search\n"
                    "- divide and conquer, hash map\n- list comprehension")
    assert d.techniques == ("for loop", "if statement", "width first search", "divide & conquer", "hashmap")
    assert "list comprehension" in d.unknown and d.status == "ok"


def test_parser_has_no_silent_default():
    d = parse_reply("I cannot tell.")
    assert d.techniques == () and d.status == "unparsed"
    assert parse_reply("None").status == "none"
    assert parse_reply("").status == "unparsed"


CODE = """
def solve():
    t = int(input())
    for _ in range(t):
        a = sorted(int(x) for x in input().split())
        b = {x: 1 for x in a}
        print(a[0] if a else 0)
def f(n):
    return 1 if n < 2 else n * f(n - 1)
"""


def test_static_detector_and_switches():
    d = StaticDetector().detect_one(CODE)
    for t in ("for loop", "sorting", "dictionary", "if statement", "recursion"):
        assert t in d.techniques
    assert "while loop" not in d.techniques
    strict = StaticDetector(comprehension_is_for_loop=False, ternary_is_if=False)
    only_comp = "print([x for x in range(3)])\nprint(1 if 2 else 3)"
    assert set(StaticDetector().detect_one(only_comp).techniques) == {"for loop", "if statement"}
    assert strict.detect_one(only_comp).techniques == ()
    assert strict.detect_one("def f(:").status == "not_parsable"


class _Reply:
    def __init__(self, text):
        self.text = text


class FakeModel:
    name = "fake"

    def __init__(self, replies):
        self.replies, self.calls = list(replies), 0

    def chat_many(self, convs, **kw):
        assert kw["temperature"] == 0.0
        out = []
        for _ in convs:
            self.calls += 1
            out.append(_Reply(self.replies.pop(0)))
        return out


def test_llm_detector_reasks_then_unparsed():
    m = FakeModel(["no idea", "still nothing", "- while loop"])
    d = LLMDetector(m, retries=2).detect(["x=1"])[0]
    assert d.techniques == ("while loop",) and m.calls == 3
    m = FakeModel(["?", "?"])
    d = LLMDetector(m, retries=1).detect(["x=1"])[0]
    assert d.status == "unparsed" and d.techniques == () and m.calls == 2


def test_llm_detector_rejects_a_parroted_list():
    parrot = "\n".join(f"- {t}" for t in VOCABULARY[:20])
    m = FakeModel([parrot, parrot])
    d = LLMDetector(m, retries=1).detect(["x=1"])[0]
    assert d.status == "unparsed" and d.techniques == () and m.calls == 2


def test_a_truncated_code_is_detected_on_its_parsable_prefix():
    from creval.measures.techniques import StaticDetector
    code = ("def solve():\n    n = int(input())\n    for i in range(n):\n        print(i)\n"
            "    while n > 0:\n        n -= (1 +")
    d = StaticDetector().detect_one(code)
    assert d.status == "truncated" and "for loop" in d.techniques and "while loop" not in d.techniques
    assert StaticDetector(cut_truncated=False).detect_one(code).status == "not_parsable"
    assert StaticDetector().detect_one("def f(:\n").status == "not_parsable"


def test_unpacking_switch():
    from creval.measures.techniques import StaticDetector
    code = "a, b = map(int, input().split())\nprint(a + b)\n"
    assert "tuple" not in StaticDetector().detect_one(code).techniques
    assert "tuple" in StaticDetector(unpacking_is_tuple=True).detect_one(code).techniques
