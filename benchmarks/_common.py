"""Helpers shared by the benchmark scripts (run them from the repository root or anywhere)."""
import argparse
import json
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


#: A script's main figures by name, written by :func:`save_figures` for ``--json PATH``
#: (``benchmarks/paper/reproduce.py`` reads them).
FIGURES = {}


def json_option(parser):
    """Add ``--json PATH`` to a script's arguments."""
    parser.add_argument("--json", metavar="PATH",
                        help="also write the main figures to this JSON file")


def save_figures(path):
    """Write :data:`FIGURES` to ``path`` (nothing when None)."""
    if path:
        Path(path).write_text(json.dumps(FIGURES, indent=1))


def pyplot():
    """``matplotlib.pyplot`` drawing to files (the Agg backend), or None with a notice when
    matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no figure)")
        return None
    return plt


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


def mnist_augmented(n_rows, random_state=0):
    """Seita et al.'s MNIST-100k stand-in: :func:`mnist13k`'s training rows followed by
    deformed copies up to ``n_rows`` (:func:`skbayes_mh.datasets.mnist_pair_augmented`);
    the same test rows. None when the data are absent."""
    import numpy as np

    from skbayes_mh.datasets import mnist_pair, mnist_pair_augmented

    mnist = shared_data("mnist")
    if mnist is None:
        return None
    X, y = mnist_pair_augmented(mnist, (1, 7), n_rows, random_state)
    X_test, y_test = mnist_pair(mnist, (1, 7), "test")
    return np.column_stack([X, y]).astype(np.float64), X_test, y_test


def effective_samples(chains):
    """Mean over the parameters of ArviZ's bulk ESS (chains: (n_chains, n_draws, d))."""
    import arviz
    import numpy as np

    ess = arviz.ess(arviz.from_dict(posterior={"theta": chains}), method="bulk")["theta"]
    return float(np.mean(ess.values))


def linear_target(model, X, y, prior_scale, intercept=True, kind=None):
    """The posterior of a linear model with the same prior scale on every coefficient, with
    its MAP and Laplace approximation."""
    import numpy as np

    from skbayes_mh._validation import read_only
    from skbayes_mh.models import LinearData
    from skbayes_mh.models._prior import GAUSSIAN, BuiltinPrior
    from skbayes_mh.sampling import Target

    data = LinearData(read_only(np.ascontiguousarray(X, dtype=np.float64)),
                      read_only(np.ascontiguousarray(y, dtype=np.float64)),
                      read_only(np.zeros(0)), intercept)
    d = model.n_params(data)
    scales = np.full(d, float(prior_scale)) if np.ndim(prior_scale) == 0 else prior_scale
    prior = BuiltinPrior(GAUSSIAN if kind is None else kind, scales, n_outputs=model.n_outputs,
                         block=data.block, intercept=intercept)
    return Target.linear(model, data, prior, lipschitz=True)


def proposal_shape(target, shape):
    """The proposal's shape: ``"laplace"``, the Laplace covariance at the MAP (ours), or
    ``"plain"``, the identity (the papers' unpreconditioned proposals); a tuned scale
    multiplies either."""
    from skbayes_mh.sampling import Shape

    if shape == "laplace":
        return Shape.from_covariance(target.covariance)
    return Shape.identity(target.n_params)


def firefly_sampler(target, proposal, bound="map", shape="laplace", **firefly):
    """A factory of one-chain Firefly samplers with their warm-up tuners (``shape``: see
    :func:`proposal_shape`)."""
    from skbayes_mh.acceptance import Firefly
    from skbayes_mh.proposals import resolve_proposal
    from skbayes_mh.sampling import FireflySampler, QdbTuner, ScaleTuner

    firefly = Firefly(bound=bound, **firefly).validate()
    proposal = resolve_proposal(proposal)
    bounds = target.model.firefly_bound(target.data, target.mean, bound, target.inv_temperature)

    def make():
        sampler = FireflySampler(target, firefly, proposal, proposal_shape(target, shape),
                                 proposal.initial_scale(target.n_params), bounds)
        return sampler, [ScaleTuner()] + ([QdbTuner()] if firefly.q_db is None else [])
    return make


def regular_sampler(target, proposal, shape="laplace"):
    """A factory of one-chain full-data samplers: the exact Metropolis test with the same
    proposal, shape (:func:`proposal_shape`) and scale tuning as Firefly's (regular MCMC,
    the baseline)."""
    from skbayes_mh.acceptance import Metropolis
    from skbayes_mh.proposals import resolve_proposal
    from skbayes_mh.sampling import MetropolisHastings, ScaleTuner

    proposal = resolve_proposal(proposal)

    def make():
        sampler = MetropolisHastings(target, Metropolis(), proposal,
                                     proposal_shape(target, shape),
                                     proposal.initial_scale(target.n_params))
        return sampler, [ScaleTuner()]
    return make


