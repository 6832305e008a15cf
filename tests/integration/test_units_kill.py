"""SIGKILL a study-like run with 64 requests in flight, then rerun: no call that reached the cache is made again."""
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from creval.core.ledger import LEDGER
from creval.core.units import Unit, run_units
from creval.models.registry import load_model
from creval.models.standin import StandIn

pytestmark = pytest.mark.integration

CHILD = """
import sys
from creval.models.registry import load_model
from creval.core.units import Unit, run_units
m = load_model(sys.argv[1])
run_units(sys.argv[2], "chat", [Unit(f"u{i:03d}", i) for i in range(160)],
          lambda u: {"t": [{"r": m.chat([{"role": "user", "content": f"question {u.item}"}]).text}]},
          width=64, progress=False)
"""


def _keys(path):
    with sqlite3.connect(path) as c:
        return {k for (k,) in c.execute("SELECT key FROM calls")}


def test_sigkill_with_64_in_flight_then_rerun_repeats_no_finished_call(tmp_path, fresh_cache):
    with StandIn(latency=1.0, capacity=64) as s:
        spec = tmp_path / "srv.yaml"
        spec.write_text(s.spec_yaml("srv", 64))
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(spec), str(tmp_path / "run")],
                                env={**os.environ, "CREVAL_CACHE": str(fresh_cache)})
        deadline = time.time() + 600        # a hang guard only: a loaded machine starts the child slowly
        # the first 64 answered and more in flight: the runner refills as answers come, so the in-flight count
        # drifts below 64 between refills; waiting for exactly 64 could miss the whole second wave
        while not (s.stats["requests"] >= 100 and s.stats["in_flight"] >= 16):
            assert time.time() < deadline and proc.poll() is None, s.stats
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        before = _keys(fresh_cache)
        assert 16 <= len(before) < 160             # most of the first wave is cached, the second was cut off
        s.reset()
        m = load_model(str(spec))
        with LEDGER.collect() as rerun:
            out = run_units(tmp_path / "run", "chat", [Unit(f"u{i:03d}", i) for i in range(160)],
                            lambda u: {"t": [{"r": m.chat([{"role": "user", "content": f"question {u.item}"}]).text}]},
                            width=64, progress=False)
    made = {r.key for r in rerun.made}
    assert not made & before and len(made) == 160 - len(before) == s.stats["requests"]
    assert len(out["t"]) == 160
