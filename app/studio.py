"""TLM Studio: `streamlit run app/studio.py`. Pages are thin views over tlm_core."""

import streamlit as st

st.set_page_config(page_title="TLM Studio", layout="wide")
page = st.navigation(
    [
        st.Page("views/model.py", title="Model", icon=":material/account_tree:", default=True),
        st.Page("views/space.py", title="Schedule space", icon=":material/grid_on:"),
        st.Page("views/generate.py", title="Generate", icon=":material/auto_awesome:"),
        st.Page("views/compare.py", title="Compare", icon=":material/leaderboard:"),
        st.Page("views/run.py", title="Run", icon=":material/play_circle:"),
    ]
)
page.run()
