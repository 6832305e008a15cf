"""Entailment training resumes after an interrupt and ends where an uninterrupted training ends."""
import json

import pytest

from creval.core.errors import CrevalError
from creval.measures.nli import train

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _sick():
    from creval.datasets import sick
    try:
        sick.source()
    except CrevalError as e:
        pytest.skip(f"SICK not available here: {e.problem}")


def test_an_interrupted_training_resumes_from_its_checkpoint(tmp_path, monkeypatch, capsys):
    kw = dict(limit=48, batch_size=8, epochs=2, progress=True)            # 12 steps
    monkeypatch.setattr(train, "CHECKPOINT_EVERY", 3)
    whole = train.train_minilm_sick(out_dir=tmp_path / "whole", **kw)
    assert whole["resumed_at_step"] == 0
    assert "training the entailment model minilm-sick" in capsys.readouterr().err

    saves = []
    real = train._save_checkpoint

    def interrupt_after_second(path, state):
        real(path, state)
        saves.append(state["step"])
        if len(saves) == 2:
            raise KeyboardInterrupt
    monkeypatch.setattr(train, "_save_checkpoint", interrupt_after_second)
    out = tmp_path / "cut"
    with pytest.raises(KeyboardInterrupt):
        train.train_minilm_sick(out_dir=out, **kw)
    assert not train.is_trained(out) and train.checkpoint_path(out).exists()
    monkeypatch.setattr(train, "_save_checkpoint", real)
    again = train.train_minilm_sick(out_dir=out, **kw)
    assert again["resumed_at_step"] == 6 and "resuming at step 6 of 12" in capsys.readouterr().err
    assert again["final_batch_loss"] == pytest.approx(whole["final_batch_loss"], rel=1e-4)
    assert again["trial_accuracy"] == pytest.approx(whole["trial_accuracy"], abs=1e-3)
    assert not train.checkpoint_path(out).exists() and json.loads((out / "metadata.json").read_text())["threads"] <= 4
