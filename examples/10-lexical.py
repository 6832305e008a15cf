# %% [markdown]
# # Lexical variety
#
# How many different word pairs a model uses when it answers the same problem several times.

# %% tags=["parameters"]
run_root = "runs/default"
model = "smollm2-135m"
models = []
seed = 0
data_seed = 42
lexical_problems = 2
lexical_samples = 3
lexical_max_tokens = 32

# %%
from lexical import STUDY, report
from lexical.config import LexicalConfig

from creval.book.plots import table

cfg = LexicalConfig.from_params(globals())

# %%
table(report.by_model(STUDY.records(cfg)))
