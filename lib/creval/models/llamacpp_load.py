"""Loading for the llama.cpp backend: how many threads, the weights with their chat template, and the decoding
context (one unified KV cache shared by :data:`MAX_SEQ` sequences)."""
from __future__ import annotations

import ctypes
import logging
import os
import time

from creval.core.errors import CrevalError
from creval.models import heavy
from creval.models.spec import ModelSpec

MAX_SEQ = 32          # sequences decoded together (n > MAX_SEQ is drawn in chunks)
N_SEQ = 2 * MAX_SEQ   # sequence ids of the context: a gathered round's MAX_SEQ beside the previous round's
N_BATCH = 512         # tokens per llama_decode (and per micro-batch)
GATHER_CELLS = 16384
"""KV-cache cells of a context that gathers (at least the spec's ``context``): the prompts and replies of the units
in flight share one unified cache (SmolLM2: 23 KB a cell, 377 MB; Qwen 1.5B: 28 KB, 470 MB)."""


def _own_running() -> int:
    """Threads of this process running or ready to run now (e.g. the reader itself, a torch pool still spinning)."""
    n = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/stat") as f:
                n += f.read().rsplit(")", 1)[1].split()[0] == "R"
        except (OSError, IndexError):
            pass
    return n


def busy_cores(samples: int = 5, every: float = 0.01) -> float:
    """Runnable tasks of other processes, averaged over a few readings of ``/proc/loadavg`` (0 where unreadable)."""
    seen = []
    for k in range(samples):
        try:
            with open("/proc/loadavg") as f:
                runnable = int(f.read().split()[3].split("/")[0])     # "0.5 0.4 0.3 2/180 123": 2 runnable
            seen.append(runnable - max(1, _own_running()))
        except (OSError, ValueError, IndexError):
            return 0.0
        if k < samples - 1:
            time.sleep(every)
    return max(0.0, sum(seen) / len(seen))


def choose_threads(spec: ModelSpec) -> int:
    """Threads for llama.cpp: ``CREVAL_THREADS``, else the spec's ``threads``, else the cores no other process is
    running on (at least one). Threads never change outputs, only speed: llama.cpp's threads meet at a barrier
    after every operation, so one thread that waits for a core held by another process stalls them all (on 2
    cores with one busy, 2 threads scored 33 tokens/s and 1 thread 110)."""
    cores = os.cpu_count() or 1
    asked = int(os.environ.get("CREVAL_THREADS") or 0) or spec.threads
    return asked or max(1, min(cores, cores - round(busy_cores())))


def open_model(spec: ModelSpec, path, threads: int):
    """``(llm, formatter, version, quantisation)``: the ``llama_cpp.Llama`` of ``path`` (used for tokenizing and
    its metadata), the chat formatter of its GGUF template, the model's name and its quantisation."""
    llama_cpp = heavy.llama_cpp()
    try:
        llm = llama_cpp.Llama(str(path), n_ctx=256, n_threads=threads, verbose=False)
    except Exception as e:  # llama.cpp raises ValueError on an unreadable file
        raise CrevalError(f"model {spec.name}: could not load {path}: {e}", "reinstall the model package") from None
    meta = llm.metadata
    template = meta.get("tokenizer.chat_template")
    if not template:
        raise CrevalError(f"model {spec.name} has no chat template in its GGUF metadata", "use an instruct model")
    tok = lambda key: llm.detokenize([int(meta[key])], special=True).decode() if key in meta else ""
    formatter = heavy.llama_chat_format().Jinja2ChatFormatter(
        template, eos_token=tok("tokenizer.ggml.eos_token_id"), bos_token=tok("tokenizer.ggml.bos_token_id"))
    desc = ctypes.create_string_buffer(256)
    llama_cpp.llama_model_desc(llm.model, desc, len(desc))
    quantisation = desc.value.decode(errors="ignore").split(" ")[-1]   # "llama 256M Q4_1" -> "Q4_1"
    return llm, formatter, meta.get("general.name", spec.model), quantisation


def new_context(spec: ModelSpec, llm, n_ctx: int, threads: int):
    """A decoding context of ``n_ctx`` cells on one unified KV cache for :data:`N_SEQ` sequences."""
    llama_cpp = heavy.llama_cpp()
    params = llama_cpp.llama_context_default_params()
    params.n_ctx, params.n_batch, params.n_ubatch = n_ctx, N_BATCH, N_BATCH
    params.n_seq_max, params.kv_unified = N_SEQ, True
    params.n_threads = params.n_threads_batch = threads
    quiet = logging.getLogger("llama-cpp-python")     # llama.cpp warns when the cells pass the training context,
    level = quiet.level                                # at a level llama-cpp-python prints: positions never do
    quiet.setLevel(logging.CRITICAL + 1)
    try:
        ctx = llama_cpp.llama_init_from_model(llm.model, params)
    finally:
        quiet.setLevel(level)
    if not ctx:
        raise CrevalError(f"model {spec.name}: llama.cpp could not create a context of {n_ctx} tokens",
                          "lower `context` in the model spec")
    return ctx
