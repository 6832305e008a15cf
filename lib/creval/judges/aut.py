"""An LLM judge of Alternative Uses Test responses: list scoring (1-5), list ranking, and pointwise scoring.

Settings of Rabeyah et al. 2024 (§3.2): a judge sees a list of uses of one object, shown as ``[id] text``
with ids 1..n in presented order, and either scores every use 1-5 or orders all of them from most to least
creative. Prompts (``prompts/aut_*.txt``, our own words) share one definition of creativity: close to the
usual use or impossible = less creative; surprising yet workable = more creative.

Parsing (:func:`parse_scores`, :func:`parse_ranking`) is lenient and never guesses a value: a use without
a readable score or place is *missing*. :func:`judge_lists` asks all lists of a batch at once through the
cached model (one ``chat_many`` per round; the study's run gives each list its own unit, a batch of one),
then re-asks **only for the missing uses** at most ``retries`` times, again batched.
What is still missing afterwards:

- scores: read from the log-probs of "1".."5" in a pointwise prompt when ``via="text+logprobs"``
  (``path="logprobs"``), else ``path="unparsed"`` with value ``None``;
- rankings: when at most ``impute_share`` of the uses are missing they are placed, tied, at the mean of the
  remaining bottom places (``path="imputed"``); otherwise the whole list is ``unparsed``.

A ranking identical to the presentation order is flagged ``identity_order`` (it still counts as parsed).
:func:`pointwise_scores` scores one use per call (Ocsai-like): the expected score over "1".."5" from the
reply's first-token log-probs (``via="logprobs"``), or the digit the model writes (``via="text"``).
"""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from typing import Sequence

from creval.core.ledger import LEDGER
from creval.judges.base import render

SCORES = ("1", "2", "3", "4", "5")
_BRACKET = re.compile(r"\[\s*(\d+)\s*\]")
_INT = re.compile(r"(?<![\d.])(\d+)(?![\d.]*\d)")
_LEAD = re.compile(r"^\s*(?:#|id|use|item)?\s*(\d+)\s*([.):\-]|\s)", re.I)


def format_items(texts: Sequence[str], ids: Sequence[int] | None = None) -> str:
    ids = list(ids) if ids is not None else list(range(1, len(texts) + 1))
    return "\n".join(f"[{i}] {t.strip()}" for i, t in zip(ids, texts))


def list_messages(method: str, obj: str, texts: Sequence[str]) -> list[dict]:
    """The chat asking for scores (``method="score"``) or a ranking (``"rank"``) of ``texts`` (ids 1..n)."""
    if method not in ("score", "rank"):
        raise ValueError(f"method must be score or rank, not {method!r}")
    body = render(f"aut_{method}", n=len(texts), object=obj, definition=render("aut_definition").strip(),
                  items=format_items(texts))
    return [{"role": "user", "content": body}]


def pointwise_messages(obj: str, response: str) -> list[dict]:
    return [{"role": "user", "content": render("aut_pointwise", object=obj, response=response.strip(),
                                              definition=render("aut_definition").strip())}]


def _ints(s: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", s)]


def parse_scores(text: str, ids: Sequence[int], lo: int = 1, hi: int = 5) -> dict[int, int]:
    """``{id: score}`` read line by line. The id is the first bracketed integer of the line, else its leading
    integer; the score is the last integer in [lo, hi] after the id. A repeated id keeps its first score;
    lines without a valid id or score are skipped (those ids are missing, never defaulted)."""
    valid, out = set(ids), {}
    for line in (text or "").splitlines():
        m = _BRACKET.search(line)
        if m is None:
            m = _LEAD.match(line)
        if m is None:
            continue
        i = int(m.group(1))
        if i not in valid or i in out:
            continue
        rest = re.sub(r"(/\s*5|out of\s*5|of\s*5)\b", " ", line[m.end():], flags=re.I)   # "4/5", "4 out of 5"
        vals = [v for v in _ints(rest) if lo <= v <= hi]
        if vals:
            out[i] = vals[-1]
    return out


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9 ]+", "", s.lower()).strip()


