"""Which programming techniques a piece of code uses, decided from its syntax (NeoCoder's technique names).

- :data:`VOCABULARY`: the paper's 34 technique names, exact strings (``width first search`` sic).
- :func:`parse_reply`: a tolerant parser of a detector's reply (bullets, numbering, quotes, parentheses, case,
  commas, aliases such as "breadth first search" or "divide and conquer"); off-vocabulary labels are kept apart
  and an empty parse is the explicit state ``unparsed`` -- never the paper code's silent ``["for loop"]``.
- :class:`Detection`: what a detector found in one code; :class:`Detector`: the protocol
  (``detect(codes) -> list[Detection]``).
- :class:`StaticDetector`: AST analysis, pure (switches for the ambiguous definitions:
  ``comprehension_is_for_loop``, ``ternary_is_if``, ``unpacking_is_tuple``, ``dictionary_is_hashmap``).
  The detectors that ask an LLM (:class:`~creval.judges.techniques.LLMDetector`, and the hybrid of both) are
  judges: :mod:`creval.judges.techniques`.
"""
from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass
from typing import Protocol, Sequence

from creval.measures.neocoder_extract import parse

VOCABULARY: tuple[str, ...] = (
    "if statement", "for loop", "while loop", "break statement", "continue statement", "pass statement",
    "match statement", "recursion", "stack", "queue", "tuple", "set", "dictionary", "linked list", "tree",
    "graph", "two pointers", "sliding window", "matrix operation", "hashmap", "depth first search",
    "width first search", "back tracking", "divide & conquer", "Kadanes algorithm", "binary search", "heap",
    "dynamic programming", "greedy algorithm", "misc", "minimax", "topological sort", "sorting",
    "graph traversal")

# names a static detector decides from syntax alone (the hybrid detector asks the LLM about the others)
STATIC_NAMES: tuple[str, ...] = (
    "if statement", "for loop", "while loop", "break statement", "continue statement", "pass statement",
    "match statement", "recursion", "tuple", "set", "dictionary", "sorting", "heap", "queue", "binary search")

_ALIASES = {
    "if": "if statement", "if else": "if statement", "if-else": "if statement", "if/else": "if statement",
    "conditional": "if statement", "conditionals": "if statement", "conditional statement": "if statement",
    "if statements": "if statement", "for": "for loop", "for loops": "for loop", "loop": "for loop",
    "while": "while loop", "while loops": "while loop", "break": "break statement", "continue": "continue statement",
    "pass": "pass statement", "match": "match statement", "match case": "match statement",
    "recursive": "recursion", "recursive function": "recursion", "tuples": "tuple", "sets": "set",
    "dict": "dictionary", "dictionaries": "dictionary", "hash map": "hashmap", "hash table": "hashmap",
    "hashtable": "hashmap", "hashing": "hashmap", "linkedlist": "linked list", "trees": "tree", "graphs": "graph",
    "two pointer": "two pointers", "two-pointer": "two pointers", "two-pointers": "two pointers",
    "matrix": "matrix operation", "matrix operations": "matrix operation", "dfs": "depth first search",
    "depth-first search": "depth first search", "bfs": "width first search",
    "breadth first search": "width first search", "breadth-first search": "width first search",
    "width-first search": "width first search", "backtracking": "back tracking", "back-tracking": "back tracking",
    "divide and conquer": "divide & conquer", "dived & conquer": "divide & conquer",
    "kadane's algorithm": "Kadanes algorithm", "kadane algorithm": "Kadanes algorithm",
    "kadanes algorithm": "Kadanes algorithm", "kadane": "Kadanes algorithm", "binary-search": "binary search",
    "heaps": "heap", "priority queue": "heap", "heapq": "heap", "dp": "dynamic programming",
    "greedy": "greedy algorithm", "greedy algorithms": "greedy algorithm", "miscellaneous": "misc",
    "topological sorting": "topological sort", "sort": "sorting", "sorted": "sorting",
    "graph traversals": "graph traversal", "deque": "queue",
}
_CANON = {v.casefold(): v for v in VOCABULARY}


