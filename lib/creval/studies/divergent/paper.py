"""The divergent figures Tan et al. 2026 report, read by the chapter 02 report."""

# Divergent column (semantic entropy, nats, n = 10 samples per step) of the paper's Tables 3-5.
PAPER_SE = {
    "macgyver": {"Vicuna 7B": 2.19, "Vicuna 13B": 1.96, "Vicuna 33B": 2.17, "Llama 3 70B Instruct": 2.10,
                 "Llama 3.1 8B Instruct": 2.13, "Llama 3.1 70B Nemotron Instruct": 2.19,
                 "Llama 3.1 405B Instruct": 2.08, "Llama 3.3 70B Instruct": 2.10, "Deepseek R1 70B Distilled": 2.10,
                 "GPT 3.5 Turbo": 2.02, "GPT 4o mini": 2.05, "GPT 4o": 2.08, "Qwen3 32B (Thinking)": 2.02,
                 "Qwen3 32B (Non-think)": 2.08},
    "hypogen": {"GPT 4o": 2.07, "Llama 3.1 8B Instruct": 2.04, "Qwen3 32B (Thinking)": 1.72,
                "Qwen3 32B (Non-think)": 1.66},
    "bookmia": {"GPT 4o": 2.17, "Llama 3.1 8B Instruct": 1.89, "Qwen3 32B (Thinking)": 2.19,
                "Qwen3 32B (Non-think)": 2.19},
}
# BookMIA without the consecutive-duplicate filter (paper Table 18).
PAPER_SE_BOOKMIA_UNFILTERED = {"GPT 4o": 2.01, "Llama 3.1 8B Instruct": 1.81, "Qwen3 32B (Thinking)": 2.18,
                               "Qwen3 32B (Non-think)": 2.11}
