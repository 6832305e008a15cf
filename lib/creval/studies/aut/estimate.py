"""What the AUT agreement study (chapter 07) costs before any call: uses at three levels, every judge on every
list, and the judges on human-rated responses (Rabeyah et al. 2024)."""
from __future__ import annotations

from creval.judges.aut import format_items, list_messages, pointwise_messages
from creval.judges.base import render
from creval.studies.aut.generate import COMMON, CREATIVE, FOLLOWUPS, HIGHLY
from creval.studies.estimate.parts import (
    LIST_WORDS,
    TYPICAL,
    ZERO,
    Estimate,
    Part,
    Phase,
    Range,
    choices,
    local,
    mean,
    msg_toks,
    toks,
    words,
)
from creval.studies.estimate.sizes import aut_human_sizes


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


def estimate(cfg) -> Estimate:
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
    G = len(cfg.generators)
    embedded = local("embedding", "uses embedded for semantic distance", n_obj * G * 3 * n)
    phases = [Phase("generate", n_obj * G * 3, Range(F + 1, (F + 1) * (1 + r)), tuple(gen), local=(embedded,))]
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
    sizes, text = aut_human_sizes(cfg.aut_items, cfg.aut_objects, cfg.aut_cambridge_items, cfg.data_seed)
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
    baseline = local("embedding", "human responses embedded (semantic-distance baseline)", sum(c for _, _, c in sizes))
    phases.append(Phase("judge human responses", units, Range(1, 1 + r + 1), tuple(human), local=(baseline,)))
    return Estimate("aut", phases, ["full lists of uses (a short list makes fewer items to judge)",
                                    f"{sum(c for _, _, c in sizes)} human-rated responses in "
                                    f"{len(chunks)} lists of at most {size}"])
