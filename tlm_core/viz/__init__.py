"""Figures over tlm_core's objects (Plotly); the app shows them, the library builds them."""
