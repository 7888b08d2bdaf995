"""The posterior samples container, chain-major as ArviZ expects."""
import inspect

import numpy as np


class Posterior:
    """Posterior draws and per-draw statistics of several chains.

    Parameters
    ----------
    draws : dict of str to ndarray of shape ``(n_chains, n_draws, *shape)``
        The sampled quantities (e.g. ``coef``, ``intercept``).
    sample_stats : dict of str to ndarray of shape (n_chains, n_draws)
        Per-draw statistics, named as ArviZ does where a name exists: ``lp`` (log posterior,
        NaN where the test never computes it), ``acceptance_rate``, ``n_data_read``,
        ``seconds`` (cumulative wall time of the chain).

    Examples
    --------
    >>> import numpy as np
    >>> from skbayes_mh.posterior import Posterior
    >>> p = Posterior({"coef": np.zeros((2, 5, 3))}, {"n_data_read": np.ones((2, 5))})
    >>> p.n_chains, p.n_draws, p["coef"].shape, "coef" in p
    (2, 5, (2, 5, 3), True)
    >>> p
    Posterior(2 chains x 5 draws; draws: coef (3,); sample_stats: n_data_read)
    """

    def __init__(self, draws, sample_stats):
        self.draws = {name: np.asarray(value) for name, value in draws.items()}
        self.sample_stats = {name: np.asarray(value) for name, value in sample_stats.items()}
        shapes = {value.shape[:2] for value in [*self.draws.values(), *self.sample_stats.values()]}
        if len(shapes) != 1:
            raise ValueError(f"all arrays must share (n_chains, n_draws); got {shapes}.")
        self.n_chains, self.n_draws = shapes.pop()

    def __getitem__(self, name):
        if name in self.draws:
            return self.draws[name]
        if name in self.sample_stats:
            return self.sample_stats[name]
        raise KeyError(f"{name!r} is neither a posterior variable ({', '.join(self.draws)}) nor a "
                       f"sample statistic ({', '.join(self.sample_stats)}).")

    def __contains__(self, name):
        return name in self.draws or name in self.sample_stats

    def get(self, name, discard=0, thin=1, flat=False):
        """Draws of ``name`` after discarding ``discard`` per chain and keeping every
        ``thin``-th; ``flat=True`` merges the chains into one leading axis."""
        values = self[name][:, discard::thin]
        return values.reshape(-1, *values.shape[2:]) if flat else values

    def to_dict(self):
        """``{"posterior": {...}, "sample_stats": {...}}`` of plain arrays."""
        return {"posterior": dict(self.draws), "sample_stats": dict(self.sample_stats)}

    def to_arviz(self, **groups):
        """An ``arviz.InferenceData`` (needs the optional dependency ArviZ), so that
        ``arviz.summary`` gives R-hat and effective sample sizes.

        Parameters
        ----------
        **groups : dict of str to ndarray
            More groups by name (``observed_data``, ``constant_data``, ``log_likelihood``,
            ``posterior_predictive``). Their variable ``y`` and the first axis of ``X`` (after
            chain and draw where present) share the dimension ``row``.
        """
        try:
            import arviz
        except ImportError as error:
            raise ImportError("to_arviz needs ArviZ: pip install 'skbayes-mh[arviz]'") from error
        dims = {"y": ["row"], "X": ["row", "feature"]}
        everything = {"posterior": dict(self.draws), "sample_stats": dict(self.sample_stats),
                      **groups}
        first = next(iter(inspect.signature(arviz.from_dict).parameters))
        if first == "posterior":  # ArviZ before 1.0: one keyword per group
            return arviz.from_dict(**everything, dims=dims)
        return arviz.from_dict(everything, dims=dims)  # ArviZ 1.0: a dict of groups

    def __repr__(self):
        draws = ", ".join(f"{k} {v.shape[2:]}" for k, v in self.draws.items())
        stats = ", ".join(self.sample_stats)
        return (f"Posterior({self.n_chains} chains x {self.n_draws} draws; draws: {draws}; "
                f"sample_stats: {stats})")
