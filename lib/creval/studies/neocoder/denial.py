"""NeoCoder's Algorithm 1 (denial prompting, Lu et al. 2025) and the paper's benchmarking mode, for one live
problem under one model.

Algorithm 1 (:func:`denial_prompting`): per problem one thread; round 0 answers the original statement; each
later round detects the techniques of the previous round's code, draws one new ban with a keyed RNG over the
sorted candidates (seed, problem, round), rewrites the statement (the paper's rendering: a constraint block
under the title line, newest ban first) and sends it as a new user turn of the same thread. The benchmarking
mode (:func:`benchmark_problem`, Eq. 1) asks each stored statement in a fresh conversation instead. Every
round's code runs under both judges (:mod:`creval.measures.neocoder.judges`, in the sandbox) and its techniques are
detected before the next round is asked.
"""
from __future__ import annotations

import hashlib
import random
import time
from pathlib import Path

from creval.datasets import neocoder as neocoder_data
from creval.measures.neocoder import judges as nc
from creval.measures.neocoder_extract import fenced_code, strict_program
from creval.measures.neogauge import follows, novelty
from creval.measures.techniques import VOCABULARY, Detection
from creval.studies.neocoder.config import NeoCoderConfig
from creval.studies.neocoder.records import RoundRecord

SOLVER_PROMPT = Path(__file__).with_name("solver_prompt.txt")


def human_union(p: neocoder_data.Problem) -> set[str]:
    """Every technique the stored human solutions of ``p`` use."""
    return set().union(*[set(t) for t in p.human_techniques]) if p.human_techniques else set()


def detect_program(detector, codes: list[str]) -> list[Detection]:
    """Detection on the cleaned program (test scaffolding removed), not on the raw reply."""
    cleaned = [strict_program(c) or c for c in codes]
    return detector.detect(cleaned)


def constrained_statement(statement: str, banned_newest_first: list[str]) -> str:
    """The paper's rewriting: after the title line, a header and one bullet per banned technique (newest
    first); the rest of the statement unchanged. No bullet for a round that drew nothing (the paper's code
    writes an empty one)."""
    if not banned_newest_first:
        return statement
    title, _, rest = statement.partition("\n")
    block = "\n".join([neocoder_data.CONSTRAINT_HEADER] + [f"- {b}" for b in banned_newest_first])
    return f"{title}\n{block}\n{rest}"


def draw_ban(candidates: list[str], seed: int, problem_id: str, r: int) -> tuple[str | None, str]:
    """One candidate, uniformly, with an RNG keyed by (seed, problem, round) over the sorted candidates."""
    key = f"{seed}:{problem_id}:{r}"
    if not candidates:
        return None, key
    rng = random.Random(int(hashlib.sha256(key.encode()).hexdigest()[:16], 16))
    return rng.choice(sorted(candidates)), key


def judged_round(cfg: NeoCoderConfig, problem: neocoder_data.Problem, detector, code: str, banned):
    """Both verdicts (``cfg``'s comparator and salvage) and the techniques of one generated code."""
    v = nc.judge_codes([(problem, code)], pack="program", comparator=cfg.neocoder_comparator,
                    salvage=cfg.neocoder_salvage)[0]
    d = detect_program(detector, [code])[0]
    return v, d, follows(d.techniques, banned)


def denial_prompting(model, problem: neocoder_data.Problem, cfg: NeoCoderConfig, detector) -> list[RoundRecord]:
    """Algorithm 1 for one problem: ``cfg.neocoder_rounds`` denial rounds after the first solution."""
    system = SOLVER_PROMPT.read_text()
    thread = [{"role": "system", "content": system}]
    banned: list[str] = []            # oldest first
    humans = human_union(problem)
    rows: list[RoundRecord] = []
    prev_techniques: list[str] = []
    allowed = set(VOCABULARY) - {"misc"}
    for r in range(cfg.neocoder_rounds + 1):
        candidates, chosen, key = [], None, ""
        if r > 0:
            candidates = sorted(t for t in set(prev_techniques) - set(banned) if t in allowed)
            chosen, key = draw_ban(candidates, cfg.seed, problem.problem_id, r)
            if chosen:
                banned.append(chosen)
        statement = constrained_statement(problem.statement, list(reversed(banned)))
        thread = thread + [{"role": "user", "content": statement}]
        t0 = time.time()
        comp = model.chat(thread, temperature=cfg.neocoder_temperature, max_tokens=cfg.neocoder_max_tokens,
                          seed=cfg.seed)
        secs = time.time() - t0
        thread = thread + [{"role": "assistant", "content": comp.text}]
        ext = fenced_code(comp.text)
        v, d, f = judged_round(cfg, problem, detector, ext.code, banned)
        nov = novelty(d.techniques, humans)
        state = len(banned) if (r == 0 or chosen) else None
        rows.append(RoundRecord(
            problem.problem_id, model.name, "thread", r, state, list(banned), candidates, chosen, key, statement,
            comp.text, comp.input_tokens, comp.output_tokens, comp.finish_reason, ext.code, ext.status,
            v["repo"].to_dict(), v["strict"].to_dict(), getattr(detector, "name", "?"), list(d.techniques), d.status,
            f, sorted(set(d.techniques) - humans), nov, float(f and v["strict"].correct) * nov, round(secs, 2)))
        prev_techniques = list(d.techniques)
    return rows


def benchmark_problem(model, problem: neocoder_data.Problem, cfg: NeoCoderConfig, detector,
                      max_state: int | None = None) -> list[RoundRecord]:
    """The paper's benchmarking mode (Eq. 1): each stored statement of the problem's states (up to
    ``max_state``), answered in a fresh conversation (no earlier rounds in context); duplicate rounds are not
    asked."""
    system = SOLVER_PROMPT.read_text()
    humans = human_union(problem)
    rows = []
    for t, r in sorted(problem.states.items()):
        if max_state is not None and t > max_state:
            break
        rd = problem.rounds[r]
        thread = [{"role": "system", "content": system}, {"role": "user", "content": rd.statement}]
        t0 = time.time()
        comp = model.chat(thread, temperature=cfg.neocoder_temperature, max_tokens=cfg.neocoder_max_tokens,
                          seed=cfg.seed)
        secs = time.time() - t0
        ext = fenced_code(comp.text)
        v, d, f = judged_round(cfg, problem, detector, ext.code, rd.banned)
        nov = novelty(d.techniques, humans)
        rows.append(RoundRecord(
            problem.problem_id, model.name, "fresh", r, t, list(rd.banned), [], None, "", rd.statement, comp.text,
            comp.input_tokens, comp.output_tokens, comp.finish_reason, ext.code, ext.status, v["repo"].to_dict(),
            v["strict"].to_dict(), getattr(detector, "name", "?"), list(d.techniques), d.status, f,
            sorted(set(d.techniques) - humans), nov, float(f and v["strict"].correct) * nov, round(secs, 2)))
    return rows


def live_rounds(cfg: NeoCoderConfig, model, problem: neocoder_data.Problem, detector) -> list[RoundRecord]:
    """One live problem under one model: its rounds in order (``neocoder_live_mode``), each round's code run
    in the sandbox and its techniques detected before the next round is asked."""
    if cfg.neocoder_live_mode == "fresh":
        return benchmark_problem(model, problem, cfg, detector, max_state=cfg.neocoder_rounds)
    return denial_prompting(model, problem, cfg, detector)