def parse_ranking(text: str, ids: Sequence[int], texts: Sequence[str] | None = None) -> list[int]:
    """The ids in the judge's order (most creative first), first occurrence kept, unknown ids dropped.

    Bracketed ids when the reply has any; else per line the leading integer (or the second integer when
    the first is list numbering such as ``1.``); else the use whose text the line repeats (normalised
    equality or containment, then difflib ratio >= 0.85)."""
    valid, seen, order = list(ids), set(), []

    def add(i):
        if i in valid and i not in seen:
            seen.add(i)
            order.append(i)

    text = text or ""
    if _BRACKET.search(text):
        for line in text.splitlines():
            for m in _BRACKET.finditer(line):
                add(int(m.group(1)))
        return order
    norm_texts = {_norm(t): i for i, t in zip(valid, texts or [])}
    for line in text.splitlines():
        if not line.strip():
            continue
        rest = re.sub(r"^\s*\d+\s*[.)]\s+(?=\S)", "", line)          # list numbering "1. " / "2) "
        bare = re.fullmatch(r"\W*(\d+)\W*", rest)
        if bare:                                                     # the line is just an id
            add(int(bare.group(1)))
            continue
        n = _norm(rest)
        hit = norm_texts.get(n) if n else None
        if hit is None and n and norm_texts:
            cands = [i for t, i in norm_texts.items() if t and (t in n or n in t)]
            hit = cands[0] if len(cands) == 1 else None
            if hit is None:
                best = max(norm_texts, key=lambda t: difflib.SequenceMatcher(None, t, n).ratio())
                if difflib.SequenceMatcher(None, best, n).ratio() >= 0.85:
                    hit = norm_texts[best]
        if hit is None:
            lead = re.match(r"^\W*(\d+)\b", rest)
            hit = int(lead.group(1)) if lead else None
        if hit is not None:
            add(hit)
    return order


@dataclass
class ListJob:
    """One list to judge: the uses' texts in presented order (ids 1..n) of one object."""
    method: str
    obj: str
    texts: list[str]
    tag: dict = field(default_factory=dict)


@dataclass
class ListResult:
    raw: list[float | None]      # per presented use: score 1-5, or rank (1 = most creative); None = unparsed
    paths: list[str]             # per use: text | text-retry | logprobs | imputed | unparsed
    attempts: int                # chat turns used (1 + re-asks)
    replies: list[str]
    identity_order: bool = False
    input_tokens: int = 0
    output_tokens: int = 0


def _max_tokens(method: str, n: int) -> int:
    return 12 + n * (7 if method == "score" else 5)


def list_budget(jobs: Sequence[ListJob]) -> int:
    """The reply budget (tokens) that the longest of ``jobs`` needs: an id and a score or place per use."""
    return max((_max_tokens(j.method, len(j.texts)) for j in jobs), default=12)


def expected_score(logprobs: dict[str, float]) -> float | None:
    """Probability-weighted mean of the scores 1..5 (Ocsai's weighted score); None if none has mass."""
    ok = {int(k): v for k, v in logprobs.items() if v is not None and math.isfinite(v)}
    if not ok:
        return None
    m = max(ok.values())
    w = {k: math.exp(v - m) for k, v in ok.items()}
    z = sum(w.values())
    return sum(k * x for k, x in w.items()) / z


