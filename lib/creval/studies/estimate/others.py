"""Estimates of the NeoCoder, Rethinking-the-metrics, AUT and report-card studies."""
from __future__ import annotations

import math

from creval.judges.aut import format_items, list_messages, pointwise_messages
from creval.judges.base import render, template
from creval.judges.rubric import ASPECTS
from creval.judges.techniques import PROMPT, REASK, LLMDetector
from creval.measures.techniques import VOCABULARY
from creval.models import registry
from creval.studies.aut.generate import COMMON, CREATIVE, FOLLOWUPS, HIGHLY
from creval.studies.estimate.parts import (
    LIST_WORDS,
    TYPICAL,
    ZERO,
    Estimate,
    Part,
    Phase,
    Range,
    calls,
    choices,
    mean,
    msg_toks,
    toks,
    words,
)
from creval.studies.estimate.sizes import RETHINK_ALL, aut_human_sizes, neocoder_problems, rethink_counts, typical_pair
from creval.studies.neocoder.run import SOLVER_PROMPT
from creval.studies.rethinking.run import PPL_CHUNK, WITH_CONTEXT


def neocoder(cfg) -> Estimate:
    """Lu et al. 2025 (NeoCoder): the live denial-prompting run (Algorithm 1: a chain of rounds per problem,
    the thread growing), and the LLM technique detector on every stored and generated code when asked."""
    ps = neocoder_problems()
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
        stored = [toks(rd.code) for p in ps[:cfg.neocoder_problems or None] for rd in p.rounds]
        detect = (detection(cfg, len(stored), mean(stored), "technique detection (stored codes)"),
                  detection(cfg, n * len(cfg.tested), TYPICAL * mt, "technique detection (live codes)"))
        notes.append("LLM technique detector: 1 to 3 calls a code (2 re-asks)")
    else:
        notes.append("static technique detector: no model call for the stored rounds")
    per_round = Range(2, 4) if detect else Range(1, 1)
    phases.append(Phase("live denial prompting", len(ok) * len(cfg.tested), per_round * (R + 1), live + detect[1:]))
    if detect:
        phases.insert(0, Phase("replayed codes", max(1, math.ceil(len(ps[:cfg.neocoder_problems or None]) / 20)),
                               Range(1, 3), detect[:1], breadth=20 * 6))
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


def rethinking(cfg) -> Estimate:
    """Lu et al. 2025 (Rethinking creativity evaluation): perplexity of every text set under every model under
    test, the rubric judge (App. G) on picked texts, its prompt twist and sampled reruns."""
    problem, solution = typical_pair()
    counts = rethink_counts(cfg)
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
    phases = [Phase("perplexity", units, Range(1, 1), tuple(parts), breadth=2 * PPL_CHUNK)]
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
    phases.append(Phase("rubric judge", units + 2, Range(2, 2 + reask), tuple(jparts),
                        breadth=max(n for n, _, _ in judged.values()) * 4 or 1))
    return Estimate("rethinking", phases, [f"text sets at the real data's sizes when a key says all: {RETHINK_ALL}"])


def list_part(role: str, model: str, what: str, jobs, obj: str, text: str, retries: int) -> Part:
    """AUT lists judged (Rabeyah et al. §3.2): ``jobs`` are ``(method, length, how many)``; a list's reply
    budget is 12 tokens + 7 (score) or 5 (rank) a use, and each re-ask adds the reply and the missing uses
    to the thread."""
    n, prompt, out = ZERO, ZERO, ZERO
    for method, length, count in jobs:
        base = msg_toks(list_messages(method, obj, [text] * length))
        budget = 12 + length * (7 if method == "score" else 5)
        reask = toks(render(f"aut_reask_{method}", n=length, items=format_items([text] * length))) + 8
        n = n + Range(count, count * (1 + retries))
        prompt = prompt + Range(count * base, count * sum(base + a * (budget + reask) for a in range(retries + 1)))
        out = out + Range(count * TYPICAL * budget, count * (1 + retries) * budget)
    return Part(role, model, what, n, prompt, out)


