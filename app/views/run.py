"""Run page: compile the whole model with a chosen method, run it here, check it against PyTorch, time it,
and download a bundle that reproduces it. The work runs in a background thread (search takes minutes)."""

import tempfile
import time

import state
import streamlit as st
from state import DATABASE_MIB as DB_MIB

from tlm_core.compile import (
    DATABASE_MAX_BYTES,
    BackgroundJob,
    DatabaseError,
    bundle_zip,
    check_database,
    compile_and_run,
    method_label,
    save_database,
    torch_compile_run,
)
from tlm_core.errors import summary
from tlm_core.partition import partition
from tlm_core.target import caches_kib, cuda_available, host_target, kib_text
from tlm_core.viz.run import history_rows, latency_figure, run_text, task_rows

ss = st.session_state
st.title("Run")
label, model, part = state.current_model()
cpu = host_target()
caches = zip(("L1d", "L2", "L3"), caches_kib(cpu), strict=True)
st.markdown(
    f"**{label}** · {len(part.tasks)} tasks, {part.graph.number_of_nodes()} subgraph calls · "
    f"this CPU: `{cpu.attrs['mcpu']}`, {cpu.attrs['num-cores']} cores (LLVM), "
    + ", ".join(f"{name} {kib_text(kib)}" for name, kib in caches if kib)
)
st.page_link("views/model.py", label="Choose another model on the Model page", icon=":material/account_tree:")
if model.reference is None:
    st.warning(f"{label} cannot be run end to end here (no PyTorch reference): {' '.join(model.notes)}")
    st.stop()

CHOICES = {
    "default": "TVM default (no tuning)",
    "heuristic": "Heuristic (Roller-style rules, no measurement)",
    "tlm": "TLM top-1 (greedy, no measurement)",
    "tlm-k": "TLM best-of-k (beam search, k measured, the 3 fastest again)",
    "search": "Search (Ansor-style evolutionary search, MetaSchedule)",
    "database": "Your MetaSchedule database (JSONDatabase files)",
}
ABOUT = {
    "default": "Every task keeps TVM's naive loops: the baseline the others are measured against.",
    "heuristic": "Rules pick tiles, parallel loops, vectors and unrolling for each task in one pass.",
    "tlm": "The shipped TLM writes every decision of every task; nothing is measured.",
}
left, right = st.columns([2, 3])
choice = left.radio("Schedules from", list(CHOICES), format_func=CHOICES.get, key="run_method")
repeat = left.slider("Timed repeats", 3, 50, 10, key="run_repeat")
on_gpu = cuda_available() and left.radio("Device", ["CPU", "CUDA GPU"], horizontal=True, key="run_device") != "CPU"
candidates, trials, database = 1, 64, None
with right:
    if choice == "tlm-k":
        candidates = st.number_input("k (candidates per task)", 2, 32, 10, key="run_k")
        st.caption(f"{candidates} programs per task are built and timed: about {candidates * len(part.tasks)} here.")
    elif choice == "search":
        trials = st.number_input("Trial budget (whole model)", 8, 4096, 64, step=8, key="run_trials")
        st.caption("MetaSchedule's task scheduler shares it among the tasks; tasks it never reaches keep TVM's "
                   "default. Every trial is built and timed, in the background: the page stays usable.")  # fmt: skip
    elif choice == "database":
        st.caption(f"A MetaSchedule JSONDatabase (e.g. from your own tuning, or the `database/` of a bundle): "
                   f"both files, up to {DATABASE_MAX_BYTES // 1024**2} MiB each. Read as JSON data; TVM loads every "
                   "trace in a helper process first.")  # fmt: skip
        c1, c2 = st.columns(2)
        workload = c1.file_uploader("workload.json", type=["json"], key="run_workload", max_upload_size=DB_MIB)
        records = c2.file_uploader("tuning_record.json", type=["json"], key="run_records", max_upload_size=DB_MIB)
        if workload is not None and records is not None:
            key = (workload.file_id, records.file_id)
            if ss.get("run_db_key") != key:  # check and load each upload once
                ss.run_db_key, ss.run_db, ss.run_db_error, ss.run_db_problems = key, None, None, []
                try:  # every trace is replayed in a helper process first: a hostile one cannot take the server down
                    directory = save_database(workload.getvalue(), records.getvalue(), tempfile.mkdtemp())
                    with st.spinner("Checking every record of the database (in a helper process) ..."):
                        checked = check_database(directory)
                    ss.run_db, ss.run_db_problems = checked.db, checked.problems
                except DatabaseError as err:
                    ss.run_db_error = str(err)
            if ss.run_db_error:
                st.error(f"Not a usable MetaSchedule database: {ss.run_db_error}")
            if problems := ss.get("run_db_problems"):  # plain text: the reasons quote the upload
                st.warning(f"{len(problems)} left out of the database; tasks without a usable record stay untuned:")
                st.code("\n".join(problems[:20] + [f"... and {len(problems) - 20} more"] * (len(problems) > 20)),
                        language=None)  # fmt: skip
            database = ss.run_db
        if database is None:
            st.info("Upload both files to compile with them.")
    else:
        st.caption(ABOUT[choice])

