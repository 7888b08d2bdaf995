"""NumPyro peer sampler for the Bayesian logistic-regression benchmarks.

This is a standalone helper script for the benchmarks.  It is **not** part of
``skbayes_mh``: it is never imported by the package, by its tests or at run
time, and it must not be run in the project's own environment.  It runs in a
separate Python environment that has NumPy, JAX, NumPyro and ArviZ installed
(for example one made with ``python -m venv peer && peer/bin/pip install numpyro arviz``), and a benchmark in the project environment
calls it through ``subprocess``::

    peer/bin/python benchmarks/_numpyro_peer.py \\
        --data /tmp/x.npz --method nuts --chains 4 --warmup 500 \\
        --samples 1000 --seed 0 --out /tmp/result.json

Nothing is downloaded at run time; the script only needs the ``.npz`` file.

Input (``--data``, an ``.npz`` file)
------------------------------------
``X``
    (N, D) float64 design matrix.
``y``
    (N,) labels in {0, 1} (float or int).
``prior_scale``
    Scalar: each weight gets an independent N(0, prior_scale**2) prior.
``intercept``
    0 or 1.  When 1, a column of ones is appended to ``X`` as the *last*
    feature, with prior N(0, intercept_prior_scale**2).
``intercept_prior_scale``
    Scalar, only read when ``intercept`` is 1.

``n_classes`` (optional)
    K > 2: softmax regression on labels 0..K-1 instead, ``w`` of shape (K, D) with
    every class's block given the prior above.

``group`` (optional)
    (N,) integer group codes 0..G-1: a random-intercept (and slope) logistic regression
    instead, non-centred, as Stan's and NumPyro's manuals write it. Then also
    ``n_groups`` (G), ``term_columns`` (T,) (-1 for the group intercept, else the column of
    ``X`` whose slope varies by group), ``group_sd_scales`` (T,) (each term's sd has a
    half-normal prior of that scale), ``weight_scales`` (D,) (each weight's prior sd) and
    ``x_mean`` (D,): the intercept's N(0, intercept_prior_scale^2) prior is on the
    intercept at the features' means, ``b + x_mean . w``. Draws and diagnostics are on
    ``[w, b, effects (T x G, term-major, sd * z), sds]``. With ``centred`` 1 the effects
    are sampled as themselves (``effects ~ N(0, sd^2)``), which suits groups of many rows.
    With ``correlated`` 1 each group's T effects are one multivariate normal of the sds and
    a correlation matrix under LKJ(2) (``dist.LKJCholesky``; non-centred ``sd * (L z)``,
    centred ``MultivariateNormal(0, scale_tril=diag(sd) L)``), and the draws end with the
    correlations (the strict lower triangle, row by row).

Model: ``y_i ~ Bernoulli(sigmoid(x_i . w))``, or ``y_i ~ Categorical(softmax(w x_i))``,
computed in float64. The softmax samples all K class blocks (over-parameterised); its
diagnostics are computed on the blocks centred over the classes, the quantities the
likelihood identifies (the sum over classes is the prior's alone), and ``--draws-out``
saves the centred (chains, draws, K, D) array.

Methods (``--method``)
----------------------
``nuts``
    NumPyro's NUTS on the full data, diagonal mass matrix by default,
    ``--dense-mass`` for a dense one.  Default initialisation
    (``init_to_uniform``), default target acceptance (0.8).
``hmcecs``
    NumPyro's HMCECS (HMC with energy conserving subsampling, Dang et al.
    2019) with the second-order Taylor-expansion proxy
    (``HMCECS.taylor_proxy``, i.e. ``numpyro.contrib.ecs_proxies
    .taylor_proxy``) as control variate.  The configuration follows NumPyro's
    own examples:

    * ``examples/hmcecs.py`` finds the reference point of the Taylor proxy
      with SVI using an ``AutoDelta`` guide (a MAP fit) on the *subsampled*
      model, ``Adam(step_size=1e-3)`` for ``num_svi_steps=5000`` steps, and
      uses NUTS as inner kernel (HMC optional) with ``num_blocks=100``.
      Here: ``--svi-steps 5000``, ``--svi-lr 1e-3``, ``--inner nuts``,
      ``--num-blocks 100``, and the SVI minibatch is the MCMC subsample size.
    * ``examples/covtype.py`` (the example the MCMC docs point to for detailed
      HMCECS usage; logistic regression with ``subsample_size=1000``) builds
      the inner kernel as ``NUTS(model, init_strategy=init_to_value(
      values=ref_params), dense_mass=...)`` and the kernel as
      ``HMCECS(inner, num_blocks=100, proxy=HMCECS.taylor_proxy(ref_params))``.
      Here: the chains start at the reference point (``--init-at-reference``,
      on by default) and ``--dense-mass`` is honoured.

    The SVI reference-point computation is part of the measured wall time.

Chains
------
Chains run with ``chain_method="sequential"`` by default: the benchmark
machine has only 2 CPU cores, and XLA's CPU backend already uses them for the
(N, D) matrix-vector products of a single chain, so running 4 chains as
parallel host "devices" would just oversubscribe the cores (and would need
``--xla_force_host_platform_device_count``).  ``--chain-method parallel``
sets that XLA flag (before JAX is imported) to the number of chains;
``--chain-method vectorized`` is also accepted.

Output
------
A JSON file (``--out``) and a one-line summary on stdout.  ``wall_seconds``
runs from the moment the arrays have been read from the ``.npz`` to the end
of sampling (all samples ready): model setup, transfer to JAX, JIT tracing
and compilation, the SVI/MAP reference fit (HMCECS), warm-up and sampling.
Loading the file and the ArviZ diagnostics afterwards are not included (see
``load_seconds`` and ``wall_includes``).  ``compile_seconds`` is the time JAX
itself reports for tracing, lowering and XLA compilation (via
``jax.monitoring``) during that window.

ESS and R-hat are ArviZ's rank-normalised bulk/tail ESS and split R-hat on the
(chains, draws, D) array of weights.  ``rows_per_iteration`` counts the data
rows whose log-likelihood gradient is evaluated per MCMC iteration (sampling
phase): ``N * mean(num_steps)`` for NUTS; for HMCECS, ``subsample *
(mean(num_steps) + mean subsample acceptance probability)`` (leapfrog
gradients plus the gradient refresh after an accepted subsample update).

Results are deterministic given ``--seed`` (on the same machine and thread
count).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time


def _parse_args(argv=None):
    p = argparse.ArgumentParser(
        description="NumPyro NUTS / HMCECS peer for Bayesian logistic regression.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--data", required=True, help=".npz file with X, y, prior_scale, intercept")
    p.add_argument("--method", required=True, choices=["nuts", "hmcecs"])
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--warmup", type=int, default=500)
    p.add_argument("--samples", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="output JSON path")
    p.add_argument("--draws-out", default=None, help="also save the (chains, draws, D) weights (.npy)")
    p.add_argument("--dense-mass", action="store_true", help="dense mass matrix (NUTS / inner kernel)")
    p.add_argument(
        "--chain-method",
        default="sequential",
        choices=["sequential", "parallel", "vectorized"],
        help="NumPyro chain_method (sequential suits a 2-core CPU)",
    )
    p.add_argument("--target-accept", type=float, default=0.8, help="NUTS/HMC target_accept_prob")
    g = p.add_argument_group("hmcecs")
    g.add_argument("--subsample", type=int, default=1000, help="HMCECS subsample size")
    g.add_argument("--num-blocks", type=int, default=100, help="HMCECS num_blocks")
    g.add_argument("--inner", default="nuts", choices=["nuts", "hmc"], help="HMCECS inner kernel")
    g.add_argument("--svi-steps", type=int, default=5000, help="AutoDelta SVI steps for the reference point")
    g.add_argument("--svi-lr", type=float, default=1e-3, help="Adam step size for the reference SVI")
    g.add_argument(
        "--init-at-reference",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="start the HMCECS chains at the reference point (as examples/covtype.py)",
    )
    args = p.parse_args(argv)
    if args.chains < 1 or args.warmup < 0 or args.samples < 1:
        p.error("need chains >= 1, warmup >= 0, samples >= 1")
    return args


def _finite_or_none(x):
    x = float(x)
    return x if math.isfinite(x) else None


def main(argv=None):
    args = _parse_args(argv)

    # Must happen before JAX is imported.
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    if args.chain_method == "parallel":
        flag = f"--xla_force_host_platform_device_count={args.chains}"
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flag).strip()

    import numpy as np

    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax import random

    import arviz as az
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import HMC, HMCECS, MCMC, NUTS, SVI, Trace_ELBO, init_to_value
    from numpyro.infer.autoguide import AutoDelta

    # --- compile-time bookkeeping via jax.monitoring -------------------------
    compile_events = {
        "/jax/core/compile/jaxpr_trace_duration": "trace",
        "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
        "/jax/core/compile/backend_compile_duration": "xla_compile",
    }
    compile_acc = {"trace": 0.0, "lower": 0.0, "xla_compile": 0.0, "n_xla_compiles": 0}
    recording = {"on": False}

    def _on_duration(event, duration, **kwargs):
        key = compile_events.get(event)
        if key is not None and recording["on"]:
            compile_acc[key] += float(duration)
            if key == "xla_compile":
                compile_acc["n_xla_compiles"] += 1

    jax.monitoring.register_event_duration_secs_listener(_on_duration)

    # --- data ----------------------------------------------------------------
    t_load = time.perf_counter()
    with np.load(args.data) as f:
        X = np.asarray(f["X"], dtype=np.float64)
        y = np.asarray(f["y"], dtype=np.float64).reshape(-1)
        prior_scale = float(f["prior_scale"])
        intercept = bool(int(f["intercept"])) if "intercept" in f.files else False
        intercept_prior_scale = (
            float(f["intercept_prior_scale"]) if intercept else None
        )
        n_classes = int(f["n_classes"]) if "n_classes" in f.files else 2
        grouped = "group" in f.files
        if grouped:
            group = np.asarray(f["group"], dtype=np.int64)
            n_groups = int(f["n_groups"])
            term_columns = np.asarray(f["term_columns"], dtype=np.int64)
            group_sd_scales = np.asarray(f["group_sd_scales"], dtype=np.float64)
            weight_scales = np.asarray(f["weight_scales"], dtype=np.float64)
            x_mean = np.asarray(f["x_mean"], dtype=np.float64)
            centred_effects = bool(int(f["centred"])) if "centred" in f.files else False
            correlated = bool(int(f["correlated"])) if "correlated" in f.files else False
    load_seconds = time.perf_counter() - t_load

    # ---- timed window starts: everything up to the end of sampling ----------
    recording["on"] = True
    t0 = time.perf_counter()

    if X.ndim != 2 or y.shape[0] != X.shape[0]:
        raise ValueError(f"bad shapes X{X.shape} y{y.shape}")
    if intercept:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    N, D = X.shape
    scales = np.full(D, prior_scale)
    if intercept:
        scales[-1] = intercept_prior_scale

    X_j = jnp.asarray(X)
    y_j = jnp.asarray(y)
    scales_j = jnp.asarray(scales)

    def model(X, y, scales, subsample_size=None):
        w = numpyro.sample("w", dist.Normal(jnp.zeros_like(scales), scales).to_event(1))
        with numpyro.plate("N", X.shape[0], subsample_size=subsample_size):
            Xb = numpyro.subsample(X, event_dim=1)
            yb = numpyro.subsample(y, event_dim=0)
            numpyro.sample("obs", dist.Bernoulli(logits=Xb @ w), obs=yb)

    def softmax_model(X, y, scales, subsample_size=None):
        block_scales = jnp.broadcast_to(scales, (n_classes, scales.shape[0]))
        w = numpyro.sample("w", dist.Normal(jnp.zeros_like(block_scales), block_scales)
                           .to_event(2))
        with numpyro.plate("N", X.shape[0], subsample_size=subsample_size):
            Xb = numpyro.subsample(X, event_dim=1)
            yb = numpyro.subsample(y, event_dim=0)
            numpyro.sample("obs", dist.Categorical(logits=Xb @ w.T), obs=yb.astype(jnp.int32))

    if grouped:
        if args.method != "nuts" or not intercept:
            raise ValueError("the grouped model runs with --method nuts and an intercept")
        group_j = jnp.asarray(group)
        # Each term's variable: ones for the intercept, else the slope's column.
        term_values = jnp.asarray(np.stack([np.ones(N) if c < 0 else X[:, c]
                                            for c in term_columns]))
        n_terms = len(term_columns)

        def grouped_model(X, y, scales, subsample_size=None):
            w = numpyro.sample("w", dist.Normal(jnp.zeros(D - 1), weight_scales).to_event(1))
            centred = numpyro.sample("c", dist.Normal(0.0, intercept_prior_scale))
            numpyro.deterministic("b", centred - jnp.dot(x_mean, w))
            sd = numpyro.sample("sd", dist.HalfNormal(group_sd_scales).to_event(1))
            if correlated:
                factor = numpyro.sample("L", dist.LKJCholesky(n_terms, 2.0))
                numpyro.deterministic("R", factor @ factor.T)
                if centred_effects:
                    rows = numpyro.sample("u_rows", dist.MultivariateNormal(
                        jnp.zeros(n_terms), scale_tril=sd[:, None] * factor)
                        .expand([n_groups]).to_event(1))
                    effects = numpyro.deterministic("u", rows.T)
                else:
                    z = numpyro.sample("z", dist.Normal(0.0, 1.0).expand([n_terms, n_groups])
                                       .to_event(2))
                    effects = numpyro.deterministic("u", sd[:, None] * (factor @ z))
            elif centred_effects:
                effects = numpyro.sample("u", dist.Normal(jnp.zeros((n_terms, n_groups)),
                                                          sd[:, None]).to_event(2))
            else:
                z = numpyro.sample("z", dist.Normal(0.0, 1.0).expand([n_terms, n_groups])
                                   .to_event(2))
                effects = numpyro.deterministic("u", sd[:, None] * z)
            eta = (X[:, :-1] @ w + centred - jnp.dot(x_mean, w)
                   + jnp.sum(effects[:, group_j] * term_values, axis=0))
            numpyro.sample("obs", dist.Bernoulli(logits=eta), obs=y)

        model = grouped_model
    if n_classes > 2:
        if args.method != "nuts":
            raise ValueError("the softmax model runs with --method nuts only")
        model = softmax_model

    rng = random.key(args.seed)
    ref_key, mcmc_key = random.split(rng)
    extra = {}
    svi_seconds = None

    if args.method == "nuts":
        kernel = NUTS(model, dense_mass=args.dense_mass, target_accept_prob=args.target_accept)
        model_args = (X_j, y_j, scales_j, None)
        extra_fields = ("num_steps", "diverging", "accept_prob")
    else:
        m = int(args.subsample)
        if not 1 <= m <= N:
            raise ValueError(f"--subsample must be in [1, N={N}]")
        # Reference point: MAP by SVI with an AutoDelta guide on the
        # subsampled model (NumPyro examples/hmcecs.py, run_hmcecs()).
        t_svi = time.perf_counter()
        guide = AutoDelta(model)
        svi = SVI(model, guide, numpyro.optim.Adam(step_size=args.svi_lr), loss=Trace_ELBO())
        svi_result = svi.run(
            ref_key, args.svi_steps, X_j, y_j, scales_j, m, progress_bar=False
        )
        ref_w = jax.block_until_ready(svi_result.params["w_auto_loc"])
        svi_seconds = time.perf_counter() - t_svi
        ref_params = {"w": ref_w}
        losses = np.asarray(svi_result.losses)
        tail = losses[-max(1, len(losses) // 10):]
        extra["svi_final_loss_mean_last10pct"] = _finite_or_none(tail.mean())

        # Kernel as in NumPyro examples/covtype.py (algo="HMCECS").
        inner_cls = NUTS if args.inner == "nuts" else HMC
        inner_kwargs = dict(dense_mass=args.dense_mass, target_accept_prob=args.target_accept)
        if args.init_at_reference:
            inner_kwargs["init_strategy"] = init_to_value(values=ref_params)
        inner = inner_cls(model, **inner_kwargs)
        kernel = HMCECS(inner, num_blocks=args.num_blocks, proxy=HMCECS.taylor_proxy(ref_params))
        model_args = (X_j, y_j, scales_j, m)
        extra_fields = (
            "hmc_state.num_steps",
            "hmc_state.diverging",
            "hmc_state.accept_prob",
            "accept_prob",
        )

    mcmc = MCMC(
        kernel,
        num_warmup=args.warmup,
        num_samples=args.samples,
        num_chains=args.chains,
        chain_method=args.chain_method,
        progress_bar=False,
    )
    t_mcmc = time.perf_counter()
    mcmc.run(mcmc_key, *model_args, extra_fields=extra_fields)
    samples = jax.block_until_ready(mcmc.get_samples(group_by_chain=True))
    if grouped:
        effects = samples["u"]
        draws = jnp.concatenate([samples["w"], samples["b"][..., None],
                                 effects.reshape(*effects.shape[:2], -1), samples["sd"]]
                                + ([jnp.stack([samples["R"][..., i, j]
                                               for i in range(1, n_terms) for j in range(i)],
                                              axis=-1)] if correlated else []),
                                axis=-1)
    else:
        draws = samples["w"]
    fields = jax.block_until_ready(mcmc.get_extra_fields(group_by_chain=False))
    t_end = time.perf_counter()
    recording["on"] = False
    # ---- timed window ends --------------------------------------------------

    wall_seconds = t_end - t0
    mcmc_seconds = t_end - t_mcmc
    compile_seconds = compile_acc["trace"] + compile_acc["lower"] + compile_acc["xla_compile"]

    draws = np.asarray(draws)  # (chains, samples, D), or (chains, samples, K, D)
    if n_classes > 2:
        draws = draws - draws.mean(axis=2, keepdims=True)
    if args.draws_out:
        np.save(args.draws_out, draws)
    if n_classes > 2:
        draws = draws.reshape(*draws.shape[:2], -1)
    C, S, D = draws.shape
    ds = az.convert_to_dataset({"w": draws})
    ess_bulk = np.asarray(az.ess(ds, method="bulk")["w"].values)
    ess_tail = np.asarray(az.ess(ds, method="tail")["w"].values)
    rhat = np.asarray(az.rhat(ds)["w"].values)
    flat = draws.reshape(C * S, D)
    mean = flat.mean(axis=0)
    sd = flat.std(axis=0, ddof=1)

    if args.method == "nuts":
        num_steps = np.asarray(fields["num_steps"], dtype=np.float64)
        diverging = np.asarray(fields["diverging"])
        accept = np.asarray(fields["accept_prob"])
        mean_steps = float(num_steps.mean())
        rows_per_iteration = N * mean_steps
        rows_note = "N * mean leapfrog steps (= gradient evaluations) per sampling iteration"
        extra["mean_subsample_accept_prob"] = None
    else:
        num_steps = np.asarray(fields["hmc_state.num_steps"], dtype=np.float64)
        diverging = np.asarray(fields["hmc_state.diverging"])
        accept = np.asarray(fields["hmc_state.accept_prob"])
        sub_accept = float(np.asarray(fields["accept_prob"]).mean())
        mean_steps = float(num_steps.mean())
        rows_per_iteration = args.subsample * (mean_steps + sub_accept)
        rows_note = (
            "subsample * (mean leapfrog steps + mean subsample acceptance probability): "
            "subsample rows whose gradient is evaluated per sampling iteration; not counted: "
            "one value-only subsample evaluation per iteration for the subsample MH test, "
            "and the Taylor proxy's O(D^2) work per subsample row"
        )
        extra["mean_subsample_accept_prob"] = sub_accept
        extra["num_blocks"] = args.num_blocks
        extra["inner_kernel"] = args.inner
        extra["init_at_reference"] = bool(args.init_at_reference)
        extra["svi_steps"] = args.svi_steps
        extra["svi_lr"] = args.svi_lr
        extra["reference_w"] = np.asarray(ref_w).tolist()
        # How far the Taylor expansion point is from the posterior, per weight,
        # in posterior standard deviations (a diagnostic, computed afterwards).
        extra["reference_max_abs_z"] = _finite_or_none(
            np.max(np.abs(np.asarray(ref_w) - mean) / sd)
        )

    min_ess_bulk = float(np.min(ess_bulk))
    result = {
        "method": args.method,
        "settings": {
            "data": os.path.abspath(args.data),
            "N": int(N),
            "D": int(D),
            "intercept_appended": bool(intercept),
            "prior_scale": prior_scale,
            "intercept_prior_scale": intercept_prior_scale,
            "chains": args.chains,
            "warmup": args.warmup,
            "samples": args.samples,
            "seed": args.seed,
            "dense_mass": bool(args.dense_mass),
            "chain_method": args.chain_method,
            "target_accept_prob": args.target_accept,
            "subsample": args.subsample if args.method == "hmcecs" else None,
            "float64": bool(jax.config.jax_enable_x64),
            "jax_backend": jax.default_backend(),
            "jax_device_count": jax.device_count(),
            "cpu_count": os.cpu_count(),
        },
        "wall_seconds": wall_seconds,
        "wall_includes": (
            "from arrays read from the npz (load excluded) to all samples ready: "
            "setup, host-to-JAX transfer, JIT trace/compile, "
            + ("SVI/MAP reference fit and proxy setup, " if args.method == "hmcecs" else "")
            + "warm-up and sampling; diagnostics excluded"
        ),
        "load_seconds": load_seconds,
        "compile_seconds": compile_seconds,
        "compile_breakdown": compile_acc,
        "compile_note": "JAX-reported tracing + lowering + XLA compile time within the wall window",
        "svi_seconds": svi_seconds,
        "mcmc_seconds": mcmc_seconds,
        "n_draws_total": int(C * S),
        "min_ess_bulk": min_ess_bulk,
        "min_ess_tail": float(np.min(ess_tail)),
        "min_ess_bulk_per_second": min_ess_bulk / wall_seconds,
        "max_rhat": _finite_or_none(np.max(rhat)),
        "ess_bulk": ess_bulk.tolist(),
        "ess_tail": ess_tail.tolist(),
        "rhat": rhat.tolist(),
        "mean": mean.tolist(),
        "sd": sd.tolist(),
        "rows_per_iteration": rows_per_iteration,
        "rows_per_iteration_note": rows_note,
        "mean_num_steps": mean_steps,
        "num_divergent": int(diverging.sum()),
        "mean_accept_prob": float(accept.mean()),
        **extra,
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "jax": jax.__version__,
            "jaxlib": getattr(__import__("jaxlib"), "__version__", None),
            "numpyro": numpyro.__version__,
            "arviz": az.__version__,
        },
    }

    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=1)

    rhat_txt = "nan" if result["max_rhat"] is None else f"{result['max_rhat']:.4f}"
    print(
        f"{args.method}{' dense' if args.dense_mass else ''} N={N} D={D} chains={C} "
        f"draws={C * S} wall={wall_seconds:.1f}s compile={compile_seconds:.1f}s "
        f"min_ess_bulk={min_ess_bulk:.0f} min_ess_tail={result['min_ess_tail']:.0f} "
        f"ess/s={result['min_ess_bulk_per_second']:.2f} max_rhat={rhat_txt} "
        f"rows/iter={rows_per_iteration:.4g} steps/iter={mean_steps:.2f} "
        f"divergent={result['num_divergent']}",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