def aut(cfg) -> Estimate:
    """Rabeyah et al. 2024: uses at three levels from every generator (the highly creative level a chain of
    forceful turns), every judge on every list in both settings and methods (rankings in both orders), and the
    judges on human-rated responses."""
    n, F, r, mt = cfg.aut_per_level, cfg.aut_forceful_turns, cfg.aut_retries, cfg.aut_gen_max_tokens
    obj = cfg.aut_things[0] if cfg.aut_things else "fork"
    reply = Range(TYPICAL * mt, mt)
    single = toks(COMMON.format(n=n, object=obj)) + 4, toks(CREATIVE.format(n=n, object=obj)) + 4
    high, follow = toks(HIGHLY.format(n=n, object=obj)) + 4, mean(toks(f.format(n=n)) + 4 for f in FOLLOWUPS)
    chain_prompt = sum((Range(high + t * follow, high + t * follow) + reply * t for t in range(F + 1)), ZERO)
    gen, n_obj = [], len(cfg.aut_things)
    for g in cfg.generators:
        k = n_obj * Range(3 + F, (3 + F) * (1 + r))
        p = n_obj * (Range(sum(single), sum(single)) + chain_prompt) * Range(1, 1 + r)
        gen.append(Part("model", g, "uses (common, creative, forceful chain)", k, p, k * reply))
    phases = [Phase("generate", n_obj * len(cfg.generators) * 3, Range(F + 1, (F + 1) * (1 + r)), tuple(gen))]
    G = len(cfg.generators)
    items = G * 3 * n                                         # uses of one object (full lists)
    lists = []                                                # (setting, list length)
    if "comprehensive" in cfg.aut_settings:
        lists.append(items)
    if "segmented" in cfg.aut_settings:
        lists += [G * 3] * n
    orders = {"score": 1, "rank": 2}
    use = words(LIST_WORDS)
    judge_parts, units = [], 0
    for j in cfg.judges:
        role = "judge" if j == cfg.judge_model and j not in cfg.generators else "model"
        jobs = [(m, L, orders[m] * n_obj) for m in cfg.aut_methods for L in lists]
        judge_parts.append(list_part(role, j, "list judgments", jobs, obj, use, r))
        units += sum(c for _, _, c in jobs)
        if "score" in cfg.aut_methods and cfg.aut_verdict_via == "text+logprobs":
            judge_parts.append(choices(role, j, "pointwise fallback", Range(0, n_obj * sum(lists)),
                                       msg_toks(pointwise_messages(obj, use))))
    phases.append(Phase("judge uses", units, Range(1, 1 + r + 1), tuple(judge_parts)))
    sizes, text = aut_human_sizes(cfg.aut_items, cfg.aut_objects, cfg.cambridge_items, cfg.data_seed)
    size = max(2, cfg.aut_human_list)
    chunks = [min(size, c - g) for _, _, c in sizes for g in range(0, c, size) if c - g >= 2]
    human, units = [], 0
    for j in cfg.judges:
        role = "judge" if j == cfg.judge_model and j not in cfg.generators else "model"
        pw = sum(c for _, _, c in sizes)
        human.append(choices(role, j, "pointwise scores of human responses", pw,
                             msg_toks(pointwise_messages("brick", text))))
        jobs = [(m, c, k) for c in chunks for m, k in (("score", 1), ("rank", 2))]
        human.append(list_part(role, j, "lists of human responses", jobs, "brick", text, r))
        if cfg.aut_verdict_via == "text+logprobs":
            human.append(choices(role, j, "pointwise fallback (human lists)", Range(0, sum(chunks)),
                                 msg_toks(pointwise_messages("brick", text))))
        units += pw + 3 * len(chunks)
    phases.append(Phase("judge human responses", units, Range(1, 1 + r + 1), tuple(human)))
    return Estimate("aut", phases, ["full lists of uses (a short list makes fewer items to judge)",
                                    f"{sum(c for _, _, c in sizes)} human-rated responses in "
                                    f"{len(chunks)} lists of at most {size}"])


def reportcard(cfg) -> Estimate:
    return Estimate("reportcard", [], ["reads the other studies' records: no call of its own"])


def compare(cfg) -> Estimate:
    return Estimate("compare", [], ["reads the other studies' records; its embeddings and entailment pairs run on "
                                    "the local models: no model call of its own"])
