"""Loading the bundled MiniLM embedder prints no transformers "Loading weights" bar (our own bars say what loads)."""
import subprocess
import sys


def test_embedder_load_prints_no_loading_bar(tmp_path):
    code = ("from creval.models.embeddings import Embedder; "
            "print(Embedder().encode(['a fork', 'a spoon']).shape)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env={**__import__("os").environ, "CREVAL_HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr[-800:]
    assert "(2, 384)" in r.stdout
    assert "Loading weights" not in r.stderr + r.stdout
