"""Dataset sizes, read cheaply from the loaders (the bundled samples where the real data is not staged)."""
from __future__ import annotations

import math
from functools import lru_cache

from creval.core.errors import CrevalError
from creval.datasets import aut, macgyver, neocoder, ttcw
from creval.domains import get_domain


@lru_cache(maxsize=None)
def problems(domain: str, limit: int, seed: int) -> tuple:
    """The first ``limit`` problems of a domain as the study draws them (fewer when the data holds fewer)."""
    return tuple(get_domain(domain).load_with_source(limit=limit, seed=seed)[0])


@lru_cache(maxsize=None)
def criteria(domain: str) -> tuple:
    return tuple(get_domain(domain).criteria)


@lru_cache(maxsize=None)
def macgyver_pairs(n: int, seed: int) -> tuple:
    return tuple(macgyver.sample_pairs(n, seed=seed))


def typical_pair() -> tuple[str, str]:
    """A real MacGyver problem and solution (what the judges read)."""
    p = macgyver_pairs(2, 42)[0]
    return p["problem"], p["solution"]


@lru_cache(maxsize=None)
def aut_human_sizes(aut_items: int, aut_objects: int, cambridge_items: int, seed: int) -> tuple:
    """``((dataset, object, responses), ...)`` of the human-rated AUT responses the judges see, and a typical
    response; empty when no data is here."""
    out, text = [], "use it as a small lever"
    for name, load in (("ocsai1", lambda: aut.load_ocsai(n=aut_items, objects=aut_objects, seed=seed)),
                       ("cambridge", lambda: aut.load_cambridge(n=cambridge_items, seed=seed))):
        try:
            df = load()
        except CrevalError:
            continue
        out += [(name, o, int(c)) for o, c in df["prompt"].value_counts().sort_index().items()]
        text = df["response"].iloc[0] if len(df) else text
    return tuple(out), text


@lru_cache(maxsize=None)
def neocoder_problems() -> tuple:
    return neocoder.load()[0]



@lru_cache(maxsize=None)
def crowd_sizes(n: int, seed: int) -> tuple[int, ...]:
    """Crowd solutions of each MacGyver problem of the human reference (as many, up to divergent_n_samples, are sampled
    from each model)."""
    sets = macgyver.human_solution_sets(min_solutions=3, problems=n, seed=seed)
    return tuple(len(s) for s in sets["solutions"])


RETHINK_ALL = {"ps": (573, 230), "solver": 310, "aut": 1201}   # sizes of the real data (a key of 0: all)
LAMP_INSTRUCTIONS, LAMP_WORDS = 200, 192     # LAMP: instructions (3 versions each), mean words of a version
CONFED_AUTHORS, CONFED_STORIES = 13, 5       # A Confederacy of Models: authors, stories of each


def rethink_human_counts(cfg) -> dict[str, int]:
    """LAMP instructions and Confederacy stories the rethinking study's model-backed measures see (a key of 0:
    all of them)."""
    n = min(cfg.rethink_lamp_model_instructions or LAMP_INSTRUCTIONS, LAMP_INSTRUCTIONS)
    k = min(cfg.rethink_confed_ppl_per_author or CONFED_STORIES, CONFED_STORIES)
    return {"lamp": n, "confed": CONFED_AUTHORS * k}


@lru_cache(maxsize=None)
def ttcw_sources(n: int) -> list[int]:
    """Stories of each source (Claude, GPT-3.5, GPT-4) among the first ``n`` TTCW stories."""
    return list(ttcw.load_stories().iloc[:n]["source"].value_counts().sort_index())


def rethink_counts(cfg) -> dict[str, list[int]]:
    """Texts of each kind of each set (the real data's sizes; a key of 0 means all of them)."""
    ps = [min(cfg.rethink_ps_per_class or n, n) for n in RETHINK_ALL["ps"]]
    solver = cfg.rethink_human_llm_problems or RETHINK_ALL["solver"]
    aut_n = cfg.rethink_aut_ratings or RETHINK_ALL["aut"]
    return {"ps": ps, "solver": [solver, solver], "ttcw": ttcw_sources(cfg.rethink_ttcw_stories),
            "aut": [math.ceil(aut_n / 2), aut_n // 2], "msrp": [2 * cfg.rethink_paraphrase_pairs] * 2}


