"""Figures over tlm_core's objects (Plotly); the app shows them, the library builds them.

Beside the pipeline: graphs, spaces, sentences, loop nests and comparisons of its steps, for the app's pages.
"""
