"""The smallest study settings that still give every measure: the smoke profile plus these overrides, for the
integration tests that run every study through a second engine (a served model, a batch of two models)."""
SMALL = ["nli=minilm-cosine", "judges=[zero-shot]", "bench_judge=zero-shot", "temperatures=[1.0]", "n_samples=3",
         "nli_eval_pairs=2", "human_pairs=1", "neocoder_problems=2"]
# and the text sets, released outputs and pairwise items at a couple of items each
FEW = ["rethink_ps_per_class=2", "rethink_human_llm_problems=2", "rethink_ttcw_stories=2", "rethink_aut_ratings=4",
       "rethink_paraphrase_pairs=2", "rethink_ppl_items=1", "released_items=3", "pairwise_items=1", "aut_items=3",
       "cambridge_items=4", "confidence_thresholds=[0.5]"]
