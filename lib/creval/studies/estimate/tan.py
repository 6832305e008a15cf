"""Estimates of the Tan et al. studies: the apparatus, divergent and convergent creativity, their validation."""
from __future__ import annotations

from creval.domains import get_domain
from creval.domains.steps import step_messages
from creval.judges.base import crit_def, crit_name, render
from creval.judges.novelty import DEFINITIONS, judge_messages
from creval.judges.single import SingleJudge
from creval.measures.nli.backends import llm_messages
from creval.studies.convergent.run import LABELLED
from creval.studies.estimate.parts import (
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
    reply_words,
    toks,
    words,
)
from creval.studies.estimate.sizes import aut_human_sizes, criteria, crowd_sizes, macgyver_pairs, problems, typical_pair


# -- merge sort (the novelty judge) ----------------------------------------------------------------------
def merge_comparisons(n: int) -> tuple[Range, Range]:
    """Comparisons of the novelty merge sort of ``n`` items (a merge of a and b items needs min(a, b) to
    a + b - 1) and its depth (the levels run one after another; a level takes its longest merge)."""
    if n < 2:
        return ZERO, ZERO
    a, b = n // 2, n - n // 2
    (ca, da), (cb, db) = merge_comparisons(a), merge_comparisons(b)
    here = Range(min(a, b), a + b - 1)
    depth = Range(max(da.lo, db.lo), max(da.hi, db.hi)) + here
    return ca + cb + here, depth


def novelty_phase(name: str, model: str, group_sizes, prompt_each: float) -> Phase:
    """Novelty rankings of groups of the given sizes, one unit each: each comparison asks both orders (two
    scored choices), and the comparisons of one level of a group's sort go out together."""
    n, depth = ZERO, ZERO
    for g in group_sizes:
        c, d = merge_comparisons(g)
        n, depth = n + c * 2, Range(max(depth.lo, d.lo), max(depth.hi, d.hi))
    return Phase(name, len([g for g in group_sizes if g > 1]), depth,
                 (choices("judge", model, f"novelty comparisons ({name})", n, prompt_each),),
                 breadth=max(group_sizes, default=1))


# -- the studies -----------------------------------------------------------------------------------------
def apparatus(cfg) -> Estimate:
    dom = get_domain("macgyver")
    p = problems("macgyver", 1, cfg.data_seed)[0]
    part = calls("model", cfg.model, "first-step samples", cfg.apparatus_samples,
                 msg_toks(step_messages(dom, p, [], max_steps=5)), cfg.apparatus_max_tokens)
    return Estimate("apparatus", [Phase("samples", 1, Range(1, 1), (part,), breadth=cfg.apparatus_samples)])


def _step_prompts(domain: str, cfg, few: int = 3) -> list[float]:
    """Prompt tokens of step k = 0..max_steps-1 (k typical steps chosen so far), over a few real problems."""
    dom, ps = get_domain(domain), problems(domain, max(cfg.limit, few), cfg.data_seed)[:few]
    step = reply_words(cfg.max_step_tokens)
    return [mean(msg_toks(step_messages(dom, p, [step] * k, cfg.max_steps)) for p in ps) for k in range(cfg.max_steps)]


def _first_prompt(domain: str, cfg, few: int = 3) -> float:
    dom, ps = get_domain(domain), problems(domain, max(cfg.limit, few), cfg.data_seed)[:few]
    return mean(msg_toks([{"role": "system", "content": dom.system_prompt},
                          {"role": "user", "content": dom.render(dom.first_prompt, p, max_steps=cfg.max_steps)}])
                for p in ps)


