"""What the NeoCoder study (chapter 05) costs before any call: live denial prompting and the LLM technique
detector."""
from __future__ import annotations

import math

from creval.judges.techniques import PROMPT, REASK, LLMDetector
from creval.measures.techniques import VOCABULARY
from creval.studies.estimate.parts import (
    TYPICAL,
    ZERO,
    Estimate,
    Part,
    Phase,
    Range,
    local,
    mean,
    msg_toks,
    toks,
)
from creval.studies.estimate.sizes import neocoder_problems
from creval.studies.neocoder.run import SOLVER_PROMPT


def estimate(cfg) -> Estimate:
    """Lu et al. 2025 (NeoCoder): the live denial-prompting run (Algorithm 1: a chain of rounds per problem,
    the thread growing), and the LLM technique detector on every stored and generated code when asked."""
    ps = neocoder_problems()
    replayed = ps[:cfg.neocoder_problems or None]          # the stored problems whose codes are run again
    ok = sorted((p for p in ps if p.flags.verifiable and not p.flags.single_test and p.human_solutions),
                key=lambda p: (len(p.statement), p.native))[:cfg.neocoder_live_problems]
    system, mt, R = toks(SOLVER_PROMPT.read_text()) + 4, cfg.neocoder_max_tokens, cfg.neocoder_rounds
    reply = Range(TYPICAL * mt, mt)
    phases, notes = [], []
    if cfg.neocoder_live_mode == "thread":      # round r sees every earlier statement and reply
        prompt = sum((Range(system + (r + 1) * (toks(p.statement) + 4), system + (r + 1) * (toks(p.statement) + 4))
                      + reply * r for r in range(R + 1) for p in ok), ZERO)
        n = len(ok) * (R + 1)
    else:                                       # fresh: each stored state up to R in its own conversation
        n = sum(len([t for t in p.states if t <= R]) for p in ok)
        prompt = Range.of(sum(system + toks(p.statement) + 4 for p in ok for t in p.states if t <= R))
    live = tuple(Part("model", m, "denial rounds", Range(n, n), prompt, reply * n) for m in cfg.tested)
    detect: tuple = ()
    if cfg.neocoder_detector != "static":
        stored = [toks(rd.code) for p in replayed for rd in p.rounds]
        detect = (detection(cfg, len(stored), mean(stored), "technique detection (stored codes)"),
                  detection(cfg, n * len(cfg.tested), TYPICAL * mt, "technique detection (live codes)"))
        notes.append("LLM technique detector: 1 to 3 calls a code (2 re-asks)")
    else:
        notes.append("static technique detector: no model call for the stored rounds")
    per_round = Range(2, 4) if detect else Range(1, 1)
    runs = (local("sandbox", "live codes under both judges", 2 * n * len(cfg.tested)),)
    phases.append(Phase("live denial prompting", len(ok) * len(cfg.tested), per_round * (R + 1), live + detect[1:],
                        local=runs))
    stored = sum(len(p.rounds) for p in replayed)
    phases.insert(0, Phase("replayed codes", max(1, math.ceil(len(replayed) / 20)),
                           Range(1, 3) if detect else Range(0, 0), detect[:1], breadth=20 * 6,
                           local=(local("sandbox", "stored codes under both judges", 2 * stored),)))
    notes.append(f"{len(ok)} live problems (verifiable, multi-test, with human solutions)")
    return Estimate("neocoder", phases, notes)


def detection(cfg, codes: int, code_tokens: float, what: str) -> Part:
    """The LLM technique detector on ``codes`` programs of about ``code_tokens``: the system prompt with the
    vocabulary and the code; each of at most 2 re-asks adds the reply and a reminder to the thread."""
    d = LLMDetector(None)
    base = msg_toks([{"role": "system", "content": PROMPT.read_text().replace("{techniques}", "\n".join(
        f"- {t}" for t in VOCABULARY))}, {"role": "user", "content": ""}]) + code_tokens
    grow = d.max_tokens + toks(REASK.read_text()) + 8
    prompt = Range(codes * base, codes * sum(base + a * grow for a in range(d.retries + 1)))
    return Part("judge", cfg.judge_model, what, Range(codes, codes * (1 + d.retries)), prompt,
                Range(codes * TYPICAL * d.max_tokens, codes * (1 + d.retries) * d.max_tokens))
