"""Regenerates the ds_chart_svg / ds_image fixtures (matplotlib 3.6, pandas
1.5, seaborn 0.12 from Debian bookworm): python3 gen_charts.py"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

plt.rcParams["svg.hashsalt"] = "x"
META = {"Date": None}


def save(fig, name, **kw):
    fig.savefig(name, metadata=META, **kw)
    plt.close(fig)


REGIONS, SALES = ["north", "south", "east", "west"], [120.5, 80, 95.25, 60]

fig, ax = plt.subplots(figsize=(4, 3))
ax.bar(REGIONS, SALES)
ax.set_title("Sales by region")
ax.set_xlabel("Region")
ax.set_ylabel("Sales")
save(fig, "bar.svg")

plt.rcParams["svg.fonttype"] = "none"
fig, ax = plt.subplots(figsize=(4, 3))
ax.bar(REGIONS, SALES)
ax.set_title("Sales  by region")
ax.set_xlabel("Region")
ax.set_ylabel("Sales & returns")
save(fig, "bar_text.svg")
plt.rcParams["svg.fonttype"] = "path"

fig, ax = plt.subplots(figsize=(4, 3))
ax.barh(["x", "y", "z"], [5, 7, 2])
ax.set_title("Horizontal")
save(fig, "barh.svg")

fig, ax = plt.subplots(figsize=(4, 3))
ax.bar(["a", "b", "c"], [3, -1, 2])
save(fig, "bar_negative.svg")

fig, ax = plt.subplots(figsize=(4, 3))
ax.plot([1, 2, 3, 4], [10, 30, 20, 40], label="revenue")
ax.plot([1, 2, 3, 4], [1, 2, 3, 4], label="cost")
ax.legend()
ax.set_title("Monthly")
save(fig, "line.svg")

fig, ax = plt.subplots(figsize=(4, 3))
ax.scatter([1, 2, 3, 4, 5], [5, 4, 3, 2, 1])
ax.set_xlabel("x")
save(fig, "scatter.svg")

df = pd.DataFrame({"region": ["n", "s", "e"], "q1": [1, 2, 3], "q2": [2, 3, 1]})
ax = df.set_index("region").plot.bar(figsize=(4, 3), title="Quarterly")
save(ax.figure, "pandas_grouped.svg")

try:
    import seaborn as sns

    d = pd.DataFrame({"cat": ["a", "a", "b", "b", "c", "c"], "v": [1, 3, 2, 4, 5, 7]})
    fig, ax = plt.subplots(figsize=(4, 3))
    sns.barplot(data=d, x="cat", y="v", ax=ax)
    ax.set_title("Seaborn means")
    save(fig, "seaborn_bar.svg")
except ImportError:
    pass

fig, (a1, a2) = plt.subplots(1, 2, figsize=(5, 3))
a1.plot([1, 2], [3, 4])
a2.bar(["a", "b"], [1, 2])
fig.suptitle("Two panels")
save(fig, "subplots.svg")

fig, ax = plt.subplots(figsize=(4, 3))
ax.bar(REGIONS, SALES)
save(fig, "chart.png", dpi=100)