def solve_parts(cfg, model: str, domain: str, units: int, firsts, n: int, what: str,
                cached_samples: int = 0) -> list[Part]:
    """Step-wise generation of ``units`` problems (paper section 5): one budget answer per new problem
    (``firsts``, a number or a Range), then 1..max_steps steps of ``n`` samples; ``cached_samples`` of each
    step's samples may come from the cache (a rerun at a larger n)."""
    steps = _step_prompts(domain, cfg)
    first_max = cfg.max_steps * cfg.max_step_tokens + 32
    per_step = Range(n - cached_samples, n)
    sample_n = Range(units, units * cfg.max_steps) * per_step
    prompt = Range(units * steps[0], units * sum(steps)) * per_step
    return [calls("model", model, f"{what}: budget answers", firsts, _first_prompt(domain, cfg), first_max),
            Part("model", model, f"{what}: step samples", sample_n, prompt,
                 sample_n * Range(TYPICAL * cfg.max_step_tokens, cfg.max_step_tokens))]


def divergent(cfg) -> Estimate:
    """Tan et al. 2026 section 5: every problem of every domain solved step by step by every model under
    test, the temperature sweep (Fig. 5b), and the LLM entailment judge on held-out pairs."""
    phases, notes, parts, units = [], [], [], 0
    for m in cfg.tested:
        for d in cfg.domains:
            k = len(problems(d, cfg.limit, cfg.data_seed))
            units += k
            parts += solve_parts(cfg, m, d, k, k, cfg.n_samples, f"{d}")
    sweep_k = len(problems(cfg.sweep_domain, cfg.sweep_limit, cfg.data_seed))
    main_k = len(problems(cfg.sweep_domain, cfg.limit, cfg.data_seed)) if cfg.sweep_domain in cfg.domains else 0
    firsts = max(0, sweep_k - main_k)       # the budget answer is at temperature 0: asked once a problem ...
    for t in cfg.temperatures:
        new = max(0, sweep_k - main_k) if float(t) == float(cfg.temperature) else sweep_k   # else solved once
        if new:                             # ... unless two units ask it at the same moment
            units += new
            parts += solve_parts(cfg, cfg.model, cfg.sweep_domain, new, Range(firsts, new), cfg.n_samples,
                                 f"sweep T={t:g}")
            firsts = 0
    if cfg.nli.startswith("llm:"):
        per_step = Range(2 * (cfg.n_samples - 1), cfg.n_samples * (cfg.n_samples - 1))
        steps = Range(units, units * cfg.max_steps)
        parts.append(choices("judge", cfg.nli[4:], "entailment of sample pairs", steps * per_step, 120))
        notes.append("LLM entailment: 2(n-1) to n(n-1) directed pairs a step")
    else:
        notes.append(f"entailment ({cfg.nli}) runs locally: no model call")
    phases.append(Phase("solve", units, Range(2, 1 + cfg.max_steps), tuple(parts), breadth=cfg.n_samples))
    phases.append(_nli_eval(cfg))
    return Estimate("divergent", phases, notes)


def _nli_eval(cfg) -> Phase:
    """Both entailment backends on ``nli_eval_pairs`` SICK and MSRP pairs: the LLM one asks each pair in both
    directions (the three-way labels reuse the forward calls)."""
    prompt = msg_toks(llm_messages("A man is playing a guitar on a stage.", "A person plays music."))
    llms = [b[4:] for b in (cfg.nli, f"llm:{cfg.model}") if b.startswith("llm:")]
    parts = tuple(choices("model", m, "entailment evaluation", 2 * 2 * cfg.nli_eval_pairs, prompt)
                  for m in dict.fromkeys(llms))
    return Phase("entailment evaluation", 2 * len(parts), Range(1, 1), parts, breadth=2 * cfg.nli_eval_pairs)


