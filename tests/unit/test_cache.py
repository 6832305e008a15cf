import threading

from creval.core.cache import CallCache, cached_batch, make_key
from creval.core.ledger import LEDGER


def test_key_is_canonical_and_distinguishes_content():
    assert make_key("x", a=1, b={"c": [1, 2]}) == make_key("x", b={"c": [1, 2]}, a=1)
    assert make_key("x", a=1) != make_key("x", a=2)
    assert make_key("x", a=1) != make_key("y", a=1)


def test_cached_batch_computes_only_misses_once(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    seen = []

    def compute(items):
        seen.append(list(items))
        return [i * 10 for i in items]

    with LEDGER.collect() as tally:
        assert cached_batch("t", {"m": 1}, [1, 2, 2, 3], lambda i: {"i": i}, compute, cache=cache) == [10, 20, 20, 30]
        assert seen == [[1, 2, 3]]                       # the duplicate 2 computed once, all misses in one batch
        assert cached_batch("t", {"m": 1}, [3, 4], lambda i: {"i": i}, compute, cache=cache) == [30, 40]
        assert seen[-1] == [4]
    recs = tally.records
    assert [r.cached for r in recs].count(False) == 4 and [r.cached for r in recs].count(True) == 1
    # another identity is another call
    cached_batch("t", {"m": 2}, [1], lambda i: {"i": i}, compute, cache=cache)
    assert seen[-1] == [1]


def test_cache_survives_reopen_and_concurrent_writers(tmp_path):
    path = tmp_path / "c.sqlite"

    def worker(k):
        c = CallCache(path)
        for i in range(50):
            c.put(f"{k}-{i}", "t", {"v": i})

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    again = CallCache(path)
    assert len(again) == 200
    assert again.get("3-49") == {"v": 49}
    assert again.counts() == {"t": 200}
