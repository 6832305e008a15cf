"""The smallest study settings that still give every measure: the smoke profile plus these overrides, for the
integration tests that run every study through a second engine (a served model, a batch of two models)."""
SMALL = ["divergent_nli=minilm-cosine", "convergent_judges=[zero-shot]", "convergent_bench_judge=zero-shot",
         "divergent_temperatures=[1.0]", "divergent_n_samples=3",
         "divergent_nli_eval_pairs=2", "convergent_human_pairs=1", "neocoder_problems=2"]
# and the text sets, released outputs and pairwise items at a couple of items each
FEW = ["rethink_ps_per_class=2", "rethink_human_llm_problems=2", "rethink_ttcw_stories=2", "rethink_aut_ratings=4",
       "rethink_paraphrase_pairs=2", "rethink_ppl_items=1", "compare_released_items=3", "compare_pairwise_items=1",
       "aut_items=3",
       "aut_cambridge_items=4", "convergent_confidence_thresholds=[0.5]"]