# the judges of chapter 03 (server path: every verdict and certainty is written and parsed)
def judge_chain(cfg, name: str, problem: str, solution: str, crits: list, fb: int) -> tuple[Range, Range, Range, Range]:
    """One judge on one pair: ``(calls, prompt tokens, completion tokens, depth)`` over ``crits``."""
    info = render("info", problem=problem.strip(), solution=solution.strip())
    r, R, wl = cfg.judge_retries, cfg.judge_max_rounds, cfg.judge_word_limit
    disc = int(wl * 1.6) + 16
    reply = Range(TYPICAL, 1.0)
    n, pt, ct, depth = ZERO, ZERO, ZERO, ZERO
    for c in crits:
        cn, cd = crit_name(c), crit_def(c)
        if name in ("zero-shot", "few-shot", "cot"):
            mt = int(40 * 1.6) + 24 if name == "cot" else 24
            p = msg_toks(SingleJudge(None, name).messages(problem, solution, c))
            k = Range(1, 1 + r + fb)
            n, pt, ct = n + k, pt + k * p, ct + Range(1, 1 + r) * (reply * mt) + Range(0, fb)
            depth = depth + Range(0, r + fb)
        elif name == "chateval":
            base = msg_toks([{"role": "system", "content": render(
                "chateval_turn", role="analyst", criterion=cn, definition=cd, focus="the problem", words=wl,
                info=info, history="")}, {"role": "user", "content": "Your turn."}])
            turns = 3 * R
            hist = reply * disc
            disc_prompt = Range(turns * base, turns * base) + hist * (turns * (turns - 1) / 2)
            verdict_prompt = (Range(base, base) + hist * turns) * 3
            k = Range(turns + 3, turns + 3 * (1 + r + fb))
            n = n + k
            pt = pt + disc_prompt + verdict_prompt * Range(1, 1 + r + fb)
            ct = ct + hist * turns + Range(3, 3 * (1 + r)) * (reply * 64) + Range(0, 3 * fb)
            depth = depth + Range(turns + 3, turns + 3 * (1 + r + fb))
        elif name == "retrieval":
            frag = words(60)
            notes = lambda k: "\n".join(f"- [PA] {frag}" for _ in range(k))  # noqa: E731
            kw = dict(role="analyst", criterion=cn, definition=cd, focus="the problem", info=info)
            ca = toks(render("retrieval_init_CA", criterion=cn, definition=cd, info=info, words=wl))
            dsc = toks(render("retrieval_discuss", notes=notes(cfg.judge_k), questions="- none", words=wl, **kw))
            cnf = toks(render("retrieval_confidence", notes=notes(cfg.judge_j), **kw))
            ver = toks(render("retrieval_verdict", notes=notes(cfg.judge_l), **kw))
            rounds = Range(1, R)
            k_conf = rounds * Range(3, 3 * (1 + r))
            k_ver = Range(1, 1 + r + fb)
            n = n + Range(1, 1) + rounds * 3 + k_conf + k_ver
            pt = pt + Range(ca, ca) + rounds * (3 * dsc) + k_conf * cnf + k_ver * ver
            ct = (ct + reply * disc * (Range(1, 1) + rounds * 3) + k_conf * (reply * 48)
                  + Range(1, 1 + r) * (reply * 48) + Range(0, fb))
            depth = depth + Range(1, 1) + rounds * Range(2, 2 + r) + k_ver
        else:
            raise ValueError(f"no estimate for judge {name!r}")
    if name == "retrieval":                        # PA and SA initial insights, shared by the pair's criteria
        crit_list = "; ".join(f"{crit_name(c)} ({crit_def(c)})" for c in crits)
        init = 2 * toks(render("retrieval_init_PA", criteria_list=crit_list, info=info, words=wl))
        n, pt, ct, depth = n + Range(2, 2), pt + Range(init, init), ct + reply * disc * 2, depth + Range(1, 1)
    elif name in ("zero-shot", "few-shot", "cot"):
        depth = depth + Range(1, 1)                 # first attempts of every criterion in one batch
    return n, pt, ct, depth


def judge_phase(cfg, phase: str, judge: str, pairs: int, crits: list, problem: str, solution: str,
                what: str, min_share: float = 1.0) -> Phase:
    fb = 1 if cfg.judge_verdict_via == "text+logprobs" else 0
    n, pt, ct, depth = judge_chain(cfg, judge, problem, solution, crits, fb)
    lo = Range(min_share, 1.0)
    part = Part("judge", cfg.judge_model, what, n * pairs * lo, pt * pairs * lo, ct * pairs * lo)
    return Phase(phase, pairs, depth, (part,), breadth=3 if judge in ("retrieval", "chateval") else len(crits))