def judge_lists(model, jobs: Sequence[ListJob], *, retries: int = 2, via: str = "text", impute_share: float = 0.25,
                seed: int = 0, max_tokens: int | None = None, progress: bool = False) -> list[ListResult]:
    """Judge every list of ``jobs`` (see module doc); all first turns go out as one batch, then each re-ask
    round as one batch. Every request's reply budget is ``max_tokens`` (default: :func:`list_budget` of
    ``jobs``), so a list's requests do not depend on which other lists share its batch. (``progress`` is
accepted, as the judge registry names it, and shows nothing.)"""
    if via not in ("text", "text+logprobs"):
        raise ValueError(f"via must be text or text+logprobs, not {via!r}")
    convos = [list_messages(j.method, j.obj, j.texts) for j in jobs]
    ids = [list(range(1, len(j.texts) + 1)) for j in jobs]
    got: list[dict | list] = [{} if j.method == "score" else [] for j in jobs]
    paths: list[dict[int, str]] = [{} for _ in jobs]
    replies: list[list[str]] = [[] for _ in jobs]
    toks = [[0, 0] for _ in jobs]
    todo = list(range(len(jobs)))
    budget = max_tokens or list_budget(jobs)
    for attempt in range(retries + 1):
        if not todo:
            break
        with LEDGER.tagged(attempt=attempt):
            comps = model.chat_many([convos[k] for k in todo], temperature=0.0, seed=seed, max_tokens=budget,
                                    tags=[jobs[k].tag for k in todo])
        nxt = []
        for k, c in zip(todo, comps):
            job, how = jobs[k], "text" if attempt == 0 else "text-retry"
            replies[k].append(c.text)
            toks[k][0] += c.input_tokens
            toks[k][1] += c.output_tokens
            if job.method == "score":
                missing = [i for i in ids[k] if i not in got[k]]
                for i, v in parse_scores(c.text, missing).items():
                    got[k][i], paths[k][i] = v, how
                missing = [i for i in ids[k] if i not in got[k]]
                ask = render("aut_reask_score", items=format_items([job.texts[i - 1] for i in missing], missing))
            else:
                order = parse_ranking(c.text, ids[k], job.texts)
                if len(order) > len(got[k]):
                    got[k], paths[k] = order, {i: how for i in order}
                missing = [i for i in ids[k] if i not in got[k]]
                ask = render("aut_reask_rank", n=len(ids[k]),
                             items=format_items([job.texts[i - 1] for i in missing], missing))
            if missing and attempt < retries:
                convos[k] = convos[k] + [{"role": "assistant", "content": c.text}, {"role": "user", "content": ask}]
                nxt.append(k)
        todo = nxt

    out = []
    fallback: list[tuple[int, int]] = []
    for k, job in enumerate(jobs):
        n = len(ids[k])
        if job.method == "score":
            raw = [got[k].get(i) for i in ids[k]]
            pth = [paths[k].get(i, "unparsed") for i in ids[k]]
            if via == "text+logprobs":
                fallback += [(k, i) for i in ids[k] if i not in got[k]]
            out.append(ListResult(raw, pth, len(replies[k]), replies[k], False, *toks[k]))
            continue
        order = got[k]
        missing = [i for i in ids[k] if i not in order]
        if len(missing) > impute_share * n or not order:
            out.append(ListResult([None] * n, ["unparsed"] * n, len(replies[k]), replies[k], False, *toks[k]))
            continue
        rank = {i: float(r) for r, i in enumerate(order, start=1)}
        tie = (len(order) + 1 + n) / 2
        raw = [rank.get(i, tie) for i in ids[k]]
        pth = [paths[k].get(i, "imputed") for i in ids[k]]
        out.append(ListResult(raw, pth, len(replies[k]), replies[k], order == ids[k] and not missing, *toks[k]))
    if fallback:
        scores = pointwise_scores(model, [(jobs[k].obj, jobs[k].texts[i - 1]) for k, i in fallback], via="logprobs")
        for (k, i), (v, p) in zip(fallback, scores):
            out[k].raw[i - 1], out[k].paths[i - 1] = v, p
    return out


def parse_digit(text: str) -> int | None:
    m = re.search(r"\b([1-5])\b", text or "")
    return int(m.group(1)) if m else None


def pointwise_scores(model, items: Sequence[tuple[str, str]], *, via: str = "logprobs", retries: int = 1,
                     seed: int = 0) -> list[tuple[float | None, str]]:
    """``(score, path)`` for each ``(object, response)``, one prompt per response (batched).

    ``logprobs``: expected score over "1".."5" from the first token's log-probs (``path="logprobs"``);
    ``text``: the first digit 1-5 of the reply, re-asked at most ``retries`` times, else ``unparsed``."""
    msgs = [pointwise_messages(o, r) for o, r in items]
    if via == "logprobs":
        res = model.choice_logprobs_many([(m, SCORES) for m in msgs])
        out = []
        for r in res:
            v = expected_score(r.logprobs)
            out.append((v, "logprobs") if v is not None else (None, "unparsed"))
        return out
    if via != "text":
        raise ValueError(f"pointwise via must be logprobs or text, not {via!r}")
    vals: list[tuple[float | None, str]] = [(None, "unparsed")] * len(msgs)
    todo = list(range(len(msgs)))
    for attempt in range(retries + 1):
        if not todo:
            break
        with LEDGER.tagged(attempt=attempt):
            comps = model.chat_many([msgs[k] for k in todo], temperature=0.0 if attempt == 0 else 0.7,
                                    seed=seed + attempt, max_tokens=8)
        nxt = []
        for k, c in zip(todo, comps):
            d = parse_digit(c.text)
            if d is None:
                nxt.append(k)
            else:
                vals[k] = (float(d), "text" if attempt == 0 else "text-retry")
        todo = nxt
    return vals
