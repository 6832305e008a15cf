"""What the Rethinking-the-metrics study (chapter 06) costs before any call: perplexity of every text set, the
rubric judge (App. G) and the pairwise novelty judge on LAMP's edits."""
from __future__ import annotations

import math

from creval.judges.base import render, template
from creval.judges.novelty import judge_messages
from creval.judges.rubric import ASPECTS
from creval.models import registry
from creval.studies.estimate.parts import (
    TYPICAL,
    ZERO,
    Estimate,
    Part,
    Phase,
    Range,
    calls,
    choices,
    local,
    msg_toks,
    toks,
    words,
)
from creval.studies.estimate.sizes import (
    LAMP_WORDS,
    RETHINK_ALL,
    rethink_counts,
    rethink_human_counts,
    typical_pair,
)
from creval.studies.rethinking.calls import LAMP_DEFINITION
from creval.studies.rethinking.run import PPL_CHUNK, WITH_CONTEXT


def rubric_parts(model: str, what: str, n: int, domain: str, text: str, problem: str, analysis_tokens: int,
                 reasks: int = 2) -> list[Part]:
    """The rubric judge (App. G) on ``n`` texts, server path: one analysis each, then every aspect scored in
    its own turn (24 tokens), each re-ask adding the reply and a reminder to that turn's thread."""
    base = msg_toks([{"role": "system", "content": template("rubric_system")},
                     {"role": "user", "content": render(f"rubric_{domain}_analyse", text=text, problem=problem)}])
    asks = [toks(render("rubric_score", aspect=a, anchors=anch, values=", ".join(map(str, vals)))) + 4
            for a, vals, anch in ASPECTS[domain]]
    analysis = Range(TYPICAL * analysis_tokens, analysis_tokens)
    k, grow = n * len(asks), 24 + 20
    prompt = (analysis + base) * k + Range(n * sum(asks), n * sum(asks) * (1 + reasks)) \
        + Range(0, k * grow * reasks * (reasks + 1) / 2) + Range(0, (analysis.hi + base) * k * reasks)
    return [calls("judge", model, f"{what}: analyses", n, base, analysis_tokens),
            Part("judge", model, f"{what}: scores", Range(k, k * (1 + reasks)), prompt,
                 Range(k * TYPICAL * 24, k * (1 + reasks) * 24))]


def estimate(cfg) -> Estimate:
    """Lu et al. 2025 (Rethinking creativity evaluation): perplexity of every text set under every model under
    test, the rubric judge (App. G) on picked texts, its prompt twist and sampled reruns, and the novelty judge
    on LAMP's edits against the raw paragraph, both orders (:func:`rethink_human_counts` says how many)."""
    problem, solution = typical_pair()
    counts = rethink_counts(cfg)
    human = rethink_human_counts(cfg)
    cut = min(LAMP_WORDS, cfg.rethink_ppl_max_words)
    human_toks = {"lamp": int(cut * 1.3), "confed": int(cfg.rethink_ppl_max_words * 1.3)}
    text_toks = {"ps": toks(solution), "solver": toks(solution), "ttcw": int(cfg.rethink_ppl_max_words * 1.3),
                 "aut": 8, "msrp": 25}
    ctx = {"ps": toks(problem), "aut": 6}
    parts, units = [], 0
    for m in cfg.tested:
        if registry.refusal_of(m, "loglikelihood"):       # skipped by the run too (a chat-only model)
            continue
        for s, kinds in counts.items():
            scored = sum(min(k, cfg.rethink_ppl_items * (2 if s == "msrp" else 1)) for k in kinds)
            units += math.ceil(scored / PPL_CHUNK)
            parts.append(calls("model", m, f"perplexity ({s})", scored, text_toks[s] + 1, 0, completion=ZERO))
            if s in WITH_CONTEXT:
                parts.append(calls("model", m, f"perplexity given the problem ({s})", scored,
                                   text_toks[s] + ctx[s] + 1, 0, completion=ZERO))
        for s, scored in (("lamp", 3 * human["lamp"]), ("confed", human["confed"])):
            units += math.ceil(scored / PPL_CHUNK)
            parts.append(calls("model", m, f"perplexity ({s})", scored, human_toks[s] + 1, 0, completion=ZERO))
    n_texts = sum(sum(kinds) for kinds in counts.values())
    n_words = sum(sum(kinds) * text_toks[s] / 1.3 for s, kinds in counts.items())
    phases = [Phase("creativity index, templates", len(counts) + 4, Range(0, 0), (),
                    local=(local("creativity-index", "texts matched against their references", n_texts),
                           local("tagging", "words POS-tagged for templates", n_words))),
              Phase("perplexity", units, Range(1, 1), tuple(parts), breadth=2 * PPL_CHUNK)]
    jm, rt, reask = cfg.judge_model, cfg.rethink_judge_tokens, 2
    story = words(cfg.rethink_ppl_max_words)
    judged = {"ps": (2 * min(cfg.rethink_judge_items, min(counts["ps"])), "ps", solution),
              "solver": (2 * min(cfg.rethink_judge_items, counts["solver"][0]), "ps", solution),
              "ttcw": (min(cfg.rethink_ttcw_judge_stories, sum(counts["ttcw"])), "cw", story)}
    jparts, units = [], 0
    for s, (n, dom, text) in judged.items():
        if n:
            units += 1
            jparts += rubric_parts(jm, f"rubric ({s})", n, dom, text, problem, rt)
    twist = 2 * min(cfg.rethink_twist_items, sum(counts["ps"]))
    jparts.append(choices("judge", jm, "prompt twist", twist, msg_toks([{"role": "user", "content": render(
        "rubric_twist", problem=problem, text=solution, polarity="unconventional")}])))
    k = min(cfg.rethink_rerun_items, sum(counts["ps"]))
    jparts += rubric_parts(jm, "rubric reruns", k * cfg.rethink_reruns, "ps", solution, problem, rt)
    asked = msg_toks(judge_messages(("Write a paragraph.", words(cut)), ("Write a paragraph.", words(cut)),
                                    LAMP_DEFINITION))
    jparts.append(choices("judge", jm, "novelty judge (LAMP edits vs raw, both orders)", 4 * human["lamp"], asked))
    units += math.ceil(human["lamp"] / PPL_CHUNK)
    phases.append(Phase("rubric judge", units + 2, Range(2, 2 + reask), tuple(jparts),
                        breadth=max(n for n, _, _ in judged.values()) * 4 or 1))
    return Estimate("rethinking", phases, [f"text sets at the real data's sizes when a key says all: {RETHINK_ALL}"])
