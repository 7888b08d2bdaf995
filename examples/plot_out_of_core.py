"""
Data on disk and on a cluster: a memory-mapped fit and a Dask fit
=================================================================

Data larger than memory stay where they are. An ``np.memmap`` (e.g. ``np.load(path,
mmap_mode="r")``) is read in place, never copied: the full-data passes (validation, MAP,
control variates) stream it in chunks, and the chains read only the rows their tests draw.
A ``dask.array`` is fitted the same way, its passes running as Dask tasks where its blocks
are. ``data_passes_`` and ``setup_time_`` say what the setup read and how long it took.

Here: 200,000 synthetic logistic-regression rows with 10 features, written to a temporary
``.npy`` file. The Dask part runs when Dask is installed (the ``dask`` extra).
"""

import shutil
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from skbayes_mh import MinibatchMHLogisticRegression

rng = np.random.default_rng(0)
n_rows, n_features = 200_000, 10
true_coef = rng.normal(0.0, 0.5, size=n_features)
folder = Path(tempfile.mkdtemp())
X = np.lib.format.open_memmap(folder / "X.npy", mode="w+", dtype=np.float64,
                              shape=(n_rows, n_features))
X[:] = rng.normal(size=(n_rows, n_features))
y = (rng.random(n_rows) < 1 / (1 + np.exp(-(X @ true_coef + 0.3)))).astype(np.float64)
np.save(folder / "y.npy", y)
X.flush()
del X

# %%
# The memory-mapped fit
# ---------------------

X = np.load(folder / "X.npy", mmap_mode="r")
fits = {"memmap": MinibatchMHLogisticRegression(random_state=0).fit(X, y)}
fit = fits["memmap"]
print(f"{type(X).__name__}: test {fit.acceptance_.name}, control variates "
      f"{fit.control_variates_}, {fit.posterior_['rows_per_iteration'].mean():.0f} rows per "
      f"iteration of {n_rows:,}")
print(f"setup {fit.setup_time_:.2f} s, full passes over the data: "
      + ", ".join(f"{name} {value:.2f}" for name, value in fit.data_passes_.items()))

# %%
# The Dask fit
# ------------
# The same file as a ``dask.array`` of four row blocks; with a ``distributed`` cluster
# (``Client(...)``) the passes run on its workers.

try:
    import dask.array as da
except ImportError:
    print("Dask is not installed (pip install 'skbayes-mh[dask]'): the Dask fit is skipped.")
else:
    X_dask = da.from_array(np.load(folder / "X.npy", mmap_mode="r"), chunks=(50_000, -1))
    y_dask = da.from_array(y, chunks=50_000)
    fits["dask"] = MinibatchMHLogisticRegression(random_state=0).fit(X_dask, y_dask)
    shift = np.abs(fits["dask"].coef_ - fit.coef_) / fit.posterior_["coef"].std(axis=(0, 1))
    print(f"dask: setup {fits['dask'].setup_time_:.2f} s; the posterior means differ from the "
          f"memmap fit's by at most {shift.max():.2g} posterior sd")

# %%
# At 200,000 rows the intervals are narrow, so each weight is drawn relative to its true
# value, in posterior sds: its 90% credible interval covers 0 when it covers the weight
# that generated the data.

fig, ax = plt.subplots(figsize=(7, 4))
for offset, (name, model) in zip((-0.15, 0.15), fits.items()):
    table = model.summary(as_frame=False)
    weights = slice(0, n_features)
    sd = table["sd"][weights]
    centre = (table["mean"][weights] - true_coef) / sd
    low = (table["5%"][weights] - true_coef) / sd
    high = (table["95%"][weights] - true_coef) / sd
    ax.errorbar(np.arange(n_features) + offset, centre, yerr=[centre - low, high - centre],
                fmt="o", capsize=3, label=f"{name} fit")
ax.axhline(0.0, color="black", linewidth=1)
ax.set_xticks(np.arange(n_features), [f"x{j}" for j in range(n_features)])
ax.set_ylabel("(weight - true weight) / posterior sd")
ax.set_title("90% credible intervals")
ax.legend()
fig.tight_layout()
plt.show()

del X
shutil.rmtree(folder, ignore_errors=True)  # the temporary data files
