"""Temperature schedules: a chain's temperature, piecewise constant over its iterations.

A schedule is a sequence of ``(iteration, K)`` pairs: temperature ``K`` from that iteration
on (counting every iteration of the chain from its first, warm-up included), the first at
iteration 0. ``[(0, 100.0), (400, 1.0)]`` runs 400 iterations at temperature 100, then
the rest at 1 (Seita et al.'s Figure 3: the tempered posterior is flatter, so a chain
crosses it faster, and the exact one is sampled once the temperature has dropped).
"""
import numbers

import numpy as np

from .._validation import check_scalar


def check_temperature(temperature, min_temperature):
    """Validate ``temperature``: a number ``K >= min_temperature``, or a schedule.

    Returns
    -------
    final : float
        The temperature of the last iterations (a number's own value).
    schedule : tuple of (int, float) or None
        The schedule's pairs, or None for a number.
    """
    if isinstance(temperature, numbers.Real) and not isinstance(temperature, bool):
        return _checked_value(temperature, min_temperature, "temperature"), None
    if isinstance(temperature, (str, bytes, dict)) or not hasattr(temperature, "__iter__"):
        raise TypeError(f"temperature must be a number or a schedule, a sequence of "
                        f"(iteration, temperature) pairs such as [(0, 100.0), (400, 1.0)]; "
                        f"got {temperature!r}.")
    pairs = []
    for k, pair in enumerate(temperature):
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise ValueError(f"temperature schedule entry {k} must be an (iteration, "
                             f"temperature) pair; got {pair!r}.")
        start, value = pair
        if (isinstance(start, bool) or not isinstance(start, numbers.Integral)
                or start < 0):
            raise ValueError(f"temperature schedule entry {k}: the iteration must be an "
                             f"integer >= 0; got {start!r}.")
        pairs.append((int(start), _checked_value(value, min_temperature,
                                                 f"temperature schedule entry {k}")))
    if not pairs:
        raise ValueError("the temperature schedule is empty: give at least (0, temperature).")
    if pairs[0][0] != 0:
        raise ValueError(f"the temperature schedule must start at iteration 0; its first "
                         f"entry is {pairs[0]}.")
    starts = [start for start, _ in pairs]
    if any(b <= a for a, b in zip(starts, starts[1:])):
        raise ValueError(f"the temperature schedule's iterations must increase strictly; "
                         f"got {starts}.")
    return pairs[-1][1], tuple(pairs)


def _checked_value(value, min_temperature, name):
    return float(check_scalar(value, name, numbers.Real, min_temperature))


class TemperatureSchedule:
    """Runs a sampler's iterations under a schedule (see the module's docstring).

    The sampler (:class:`~skbayes_mh.sampling.MetropolisHastings` or Firefly's) keeps it
    in ``schedule`` and hands its ``run`` calls here: each run is cut where the temperature
    changes, the sampler's ``inv_temperature`` is set for each piece, and what the state
    caches under the old temperature (the log target's gradient, Firefly's pseudo-posterior)
    is forgotten at a change. The count of iterations run lives here, so a chain continued
    later (``warm_start``) goes on from where it stopped.

    Parameters
    ----------
    schedule : tuple of (int, float)
        From :func:`check_temperature`.
    rescale_step : bool, default=False
        At each change, multiply the proposal's step (``sampler.scale``, up to its largest)
        by ``sqrt(K_new / K_old)``: a posterior the data dominate has sds proportional to
        ``sqrt(K)``, and so has the best step. For a step the warm-up tunes on (an
        estimator's ``step_size="auto"``), which goes on from there; not for pCN, whose
        scale is an innovation share around a fixed reference, nor for a step the user set.
    """

    def __init__(self, schedule, rescale_step=False):
        self.starts = np.array([start for start, _ in schedule], dtype=np.int64)
        self.temperatures = np.array([value for _, value in schedule], dtype=np.float64)
        self.rescale_step = bool(rescale_step)
        self.iteration = 0

    @property
    def last_change(self):
        """The first iteration at the final temperature."""
        return int(self.starts[-1])

    def temperature_at(self, iteration):
        """The temperature of iteration ``iteration`` (0 is the chain's first)."""
        return float(self.temperatures[np.searchsorted(self.starts, iteration, "right") - 1])

    def run(self, sampler, state, n_iter, rng, where):
        parts = []
        while n_iter > 0 or not parts:
            piece = np.searchsorted(self.starts, self.iteration, "right") - 1
            n = n_iter
            if piece + 1 < self.starts.size:
                n = min(n, int(self.starts[piece + 1]) - self.iteration)
            inv_temperature = 1.0 / float(self.temperatures[piece])
            if inv_temperature != sampler.inv_temperature:
                # (At the first iteration, from the final temperature the step was set for.)
                if self.rescale_step and not sampler.proposal.around_reference:
                    ratio = sampler.inv_temperature / inv_temperature  # K_new / K_old
                    sampler.scale = float(min(sampler.scale * np.sqrt(ratio),
                                              sampler.max_scale))
                sampler.inv_temperature = inv_temperature
                sampler.invalidate(state)
            parts.append(sampler.run_iterations(state, n, rng, where))
            self.iteration += n
            n_iter -= n
        if len(parts) == 1:
            return parts[0]
        return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
