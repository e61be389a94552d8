"""Baselines the TLM is compared with: Roller-style heuristic, TVM's untuned default, Ansor-style search."""
