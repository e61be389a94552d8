"""TLM Studio core: model -> fused subgraphs -> schedule space -> decisions -> measured kernels -> compiled model.

One subpackage a step: frontend -> partition -> space -> language -> generator -> program -> measure -> compile.

Beside the pipeline: model (the TLM itself), records (every measurement), baselines (default, heuristic, search),
dataset and train (the TLM's data and training), compare (methods side by side), viz (figures), cli (`tlm`).
This package never imports streamlit; the app and the CLI only wire its calls together.
"""

import os

__version__ = "0.1.0"

# TVM's thread pool takes x86 CPUs for hyper-threads and uses half of them: on a 2-CPU machine without SMT
# every kernel ran on one core while PyTorch and BLAS used two. Use every CPU this process may use (read when
# the pool starts, at the first kernel), unless the user chose a number.
os.environ.setdefault("TVM_NUM_THREADS", str(len(os.sched_getaffinity(0))))
