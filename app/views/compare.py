"""Compare page: every method on the current subgraph and across the whole model, measured on this machine."""

import statistics
import tempfile

import state
import streamlit as st
from state import DATABASE_MIB as DB_MIB
from widgets import subgraph_header

from tlm_core.baselines.hardware import Hardware
from tlm_core.compare import (
    LABELS,
    DatabaseError,
    Job,
    Results,
    database_from_files,
    decision_diff,
    machine_ceilings,
    roofline_points,
    run_method,
    side_by_side,
    task_table,
)
from tlm_core.compile import pytorch_latencies
from tlm_core.errors import summary
from tlm_core.viz.compare import (
    convergence_figure,
    method_bars,
    results_table,
    roofline_figure,
    roofline_text,
    search_text,
)

ss = st.session_state
label, model, part, node, task = subgraph_header("Compare")

# Session: results per (task, method) (the Model page's overlay reads them too), searches running per task.
results: Results = ss.setdefault("compare_results", Results())
jobs: dict[str, Job] = ss.setdefault("compare_jobs", {})
errors: dict[str, str] = ss.setdefault("compare_errors", {})
for tid, job in list(jobs.items()):  # collect finished searches
    if job.done:
        if job.result is not None:
            results.add(job.result)
        else:
            errors[tid] = f"Search failed: {job.error}"
        del jobs[tid]


def measure(method: str, space, **options) -> str | None:
    """One method on one task into the results; the reason when it failed (the page stays up)."""
    try:
        gen = state.generator() if method.startswith("tlm") else None
        results.add(run_method(method, space, state.measurer(), gen, **options))
        return None
    except Exception as err:  # e.g. a rule TVM cannot apply to this workload
        return f"{LABELS[method]} failed on {space.task.name}: {summary(err)}"


def run(method: str, space, **options) -> None:
    """measure() with a status box."""
    with st.status(f"{LABELS[method]}: choosing, building, checking and timing ...") as status:
        error = measure(method, space, **options)
        if error:
            errors[space.task.id] = error
            status.update(label=f"{LABELS[method]}: failed", state="error")
        else:
            status.update(label=f"{LABELS[method]}: measured", state="complete")


here, whole = st.tabs(["This subgraph", "Whole model"])

