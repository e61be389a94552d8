"""Baselines the TLM is compared with: Roller-style heuristic, TVM's untuned default, Ansor-style search.

Beside the pipeline: other ways to choose a task's decisions (instead of the generator, step 5).
"""
