"""The unit runner and the shared endpoint budget: order, failures, resume, per-unit usage, spending limit,
against real threads and the stand-in OpenAI-compatible server."""
import asyncio
import json
import threading
import time

import pytest

from creval.cli import main
from creval.core.cache import CallCache, cached_batch
from creval.core.errors import CrevalError
from creval.core.ledger import LEDGER
from creval.core.units import BudgetReached, Unit, UnitsFailed, run_units, spending_limit
from creval.models.endpoint import AdaptiveLimit
from creval.models.registry import load_model
from creval.models.standin import StandIn


def _units(n):
    return [Unit(f"u{i:03d}", i) for i in range(n)]


def test_rows_come_back_in_unit_order_whatever_finishes_first(tmp_path):
    def work(u):
        time.sleep(0.002 * (20 - u.item))            # the last units finish first
        return {"t": [{"i": u.item, "sq": u.item ** 2}], "other": [{"i": u.item}] if u.item % 2 else []}
    wide = run_units(tmp_path / "a", "demo", _units(20), work, width=16, progress=False)
    narrow = run_units(tmp_path / "b", "demo", _units(20), work, width=1, progress=False)
    assert wide == narrow
    assert [r["i"] for r in wide["t"]] == list(range(20)) and [r["i"] for r in wide["other"]] == list(range(1, 20, 2))
    finished = [json.loads(x)["unit"] for x in (tmp_path / "a" / "units" / "demo.jsonl").read_text().splitlines()]
    assert sorted(finished) == [u.key for u in _units(20)] and finished != sorted(finished)   # finished out of order


def test_a_failed_unit_fails_alone_and_only_it_runs_again(tmp_path):
    calls = []

    def work(u, broken=True):
        calls.append(u.key)
        if broken and u.item == 3:
            raise RuntimeError("the server said no")
        return {"t": [{"i": u.item}]}
    with pytest.raises(UnitsFailed, match="1 of 8 units of demo failed .*u003.*the server said no"):
        run_units(tmp_path, "demo", _units(8), work, width=4, progress=False)
    assert sorted(calls) == [u.key for u in _units(8)]                  # every other unit still ran
    failed = [json.loads(x) for x in (tmp_path / "units" / "demo.failed.jsonl").read_text().splitlines()]
    assert [f["unit"] for f in failed] == ["u003"] and "the server said no" in failed[0]["error"]
    calls.clear()
    out = run_units(tmp_path, "demo", _units(8), lambda u: work(u, broken=False), width=4, progress=False)
    assert calls == ["u003"] and [r["i"] for r in out["t"]] == list(range(8))
    assert not (tmp_path / "units" / "demo.failed.jsonl").exists()      # done now: no longer listed as failed
    with pytest.raises(ValueError, match="twice"):
        run_units(tmp_path, "dup", [Unit("a"), Unit("a")], work, progress=False)