with here:
    with st.status("Building the schedule space ...") as status:
        space = state.build_space(task.id, task)
        status.update(label=f"Schedule space of {task.name}: {len(space.sketches)} sketches", state="complete")
    st.caption(
        "Each button lets a method choose this subgraph's schedule, then builds the kernel, checks its output "
        "against the untuned reference and times it on this CPU. Compile time = the time to choose, including any "
        "measurements the method needs (best-of-k, Top-k, search). A best-of-k or Top-k measures its k candidates, "
        "then the 3 fastest again: the fastest of that second measurement wins, with its second latency."
    )
    cols = st.columns(6)
    k = cols[5].number_input("k (TLM best-of-k)", 2, 16, 4, key="w_cmp_k")
    buttons = {
        "default": "TVM default",
        "heuristic": "Heuristic Top-1",
        "heuristic-top-k": "Heuristic Top-10",
        "tlm": "TLM top-1",
        "tlm-best-of-k": "TLM best-of-k",
    }
    for col, (method, text) in zip(cols, buttons.items(), strict=False):
        if col.button(text, key=f"cmp-{method}", help=LABELS[method], width="stretch"):
            run(method, space, k=int(k))

    st.markdown("**Ansor-style evolutionary search, MetaSchedule implementation** (runs in the background)")
    scol = st.columns([1, 1, 3])
    trials = scol[0].number_input("Search trials", 1, 512, 16, key="w_cmp_trials")
    job = jobs.get(task.id)
    if scol[1].button("Start search", key="cmp-search", disabled=job is not None):
        measurer, budget = state.measurer(), int(trials)

        def work(report) -> object:  # in the background thread: no Streamlit calls here
            return run_method("search", space, measurer, trials=budget, on_trial=report)

        job = jobs[task.id] = Job(work, "search", total=budget)

    if job is not None:

        @st.fragment(run_every=1.0)
        def search_progress() -> None:
            """Polls the background search: progress and the best latency so far; a full rerun when it ends."""
            running = jobs.get(task.id)
            if running is None or running.done:
                st.rerun()
            seen = running.events
            ok = [t.latency for t in seen if t.latency is not None]
            best = f", best so far {min(ok) * 1e6:,.1f} µs" if ok else ""
            st.progress(
                min(1.0, len(seen) / running.total),
                text=f"Search: {len(seen)} of {running.total} trials measured in {running.elapsed:.0f} s{best}",
            )

        search_progress()

    st.markdown("**Your own MetaSchedule database**")
    st.caption(
        "Upload the two files of a JSONDatabase from your own tuning. They are read as JSON data (64 MiB each at "
        "most; nothing is unpickled), and TVM first loads every trace in a separate helper process; tasks are "
        "matched by workload structural hash, and the best record of a task is re-measured here, with the numeric "
        "check."
    )
    ucols = st.columns(2)
    wfile = ucols[0].file_uploader("workload.json", type=["json"], key="w_db_workload", max_upload_size=DB_MIB)
    rfile = ucols[1].file_uploader("tuning_record.json", type=["json"], key="w_db_records", max_upload_size=DB_MIB)
    if wfile is not None and rfile is not None and ss.get("db_files") != (wfile.file_id, rfile.file_id):
        ss.db_files, ss.db_error, ss.user_db = (wfile.file_id, rfile.file_id), None, None
        try:
            directory = tempfile.mkdtemp(prefix="tlm-user-db-")
            source = f"{wfile.name} + {rfile.name}"
            with st.spinner("Checking every record of the database (in a helper process) ..."):
                ss.user_db = database_from_files(wfile.getvalue(), rfile.getvalue(), directory, source=source)
        except DatabaseError as err:
            ss.db_error = str(err)
        except Exception as err:  # anything else TVM raises while loading: a message, not a crash
            ss.db_error = f"could not read the database ({summary(err)})"
    if wfile is None and rfile is None:
        ss.db_error = None  # the files were removed: so is their error (a database read earlier stays)
    if ss.get("db_error"):
        st.error(f"Not a usable MetaSchedule database: {ss.db_error}")
    user = ss.get("user_db")
    if user is not None and user.problems:  # plain text: the reasons quote the upload
        st.warning(f"{len(user.problems)} left out of the database (each line says why):")
        st.code("\n".join(user.problems[:20] + [f"... and {len(user.problems) - 20} more"] * (len(user.problems) > 20)),
                language=None)  # fmt: skip
    if user is not None:
        covered, missing, foreign = user.coverage(part.tasks)
        st.write(
            f"{user.records} records; they cover **{len(covered)} of {len(part.tasks)} tasks** of {label}"
            + (f"; {foreign} of their workloads belong to no task of this model" if foreign else "")
            + "."
        )
        if task.id in covered:
            if st.button("Measure its schedule for this subgraph", key="cmp-database"):
                run("database", space, database=user)
        else:
            st.info("The database has no record of this subgraph's task.")

    if task.id in errors:
        st.error(errors.pop(task.id))
    rows = results.of_task(task.id)
    st.subheader("Results")
    st.caption(
        "PyTorch runs whole models, not TVM's fused subgraphs: its eager time is in the Whole model tab, "
        "beside the sum of each method's kernels."
    )
    again = [r for r in rows if r.ok and r.mod is not None]
    if len(again) >= 2 and st.button(
        "Measure these side by side",
        key="cmp-side-by-side",
        help="Each method's program measured again in one batch, 3 rounds in rotated order (medians): its own "
        "latency was measured at another moment, and a search's is the minimum over many noisy measurements.",
    ):
        with st.spinner(f"Measuring {len(again)} programs again, side by side, 3 rounds ..."):
            side_by_side(space, rows, state.measurer())
    if rows:
        st.dataframe(results_table(rows), hide_index=True, key="cmp-table")
        st.plotly_chart(method_bars(rows), key="cmp-bars")
    else:
        st.info("Nothing measured for this subgraph yet: run a method above.")

    search = results.get(task.id, "search")
    if search is not None and search.ok:
        st.subheader("Search convergence, with the TLM's result drawn on it")
        marks = [r for r in (results.get(task.id, "tlm"), results.get(task.id, "tlm-best-of-k")) if r is not None]
        st.plotly_chart(convergence_figure(search, marks), key="cmp-convergence")
        with st.expander("Why does search cost time? (this run)"):
            st.markdown(search_text(search, results.get(task.id, "tlm")))

    st.subheader("Roofline of this machine")
    with st.spinner("Measuring this machine's ceilings (numpy GEMM and copy; once per server) ..."):
        ceilings = machine_ceilings()
    points = roofline_points(task, rows, ceilings)
    nominal = Hardware.from_target(space.target).peak_flops / 1e9
    st.plotly_chart(roofline_figure(ceilings, points, nominal), key="cmp-roofline")
    with st.expander("What does a roofline say? (this subgraph)"):
        st.markdown(roofline_text(ceilings, points, nominal))

    decided = {r.method: r for r in rows if r.decisions is not None}
    st.subheader("Decision-level diff of two schedules")
    if len(decided) >= 2:
        dcols = st.columns(2)
        names = list(decided)
        a = dcols[0].selectbox("Schedule A", names, format_func=lambda m: decided[m].label, key=f"w_diff_a-{task.id}")
        b = dcols[1].selectbox(
            "Schedule B", names, 1, format_func=lambda m: decided[m].label, key=f"w_diff_b-{task.id}"
        )
        ra, rb = decided[a], decided[b]
        diff = decision_diff(space, (ra.sketch_index, ra.decisions), (rb.sketch_index, rb.decisions))
        st.caption(diff.note)
        st.dataframe([r.__dict__ for r in diff.rows], hide_index=True, key="cmp-diff")
    else:
        st.caption("Measure two methods that write decisions (heuristic, TLM, search, a database) to diff them.")