def canonical(label: str) -> str | None:
    """The vocabulary name ``label`` means, or None."""
    key = re.sub(r"\s+", " ", label.strip().strip(".:;").casefold())
    return _CANON.get(key) or _ALIASES.get(key)


@dataclass(frozen=True)
class Detection:
    techniques: tuple[str, ...]          # vocabulary names, in the order found, no duplicates
    status: str = "ok"                   # ok | none (the detector says no technique) | unparsed | not_parsable
    unknown: tuple[str, ...] = ()        # labels outside the vocabulary
    raw: str = ""
    detector: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Detection":
        return cls(tuple(d["techniques"]), d.get("status", "ok"), tuple(d.get("unknown", ())), d.get("raw", ""),
                   d.get("detector", ""))


_NONE = re.compile(r"^\s*(none|no techniques?|n/a|nothing)\b", re.I)


def parse_reply(text: str) -> Detection:
    """Technique names in a detector's reply; ``status="unparsed"`` when nothing recognisable is there."""
    found, unknown = [], []
    says_none = False
    for line in text.replace("\r", "\n").split("\n"):
        line = re.sub(r"\([^)]*\)", "", line)                  # parenthesised remarks
        line = re.sub(r"^\s*(?:[-*+\u2022>]|\d+[.)])\s*", "", line)  # bullets and numbering
        line = line.replace("`", "").replace('"', "").replace("'s ", "s ").strip()
        if not line:
            continue
        if _NONE.match(line):
            says_none = True
            continue
        if ":" in line and canonical(line.split(":", 1)[0]):    # "for loop: used to iterate ..."
            line = line.split(":", 1)[0]
        parts = [p for p in re.split(r"[,;]", line) if p.strip()]
        for part in parts:
            name = canonical(part.replace("'", ""))
            if name:
                if name not in found:
                    found.append(name)
            elif len(part.split()) <= 4:
                unknown.append(part.strip().strip(".").casefold())
    if found:
        return Detection(tuple(found), "ok", tuple(dict.fromkeys(unknown)), text)
    return Detection((), "none" if says_none else "unparsed", tuple(dict.fromkeys(unknown)), text)


class Detector(Protocol):
    name: str

    def detect(self, codes: Sequence[str]) -> list[Detection]: ...


# ---------------------------------------------------------------------------------------------------
# static

def _names(node: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id.lower())
        elif isinstance(n, ast.Attribute):
            out.add(n.attr.lower())
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(n.name.lower())
        elif isinstance(n, ast.arg):
            out.add(n.arg.lower())
    return out


def _call_name(n: ast.Call) -> str:
    f = n.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ""


def _parse_prefix(code: str, cut: bool) -> tuple[ast.AST | None, int]:
    """The syntax tree of ``code``, else (``cut``) of its longest prefix of whole lines that parses (a reply cut
    by the token limit, as GPT-4 saw it) and still holds a statement; (tree or None, lines dropped)."""
    try:
        return parse(code), 0
    except (SyntaxError, ValueError):
        if not cut:
            return None, 0
    lines = code.splitlines()
    for k in range(len(lines) - 1, 0, -1):
        try:
            tree = parse("\n".join(lines[:k]))
        except (SyntaxError, ValueError):
            continue
        # a prefix with no statement left is no program: C++ opening with "#include" parses as a comment
        return (tree, len(lines) - k) if getattr(tree, "body", None) else (None, 0)
    return None, 0


# statements that are a technique by their node type alone
STATEMENT_TECHNIQUES = {ast.While: "while loop", ast.Break: "break statement", ast.Continue: "continue statement",
                        ast.Pass: "pass statement", ast.Match: "match statement"}