method = "tlm" if choice == "tlm-k" else choice
job = ss.get("run_job")
if job is not None and job.done:  # collect a finished background run into the session's history
    del ss["run_job"]
    if job.error:
        ss.run_error = job.error
    else:
        doc, bundle = job.result
        ss.setdefault("runs", []).append({"doc": doc, "bundle": bundle})
        ss.run_error = None
    job = None


def _work(progress, method: str, generator, measurer, on_gpu: bool, **options):
    """In the background thread: the library only, no Streamlit calls (CPU spaces come from the server's cache;
    a GPU run partitions for CUDA and builds its own spaces and Measurer)."""
    target, fused, space_of = cpu, part, lambda t: state.build_space(t.id, t)
    if on_gpu:
        target = host_target("cuda")
        fused, space_of, measurer = partition(model, target), None, None
    run = compile_and_run(model, fused, target, method, space_of=space_of, generator=generator, measurer=measurer,
                          measure_kernels=True, progress=progress, **options)  # fmt: skip
    progress(1.0, "writing the bundle")
    return run.to_dict(), bundle_zip(run)


busy = job is not None
name = method_label(method, candidates, trials) if choice != "database" else "your database"
clicked = st.button(f"Compile and run with {name}", type="primary", disabled=busy or (choice == "database"
                    and database is None), key="run_go")  # fmt: skip
if clicked:
    with st.spinner("Loading the TLM ..." if method == "tlm" else "Starting ..."):
        generator = state.generator() if method == "tlm" else None
        measurer = state.measurer()
    options = {"candidates": candidates, "trials": trials, "database": database, "repeat": repeat}
    ss.run_job = job = BackgroundJob(lambda p: _work(p, method, generator, measurer, on_gpu, **options))
    busy = True
if ss.get("run_error"):
    st.error(f"The run failed: {ss.run_error}")


@st.fragment(run_every=1.0)
def _progress() -> None:
    running = ss.get("run_job")
    if running is None:
        return
    if running.done:
        st.rerun()  # the whole page: it collects the result
    st.progress(min(running.fraction, 1.0), text=running.message)
    st.caption(f"Running in the background for {time.time() - running.started:.0f} s …")


if busy:
    _progress()

runs = ss.get("runs", [])
if not runs:
    st.info("Pick a method and press the button: the whole model is compiled, run on this CPU, checked against "
            "PyTorch on the same inputs and timed.")  # fmt: skip
    st.stop()

latest = runs[-1]["doc"]
st.subheader(f"Run #{len(runs)}: {latest['model']} with {latest['label']}")
st.caption(f"Target `{latest['target']}`")
cols = st.columns(5)
cols[0].metric("End to end (median)", f"{latest['latency_s'] * 1e3:,.3f} ms")
torch_ms = latest["pytorch_latency_s"]
cols[1].metric("PyTorch eager (median)", f"{torch_ms * 1e3:,.3f} ms" if torch_ms else "n/a")
cols[2].metric("vs PyTorch", f"{latest['speedup_vs_pytorch']:.2f}×" if latest["speedup_vs_pytorch"] else "n/a",
               help="PyTorch latency / compiled latency: above 1 the compiled model is faster")  # fmt: skip