with whole:
    table, totals = task_table(part.tasks, results)
    st.caption(
        f"What has been measured so far on {label}, per task (µs per call; empty: not measured yet). Kernel time "
        "per inference = latency × calls summed over tasks, once a method has every task. The Model page can "
        "colour the graph by these results."
    )
    if st.button("Measure TVM default, heuristic Top-1 and TLM top-1 on every task", key="cmp-all"):
        bar, failed = st.progress(0.0), []
        for i, t in enumerate(part.tasks):
            bar.progress(i / len(part.tasks), text=f"task {i + 1}/{len(part.tasks)}: {t.name}")
            sp = state.build_space(t.id, t)
            for method in ("default", "heuristic", "tlm"):
                if results.get(t.id, method) is None:
                    failed += [e] if (e := measure(method, sp)) else []
        bar.progress(1.0, text=f"{len(part.tasks)} tasks measured")
        for error in failed:
            st.error(error)
        table, totals = task_table(part.tasks, results)
    st.dataframe(table, hide_index=True, key="cmp-model-table")
    torch_times = ss.setdefault("pytorch_latency", {})
    mcols = st.columns(max(1, len(totals) + 1))
    for col, (method, total) in zip(mcols, totals.items(), strict=False):
        col.metric(method, "incomplete" if total is None else f"{total * 1e6:,.1f} µs",
                   help=f"{LABELS[method]}: kernel time per inference")  # fmt: skip
    if model.reference is None:
        st.caption("This model has no PyTorch reference to time.")
    else:
        if st.button("Time PyTorch eager on the whole model", key="cmp-pytorch"):
            with st.spinner("Running PyTorch eager ..."):
                torch_times[label] = statistics.median(pytorch_latencies(model, model.random_inputs(0)))
        if label in torch_times:
            mcols[-1].metric("PyTorch eager (end to end)", f"{torch_times[label] * 1e6:,.1f} µs")
    if user is not None:
        covered, missing, _ = user.coverage(part.tasks)
        names = ", ".join(part.task(t).name for t in missing)
        st.caption(
            f"Your database covers {len(covered)} of {len(part.tasks)} tasks" + (f"; not: {names}." if names else ".")
        )
