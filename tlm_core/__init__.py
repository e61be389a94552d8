"""TLM Studio core: model -> fused subgraphs -> schedule space -> decisions -> measured kernels.

This package never imports streamlit; the app and the CLI only wire its calls together.
"""

__version__ = "0.1.0"