def chain_row(target, make_sampler, args, iterations=None):
    """One row of a Firefly table: ``args.chains`` chains of ``args.burnin`` tuning and
    ``iterations`` (default ``args.iterations``) kept iterations, each started one Laplace
    sd from the MAP. Returns queries/iter, ESS, ESS per 1,000 iterations, per query and per
    second of the kept iterations, the mean bright count, and the draws' mean and sd."""
    import time

    import numpy as np

    from skbayes_mh.sampling import run_chain

    iterations = args.iterations if iterations is None else iterations
    chains, queries, bright, seconds = [], [], [], 0.0
    start = time.perf_counter()
    sd = np.sqrt(np.diag(target.covariance_matrix))
    for chain in range(args.chains):
        jitter = np.random.default_rng([chain, 1]).standard_normal(target.n_params)
        sampler, tuners = make_sampler()
        out = run_chain(sampler, target.mean + sd * jitter, 100 + chain, args.burnin, iterations,
                        tuners=tuners)
        chains.append(out.draws)
        queries.append(out.stats["n_data_read"])
        bright.append(out.stats.get("n_bright", np.full(iterations, target.n_data)))
        seconds += out.stats["seconds"][-1]
    ess = effective_samples(np.stack(chains))
    n_iter = iterations * args.chains
    draws = np.concatenate(chains)
    return dict(queries=float(np.mean(queries)), ess=ess, per_1000=1000 * ess / n_iter,
                per_query=ess / np.sum(queries), per_second=ess / seconds,
                us_per_iter=1e6 * seconds / n_iter, bright=float(np.mean(bright)),
                mean=draws.mean(axis=0), sd=draws.std(axis=0),
                wall=time.perf_counter() - start)


def print_agreement(rows):
    """Each row's posterior mean and sd against the regular-MCMC row's: the largest
    ``|mean difference| / sd`` and the range of the sd ratios over the parameters."""
    base = rows["regular MCMC"]
    for name, r in rows.items():
        if name == "regular MCMC":
            continue
        shift = abs(r["mean"] - base["mean"]) / base["sd"]
        ratio = r["sd"] / base["sd"]
        print(f"  {name} against regular MCMC: max |mean difference| = {shift.max():.2f} sd, "
              f"sd ratios {ratio.min():.2f} to {ratio.max():.2f}")


def firefly_report(title, rows, paper, key=None):
    """Print a Firefly table: the Table 1 columns, the paper's figures beside ours, and the
    speed-up per second of wall time against the row named "regular MCMC"; with ``key``,
    record each row's queries and speed-ups in :data:`FIGURES` under it."""
    base = rows["regular MCMC"]
    if key is not None:
        FIGURES[key] = {name: {"queries": r["queries"],
                               "speedup_per_query": r["per_query"] / base["per_query"],
                               "speedup_per_second": r["per_second"] / base["per_second"]}
                        for name, r in rows.items()}
    print(f"\n{title}")
    table([[name, f"{r['queries']:,.0f}", paper[name][0], f"{r['per_1000']:.1f}", paper[name][1],
            f"{r['per_query'] / base['per_query']:.1f}", paper[name][2],
            f"{r['per_second']:.2f}", f"{r['per_second'] / base['per_second']:.1f}",
            f"{r['bright']:,.0f}"] for name, r in rows.items()],
          ["algorithm", "queries/iter", "paper", "ESS/1000 iter", "paper",
           "speed-up/query", "paper", "ESS/s", "speed-up/s", "bright"])


def run_numpyro_peer(python, data, method, dense, extra=()):
    """One run of ``_numpyro_peer.py`` (in the peer's own Python) on the ``.npz`` file
    ``data``: ``(its JSON result, its saved draws)``, or None (with the peer's last error
    line) when it failed."""
    import json
    import subprocess

    import numpy as np

    out = Path(data).with_name(f"{method}-{int(dense)}.json")
    draws_out = out.with_suffix(".npy")
    command = [python, str(Path(__file__).resolve().parent / "_numpyro_peer.py"), "--data",
               str(data), "--method", method, "--out", str(out), "--seed", "0",
               "--draws-out", str(draws_out), *extra]
    if dense:
        command.append("--dense-mass")
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        print(f"[{method} failed: {completed.stderr.strip().splitlines()[-1:]}]", file=sys.stderr)
        return None
    return json.loads(out.read_text()), np.load(draws_out)


def cases_option(parser, cases):
    """Add ``--cases a,b,...`` (default: every name in ``cases``) to a script's arguments:
    a list of names, an unknown one an argparse error that lists the known."""
    def names(text):
        chosen = [name for name in text.split(",") if name]
        unknown = [name for name in chosen if name not in cases]
        if unknown or not chosen:
            raise argparse.ArgumentTypeError(
                f"unknown case(s) {', '.join(unknown) or '(none given)'}; the cases are "
                f"{', '.join(cases)}")
        return chosen

    parser.add_argument("--cases", type=names, default=list(cases),
                        help=f"comma-separated, of {', '.join(cases)} (default: all)")
