"""Helpers shared by the benchmark scripts (run them from the repository root or anywhere)."""
import sys
from pathlib import Path

#: The real data sets sit beside the checkout in the project's workspace.
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_data(name):
    """Path of ``../shared/data/<name>``, or None (with a message) when it is absent."""
    path = SHARED_DATA / name
    if path.is_dir():
        return path
    print(f"[{name} not found at {path}: it sits beside the checkout in the project's workspace]",
          file=sys.stderr)
    return None


def table(rows, headers):
    """Print rows as an aligned text table."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[k]) for r in cells) for k in range(len(headers))]
    for n, row in enumerate(cells):
        print("  ".join(c.rjust(w) for c, w in zip(row, widths)))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def mnist13k():
    """MNIST 1 vs 7 as in Seita et al.'s MNIST-13k: (data, X_test, y_test) with ``data`` the
    (13,007, 785) training rows ``[pixels in [0, 1], label]``; None when the data are absent."""
    import numpy as np

    from skbayes_mh.datasets import mnist_pair

    mnist = shared_data("mnist")
    if mnist is None:
        return None
    X, y = mnist_pair(mnist, (1, 7), "train")
    X_test, y_test = mnist_pair(mnist, (1, 7), "test")
    return np.column_stack([X, y]).astype(np.float64), X_test, y_test