cols[3].metric("Output check", "passed" if latest["ok"] else "FAILED",
               help="max error vs PyTorch on the same inputs, within float32 rounding")  # fmt: skip
cols[4].metric(
    "Compile time",
    f"{latest['compile_s']:.1f} s",
    help=f"schedule spaces {latest['spaces_s']:.1f} s (the first in a server also pays TVM's one-off start-up)"
    f" + schedules + tvm.compile {latest['build_s']:.1f} s",
)
err = latest["max_abs_error"]
if latest["ok"]:
    st.success(f"Matches PyTorch: max abs error {err:.2e}, max rel error {latest['max_rel_error']:.2e}.")
else:
    st.error(f"Does NOT match PyTorch: max abs error {err}, max rel error {latest['max_rel_error']}.")
if dropped := [t for t in latest["tasks"] if t.get("dropped")]:
    st.warning(f"{len(dropped)} task(s) run untuned: their {latest['label']} kernel failed when built and run alone "
               "(in a measuring worker), so it was left out of the model. See the per-task table.")  # fmt: skip
if model.torch_module is not None:  # PyTorch's own compiler on the same inputs, on request (tens of seconds)
    compiled = ss.setdefault("run_torch_compile", {})
    if label not in compiled:
        if st.button("Also time torch.compile (PyTorch's Inductor compiler) on the same inputs", key="run_tc_go"):
            with st.spinner("torch.compile: Inductor generates and builds its C++ kernels ..."):
                try:
                    compiled[label] = torch_compile_run(model, repeat=repeat)
                except Exception as err:  # Inductor can fail on a model: say so, keep the page
                    compiled[label] = summary(err)
            st.rerun()
    elif isinstance(compiled[label], str):
        st.error(f"torch.compile failed on {label}: {compiled[label]}")
    else:
        tc = compiled[label]
        tcols = st.columns(4)
        tcols[0].metric("torch.compile (median)", f"{tc.latency * 1e3:,.3f} ms")
        tcols[1].metric("vs torch.compile", f"{tc.latency / latest['latency_s']:.2f}×",
                        help="torch.compile latency / this run's latency: above 1 this run is faster")  # fmt: skip
        tcols[2].metric("torch.compile output", "passed" if tc.ok else "FAILED",
                        help=f"vs PyTorch eager: max abs error {tc.max_abs_error:.2e}")  # fmt: skip
        tcols[3].metric("torch.compile compile time", f"{tc.compile_s:.1f} s", help="its first call")
with st.expander("What does compiling the whole model mean, and why check the output? (this run)"):
    st.markdown(run_text(latest))

chart, table = st.columns([2, 3])
with chart:
    st.plotly_chart(latency_figure([latest]), key="run_latency")
with table:
    st.markdown(f"**Per task** ({latest['scheduled_tasks']}/{len(latest['tasks'])} scheduled; each kernel measured "
                "alone, checked against the untuned kernel)")  # fmt: skip
    st.dataframe(task_rows(latest), hide_index=True, key="run_tasks")
st.download_button(
    "Download the bundle (.zip: TVMScript, traces, database, results, README)",
    runs[-1]["bundle"],
    file_name=f"{latest['model']}-{latest['method']}-run{len(runs)}.zip",
    mime="application/zip",
    key="run_bundle",
)
st.caption(f"Reproduce from the command line: `{latest['command']}` (or `--method database` on the bundle's "
           "database for exactly these schedules).")  # fmt: skip

if len(runs) > 1:
    st.subheader("This session's runs")
    st.dataframe(history_rows([r["doc"] for r in runs]), hide_index=True, key="run_history")
    st.plotly_chart(latency_figure([r["doc"] for r in runs]), key="run_history_latency")