def convergent(cfg) -> Estimate:
    """Tan et al. 2026 section 4 and Tables 2-5: ``bench_judge`` on every solution of chapter 02, each judge on
    the human-labelled pairs, the retrieval judge at each confidence threshold (Fig. 12)."""
    problem, solution = typical_pair()
    phases = []
    for m in cfg.tested:
        for d in cfg.domains:
            k = len(problems(d, cfg.limit, cfg.data_seed))
            phases.append(judge_phase(cfg, f"bench {m}/{d}", cfg.bench_judge, k, list(criteria(d)), problem, solution,
                                      f"{cfg.bench_judge} on chapter 02's solutions"))
    labelled = [c for c in criteria("macgyver") if crit_name(c).lower() in LABELLED]
    pairs = len(macgyver_pairs(cfg.human_pairs, cfg.data_seed))
    for j in cfg.judges:
        phases.append(judge_phase(cfg, f"human pairs: {j}", j, pairs, labelled, problem, solution,
                                  f"{j} on human-labelled pairs"))
    # every threshold repeats the same first round, so it is served by the cache: at most the rounds and
    # verdicts the other thresholds reach (at least nothing new when the retrieval judge already ran)
    for i, t in enumerate(cfg.confidence_thresholds):
        first = i == 0 and "retrieval" not in cfg.judges
        phases.append(judge_phase(cfg, f"sweep T={t:g}", "retrieval", pairs, labelled, problem, solution,
                                  "retrieval at a confidence threshold", min_share=1.0 if first else 0.0))
    return Estimate("convergent", phases, ["the sweep's thresholds reuse each other's cached turns: lower bound 0 "
                                           "for all but the first (upper bound: a full judge run each)",
                                           "bench solutions read as long as a human MacGyver solution"])


def validation(cfg) -> Estimate:
    """Tan et al. 2026 section 6 and appendix H: novelty rankings (pairwise judge, merge sort), crowd vs model
    solutions, and the rerun at ``n_large`` samples (H.2)."""
    problem, solution = typical_pair()
    cmp_prompt = msg_toks(judge_messages((problem, solution), (problem, solution), DEFINITIONS["macgyver"]))
    groups = [len(problems(d, cfg.limit, cfg.data_seed)) for m in cfg.tested for d in cfg.domains]
    sizes, text = aut_human_sizes(cfg.aut_items, cfg.aut_objects, cfg.cambridge_items, cfg.data_seed)
    aut_prompt = msg_toks(judge_messages(("Uses for a brick", text), ("Uses for a brick", text), DEFINITIONS["aut"]))
    phases = [novelty_phase("chapter 02's solutions", cfg.judge_model, groups, cmp_prompt),
              novelty_phase("human-rated AUT responses", cfg.judge_model, [c for d, _, c in sizes if d == "ocsai1"],
                            aut_prompt),
              novelty_phase("labelled MacGyver solutions", cfg.judge_model, [2 * cfg.macgyver_items], cmp_prompt)]
    crowd = [min(c, cfg.n_samples) for c in crowd_sizes(cfg.human_ref_problems, cfg.seed)]
    ask = toks(f"{problem}\nGive a short step-by-step solution.") + 4
    ref = tuple(calls("model", m, "whole solutions beside the crowd's", sum(crowd), ask, cfg.human_ref_max_tokens)
                for m in cfg.tested)
    phases.append(Phase("human reference", len(crowd) * len(cfg.tested), Range(1, 1), ref,
                        breadth=max(crowd, default=1)))
    d = cfg.domains[0]
    k = len(problems(d, min(cfg.h2_limit, cfg.limit), cfg.data_seed))
    h2 = solve_parts(cfg, cfg.model, d, k, 0, cfg.n_large, "H.2 rerun", cached_samples=min(cfg.n_samples, cfg.n_large))
    phases.append(Phase("H.2 rerun", k, Range(1, cfg.max_steps), tuple(h2), breadth=cfg.n_large))
    return Estimate("validation", phases, ["H.2: the budget answer and the first n_samples samples of a step "
                                           "may come from chapter 02's cache (lower bound)"])


