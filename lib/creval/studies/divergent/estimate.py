"""What the divergent study (chapter 02) costs before any call: step-wise generation (Tan et al. 2026 section 5),
the temperature sweep and the entailment evaluation."""
from __future__ import annotations

from creval.domains import get_domain
from creval.domains.steps import step_messages
from creval.measures.nli.llm import llm_messages
from creval.studies.estimate.parts import (
    TYPICAL,
    Estimate,
    Part,
    Phase,
    Range,
    calls,
    choices,
    local,
    mean,
    msg_toks,
    reply_words,
)
from creval.studies.estimate.sizes import problems


def _step_prompts(domain: str, cfg, few: int = 3) -> list[float]:
    """Prompt tokens of step k = 0..max_steps-1 (k typical steps chosen so far), over a few real problems."""
    dom, ps = get_domain(domain), problems(domain, max(cfg.divergent_limit, few), cfg.data_seed)[:few]
    step = reply_words(cfg.divergent_max_step_tokens)
    return [mean(msg_toks(step_messages(dom, p, [step] * k,
                                        cfg.divergent_max_steps)) for p in ps) for k in range(cfg.divergent_max_steps)]


def _first_prompt(domain: str, cfg, few: int = 3) -> float:
    dom, ps = get_domain(domain), problems(domain, max(cfg.divergent_limit, few), cfg.data_seed)[:few]
    return mean(msg_toks([{"role": "system", "content": dom.system_prompt},
                          {"role": "user", "content": dom.render(dom.first_prompt, p,
                                                                 max_steps=cfg.divergent_max_steps)}])
                for p in ps)


def solve_parts(cfg, model: str, domain: str, units: int, firsts, n: int, what: str,
                cached_samples: int = 0) -> list[Part]:
    """Step-wise generation of ``units`` problems (paper section 5): one budget answer per new problem
    (``firsts``, a number or a Range), then 1..max_steps steps of ``n`` samples; ``cached_samples`` of each
    step's samples may come from the cache (a rerun at a larger n)."""
    steps = _step_prompts(domain, cfg)
    first_max = cfg.divergent_max_steps * cfg.divergent_max_step_tokens + 32
    per_step = Range(n - cached_samples, n)
    sample_n = Range(units, units * cfg.divergent_max_steps) * per_step
    prompt = Range(units * steps[0], units * sum(steps)) * per_step
    return [calls("model", model, f"{what}: budget answers", firsts, _first_prompt(domain, cfg), first_max),
            Part("model", model, f"{what}: step samples", sample_n, prompt,
                 sample_n * Range(TYPICAL * cfg.divergent_max_step_tokens, cfg.divergent_max_step_tokens))]


def estimate(cfg) -> Estimate:
    """Tan et al. 2026 section 5: every problem of every domain solved step by step by every model under
    test, the temperature sweep (Fig. 5b), and the LLM entailment judge on held-out pairs."""
    phases, notes, parts, units = [], [], [], 0
    for m in cfg.tested:
        for d in cfg.divergent_domains:
            k = len(problems(d, cfg.divergent_limit, cfg.data_seed))
            units += k
            parts += solve_parts(cfg, m, d, k, k, cfg.divergent_n_samples, f"{d}")
    sweep_k = len(problems(cfg.divergent_sweep_domain, cfg.divergent_sweep_limit, cfg.data_seed))
    main_k = len(problems(cfg.divergent_sweep_domain, cfg.divergent_limit,
                          cfg.data_seed)) if cfg.divergent_sweep_domain in cfg.divergent_domains else 0
    firsts = max(0, sweep_k - main_k)       # the budget answer is at temperature 0: asked once a problem ...
    for t in cfg.divergent_temperatures:
        new = max(0, sweep_k - main_k) if float(t) == float(cfg.divergent_temperature) else sweep_k   # else solved once
        if new:                             # ... unless two units ask it at the same moment
            units += new
            parts += solve_parts(cfg, cfg.model, cfg.divergent_sweep_domain, new, Range(firsts, new),
                                 cfg.divergent_n_samples,
                                 f"sweep T={t:g}")
            firsts = 0
    per_step = Range(2 * (cfg.divergent_n_samples - 1), cfg.divergent_n_samples * (cfg.divergent_n_samples - 1))
    steps = Range(units, units * cfg.divergent_max_steps)
    work: tuple = ()
    if cfg.nli_judge():
        parts.append(choices("judge", cfg.nli_judge(), "entailment of sample pairs", steps * per_step, 120))
        notes.append("LLM entailment: 2(n-1) to n(n-1) directed pairs a step")
    elif cfg.nli_runs() == "minilm-cosine":           # asked for, or what minilm-sick falls back to here
        work = (local("embedding", "samples embedded for cosine entailment", steps * cfg.divergent_n_samples),)
        notes.append("cosine entailment runs locally: no model call, its time counted"
                     + (f" ({cfg.divergent_nli} is not available here and falls back to it)"
                        if cfg.divergent_nli != "minilm-cosine" else ""))
    else:
        work = (local("entailment", "entailment of sample pairs", steps * per_step),)
        notes.append(f"entailment ({cfg.divergent_nli}) runs locally: no model call, its time counted")
    phases.append(Phase("solve", units, Range(2, 1 + cfg.divergent_max_steps), tuple(parts),
                        breadth=cfg.divergent_n_samples,
                        local=work))
    phases.append(_nli_eval(cfg))
    return Estimate("divergent", phases, notes)


def _nli_eval(cfg) -> Phase:
    """Both entailment backends on ``nli_eval_pairs`` SICK and MSRP pairs: the LLM one asks each pair in both
    directions (the three-way labels reuse the forward calls)."""
    prompt = msg_toks(llm_messages("A man is playing a guitar on a stage.", "A person plays music."))
    llms = [*filter(None, [cfg.nli_judge()]), cfg.model]
    parts = tuple(choices("model", m, "entailment evaluation", 2 * 2 * cfg.divergent_nli_eval_pairs, prompt)
                  for m in dict.fromkeys(llms))
    pairs = 2 * 2 * cfg.divergent_nli_eval_pairs              # both datasets, both directions
    work = () if cfg.nli_judge() else (local("entailment", "entailment evaluation", pairs),)
    return Phase("entailment evaluation", 2 * len(parts), Range(1, 1), parts, breadth=2 * cfg.divergent_nli_eval_pairs,
                 local=work)