def test_each_unit_counts_only_its_own_calls(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")

    class Usage:
        def __call__(self, r):
            return (r, 2 * r)

        def cost(self, tin, tout):
            return tout / 100

    def work(u):
        def compute(items):
            time.sleep(0.01)
            return [len(x) for x in items]
        with LEDGER.tagged(unit=u.key):
            cached_batch("t", {}, ["x" * (u.item + k + 1) for k in range(u.item + 1)], lambda s: {"s": s}, compute,
                         cache=cache, usage=Usage())
        return {"t": [{"i": u.item}]}
    run_units(tmp_path, "usage", _units(6), work, width=6, progress=False)
    rows = {json.loads(x)["unit"]: json.loads(x)["usage"]
            for x in (tmp_path / "units" / "usage.jsonl").read_text().splitlines()}
    for i in range(6):                  # unit i asks i+1 texts of lengths i+1 .. 2i+1 (some cached by others)
        u = rows[f"u{i:03d}"]
        assert u["calls_made"] + u["cache_hits"] == i + 1
        assert u["input_tokens"] == sum(range(i + 1, 2 * i + 2))


def test_the_spending_limit_stops_before_passing_and_a_rerun_goes_on(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")

    class Usage:
        def __call__(self, r):
            return (0, 100)

        def cost(self, tin, tout):
            return 0.25                 # a quarter dollar a call

    def work(u):
        cached_batch("t", {}, [u.key], lambda s: {"s": s}, lambda items: items, cache=cache, usage=Usage())
        return {"t": [{"k": u.key}]}
    with spending_limit(1.0), pytest.raises(BudgetReached, match=r"limit of \$1.00"):
        run_units(tmp_path, "cost", _units(10), work, width=1, progress=False)
    done = (tmp_path / "units" / "cost.jsonl").read_text().splitlines()
    assert len(done) == 4                                              # 4 x $0.25 = $1.00, the fifth would pass it
    out = run_units(tmp_path, "cost", _units(10), work, width=1, progress=False)
    assert len(out["t"]) == 10


@pytest.mark.parametrize("usd", [-1.0, -0.01, float("nan"), float("-inf")])
def test_a_negative_or_nan_budget_is_one_error_naming_the_flag(usd):
    with pytest.raises(CrevalError, match=r"--max-cost .* is not a budget") as err:
        spending_limit(usd)
    assert "leave the flag out for no limit" in str(err.value)      # the fix, in the same message


@pytest.mark.parametrize("usd", [None, 0.0, 2.5])
def test_no_budget_zero_and_a_positive_budget_are_taken(usd):
    with spending_limit(usd) as lim:
        assert lim.usd == usd


@pytest.mark.parametrize("argv", [["run", "aut", "--max-cost", "-1"], ["book", "--max-cost", "nan"]])
def test_the_command_line_refuses_a_bad_budget_before_any_work(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("creval: error:") == 1 and "is not a budget" in err and "Traceback" not in err
    assert "$-1.00" not in err


def test_adaptive_limit_halves_on_busy_and_grows_back():
    async def go():
        lim = AdaptiveLimit(8)
        for _ in range(3):
            await lim.acquire()
        await lim.release("busy")
        assert lim.limit == 4
        await lim.release("busy")
        await lim.release("busy")
        assert lim.limit == 1 and lim.in_flight == 0
        for _ in range(1 + 2 + 3):       # 1 success at limit 1 -> 2, 2 at 2 -> 3, 3 at 3 -> 4
            await lim.acquire()
            await lim.release("ok")
        return lim.limit
    assert asyncio.run(go()) == 4


def _spec(tmp_path, server, name, concurrency, **extra):
    p = tmp_path / f"{name}-{server.port}.yaml"
    p.write_text(server.spec_yaml(name, concurrency, **extra))
    return str(p)


def test_server_units_share_one_budget_and_stay_in_flight(tmp_path, fresh_cache):
    with StandIn(latency=0.2, capacity=64) as s:
        wide = load_model(_spec(tmp_path, s, "wide", 64))
        out = run_units(tmp_path / "w", "chat", _units(64),
                        lambda u: {"t": [{"r": wide.chat([{"role": "user", "content": f"q{u.item}"}]).text}]},
                        width=64, progress=False)
        st = s.stats                    # the requests overlapped; how many at once is the loaded machine's business
        assert st["requests"] == 64 and st["peak_in_flight"] > 1, st
        s.reset()
        # two runners at once on a spec allowing 8: never more than 8 in flight in all (one budget per endpoint)
        narrow = load_model(_spec(tmp_path, s, "narrow", 8))
        res = {}

        def runner(tag):
            res[tag] = run_units(tmp_path / tag, "chat", _units(24),
                                 lambda u: {"t": [{"r": narrow.chat([{"role": "user",
                                                                      "content": f"{tag}{u.item}"}]).text}]},
                                 width=24, progress=False)
        threads = [threading.Thread(target=runner, args=(t,)) for t in ("a", "b")]
        [t.start() for t in threads]
        [t.join() for t in threads]
        assert s.stats["requests"] == 48 and 1 < s.stats["peak_in_flight"] <= 8, s.stats
    assert [r["r"] for r in out["t"]] == [wide.chat([{"role": "user", "content": f"q{i}"}]).text for i in range(64)]


def test_a_request_failing_for_good_keeps_every_other_result(tmp_path, fresh_cache):
    def work(m):
        return lambda u: {"t": [{"r": [c.text for c in m.chat_many(
            [[{"role": "user", "content": f"q{u.item}-{k}" + (" BOOM" if u.item == 5 and k == 2 else "")}]
             for k in range(4)])]}]}
    with StandIn(latency=0.05, capacity=64, fail="BOOM") as s:
        m = load_model(_spec(tmp_path, s, "flaky", 64, max_retries=1, retry_backoff=0.01))
        with LEDGER.collect() as first, pytest.raises(UnitsFailed, match="1 of 16 units"):
            run_units(tmp_path, "w", _units(16), work(m), width=16, progress=False)
        assert len(first.made) == 63                        # every request but the one that fails for good
        assert s.stats["failed"] == 2                       # asked twice (one retry), then given up
    with StandIn(latency=0.05, capacity=64) as healthy:     # the server is mended: only unit 5's one call is made
        m2 = load_model(_spec(tmp_path, healthy, "flaky", 64, max_retries=1, retry_backoff=0.01))
        with LEDGER.collect() as second:
            out = run_units(tmp_path, "w", _units(16), work(m2), width=16, progress=False)
        assert len(second.made) == 1 and healthy.stats["requests"] == 1 and len(out["t"]) == 16


def test_replicas_share_the_load(tmp_path, fresh_cache):
    with StandIn(latency=0.1, capacity=64) as a, StandIn(latency=0.1, capacity=64) as b:
        p = tmp_path / "two.yaml"
        p.write_text(f"name: two\nbackend: openai\nmodel: standin\nbase_url: [{a.url}, {b.url}]\nconcurrency: 16\n")
        m = load_model(str(p))
        m.chat_many([[{"role": "user", "content": f"x{i}"}] for i in range(32)])
        assert a.stats["requests"] + b.stats["requests"] == 32
        # both replicas served (an even split needs the requests to overlap, which a loaded machine may not give)
        assert min(a.stats["requests"], b.stats["requests"]) >= 1 and max(a.stats["peak_in_flight"],
                                                                            b.stats["peak_in_flight"]) <= 8


def test_a_call_another_unit_is_computing_is_awaited_not_made_twice(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    computed = []

    def compute(items):
        computed.extend(items)
        time.sleep(0.05)
        return [f"answer to {x}" for x in items]

    def work(u):                      # every unit asks the same two calls and one of its own, at the same moment
        return {"t": [{"r": cached_batch("same", {}, ["shared-a", "shared-b", f"own-{u.item}"], lambda s: {"s": s},
                                         compute, cache=cache)}]}
    with LEDGER.collect() as tally:
        out = run_units(tmp_path, "dedup", _units(8), work, width=8, progress=False)
    assert sorted(computed) == sorted(["shared-a", "shared-b"] + [f"own-{i}" for i in range(8)])
    assert len(tally.made) == 10 and len(tally.records) == 24           # the rest were served
    assert [r["r"] for r in out["t"]] == [["answer to shared-a", "answer to shared-b", f"answer to own-{i}"]
                                          for i in range(8)]


def test_a_failed_call_leaves_its_waiters_to_ask_again(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    attempts = []

    def compute(items):
        attempts.append(list(items))
        time.sleep(0.05)
        if len(attempts) == 1:
            raise RuntimeError("first try fails")
        return [x.upper() for x in items]
    results, errors = [], []

    def ask():
        try:
            results.append(cached_batch("flaky", {}, ["x"], lambda s: {"s": s}, compute, cache=cache))
        except RuntimeError as e:
            errors.append(str(e))
    threads = [threading.Thread(target=ask) for _ in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert errors == ["first try fails"] and results == [["X"]] and len(attempts) == 2


def test_a_thread_inside_a_local_computation_waits_on_nobody(tmp_path):
    """A holds the local-compute lock (e.g. an LLM entailment batch asking its model) and needs a call that B
    has claimed but cannot compute without that lock: A computes it itself instead of deadlocking."""
    from creval.core.cache import LOCAL_COMPUTE
    cache = CallCache(tmp_path / "c.sqlite")
    b_claimed, got = threading.Event(), {}

    def slow_describe(s):
        b_claimed.set() if s == "x-b" else None
        return {"s": s[0]}                       # "x-a" and "x-b" are the same call

    def b():
        got["b"] = cached_batch("k", {}, ["x-b"], slow_describe, lambda items: ["from b"], cache=cache)
    with LOCAL_COMPUTE:
        t = threading.Thread(target=b)
        t.start()
        b_claimed.wait(5)
        time.sleep(0.1)                          # B has claimed the call and waits for the lock
        got["a"] = cached_batch("k", {}, ["x-a"], slow_describe, lambda items: ["from a"], cache=cache)
    t.join(5)
    assert not t.is_alive() and got["a"] == ["from a"] and got["b"] in (["from a"], ["from b"])


def test_a_failure_record_goes_once_its_unit_is_done_and_others_stay(tmp_path):
    folder = tmp_path / "units"
    folder.mkdir()
    (folder / "demo.failed.jsonl").write_text("".join(json.dumps({"unit": k, "error": "E: old", "at": 1.0}) + "\n"
                                                      for k in ("u001", "u005")))
    (folder / "demo.jsonl").write_text(json.dumps({"unit": "u005", "tables": {"t": [{"i": 5}]}, "usage": {},
                                                   "seconds": 0.1}) + "\n")
    with pytest.raises(UnitsFailed, match="1 of 6 units"):
        run_units(tmp_path, "demo", _units(6), lambda u: {"t": [{"i": u.item}]} if u.item != 2 else 1 / 0,
                  width=2, progress=False)
    left = [json.loads(x)["unit"] for x in (folder / "demo.failed.jsonl").read_text().splitlines()]
    assert left == ["u002"]          # u001 ran and u005 was done already: their old records are gone
