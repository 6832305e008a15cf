"""Integration fixtures: one real vLLM server (its CPU build, `make vllm`) per test session, serving the embedded
SmolLM2-135M-Instruct (converted once to bf16). Every test that asks for it is skipped, with one line saying
why, where vLLM is not installed (not Linux x86-64, or the install failed)."""
import pytest

from creval.models import vllm_local


@pytest.fixture(scope="session")
def vllm_server(tmp_path_factory):
    """The running local vLLM server (started once, eager: no torch.compile, minutes sooner on a busy machine; or
    one already running, reused), its log in a session folder."""
    why = vllm_local.unavailable()
    if why:
        pytest.skip(f"no real vLLM server: {why}")
    server = vllm_local.serve(tmp_path_factory.mktemp("vllm"), say=lambda line: print(line, flush=True), eager=True)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def vllm_spec(vllm_server, tmp_path_factory):
    """The path of a model spec for that server (its name: smollm2-135m-vllm)."""
    path = tmp_path_factory.mktemp("vllm-spec") / f"{vllm_local.SERVED}.yaml"
    path.write_text(vllm_local.spec_yaml(vllm_server.url))
    return str(path)