@dataclass(frozen=True)
class StaticDetector:
    """Techniques decided from the syntax tree. The switches choose the ambiguous definitions."""
    comprehension_is_for_loop: bool = True      # [f(x) for x in xs] counts as a for loop
    ternary_is_if: bool = True                  # a if c else b counts as an if statement
    comprehension_if_is_if: bool = False        # [x for x in xs if c] counts as an if statement
    unpacking_is_tuple: bool = False            # a, b = ... counts as a tuple
    dictionary_is_hashmap: bool = False         # any dict also counts as a hashmap
    cut_truncated: bool = True                  # a code that does not parse: drop trailing lines until it does
    name: str = "static"

    def detect_one(self, code: str) -> Detection:
        tree, cut = _parse_prefix(code, self.cut_truncated)
        if tree is None:
            return Detection((), "not_parsable", detector=self.name)
        found: list[str] = []

        def add(t: str) -> None:
            if t not in found:
                found.append(t)

        names = _names(tree)
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        cnames = {_call_name(c) for c in calls}
        imports = set()
        for n in ast.walk(tree):
            if isinstance(n, ast.Import):
                imports |= {a.name.split(".")[0] for a in n.names}
            elif isinstance(n, ast.ImportFrom) and n.module:
                imports.add(n.module.split(".")[0])
        for n in ast.walk(tree):
            if isinstance(n, ast.If) or (self.ternary_is_if and isinstance(n, ast.IfExp)):
                add("if statement")
            elif isinstance(n, (ast.For, ast.AsyncFor)):
                add("for loop")
            elif isinstance(n, ast.comprehension):
                if self.comprehension_is_for_loop:
                    add("for loop")
                if self.comprehension_if_is_if and n.ifs:
                    add("if statement")
            elif type(n) in STATEMENT_TECHNIQUES:
                add(STATEMENT_TECHNIQUES[type(n)])
            elif isinstance(n, ast.Tuple):
                if isinstance(n.ctx, ast.Load) or self.unpacking_is_tuple:
                    add("tuple")
            elif isinstance(n, (ast.Set, ast.SetComp)):
                add("set")
            elif isinstance(n, (ast.Dict, ast.DictComp)):
                add("dictionary")
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == n.name
                       for c in ast.walk(n)):
                    add("recursion")
        if "tuple" in cnames:
            add("tuple")
        if {"set", "frozenset"} & cnames:
            add("set")
        if {"dict", "defaultdict", "Counter", "OrderedDict"} & cnames:
            add("dictionary")
        if self.dictionary_is_hashmap and "dictionary" in found:
            add("hashmap")
        if {"sorted", "sort"} & cnames:
            add("sorting")
        if "heapq" in imports or {"heappush", "heappop", "heapify"} & cnames:
            add("heap")
        if "deque" in cnames or "queue" in imports or "popleft" in cnames:
            add("queue")
        if "bisect" in imports or {"bisect_left", "bisect_right"} & cnames:
            add("binary search")
        elif "mid" in names and ({"lo", "hi"} <= names or {"low", "high"} <= names or {"left", "right"} <= names):
            add("binary search")
        if "stack" in names:
            add("stack")
        if any(isinstance(n, ast.Subscript) and isinstance(n.value, ast.Subscript) for n in ast.walk(tree)):
            add("matrix operation")
        if {"dp", "memo"} & names or {"lru_cache", "cache"} & names:
            add("dynamic programming")
        if "window" in names:
            add("sliding window")
        if "dfs" in names:
            add("depth first search")
        if "bfs" in names:
            add("width first search")
        if {"graph", "adj"} & names:
            add("graph")
        status = ("truncated" if cut else "ok") if found else "none"     # truncated: detected on a parsable prefix
        return Detection(tuple(found), status, detector=self.name)

    def detect(self, codes: Sequence[str]) -> list[Detection]:
        return [self.detect_one(c) for c in codes]
