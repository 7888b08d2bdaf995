"""Chains side by side: one seed per chain drawn up front, chains in parallel on joblib's
active backend (threads of this process by default: the kernels release the GIL), and their
progress."""
import contextlib
import os
import signal
import sys
import tempfile
import threading
import time
import uuid

import joblib
import numpy as np
from joblib._parallel_backends import LokyBackend, SequentialBackend, ThreadingBackend
from joblib.parallel import get_active_backend
from sklearn.utils import check_random_state
from sklearn.utils.parallel import Parallel, delayed

from .._passes import in_threads, one_blas_thread, share_of_cores
from ._shared import sending_targets_once, sharing_scope


def chain_seeds(random_state, n_chains):
    """One integer seed per chain, drawn up front from ``random_state``: chain ``c`` gets the
    same stream whatever ``n_jobs`` is."""
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError(f"random_state must be an int, a numpy RandomState or None; got "
                        f"{random_state!r}.")
    return check_random_state(random_state).randint(0, 2**31 - 1, size=n_chains)


class WorkerLost:
    """In :func:`run_in_parallel`'s results, a task whose worker died under it (after the
    backend's own retries): ``error`` says how."""

    def __init__(self, error):
        self.error = error

    def __repr__(self):
        return f"WorkerLost({type(self.error).__name__}: {self.error})"


def run_in_parallel(function, arguments, n_jobs):
    """``[function(*a) for a in arguments]`` on joblib's active backend: by default (joblib's
    threading backend) in :func:`chain_jobs` threads of this process (:func:`_thread_tasks`).
    A ``joblib.parallel_config`` context (loky, Dask, Ray) overrides the backend without
    code changes.

    Under Dask or Ray each call is its own task, so that a worker that dies under one
    (after the backend's retries: Dask re-runs a task up to 3 times, Ray 3) loses that call
    only: its place holds a :class:`WorkerLost` (joblib would abandon every call, and with
    Dask wait for ever). On joblib's loky processes the calls that had not returned when a
    worker died run again (:func:`_loky_tasks`). An exception a call raises is raised here.
    """
    backend, _ = get_active_backend(prefer="threads")
    client = getattr(backend, "client", None)
    if client is not None and hasattr(client, "submit"):  # Dask's distributed scheduler
        return _dask_tasks(client, function, arguments)
    if type(backend).__name__ == "RayBackend":
        return _ray_tasks(function, arguments)
    with share_of_cores() as share:
        # One call needs no pool of threads (a fit of one chain, repeated in a loop).
        jobs = chain_jobs(n_jobs, share) if len(arguments) > 1 else 1
        together = jobs != 1 and joblib.effective_n_jobs(jobs) > 1
        # Chains side by side each call BLAS (a full-data pass's matrix products) with
        # BLAS's own threads: OpenBLAS's threads then wait on each other (MNIST 1 vs 7, two
        # chains: each 3 times slower than alone). One BLAS thread per chain instead.
        if not together:
            return [function(*a) for a in arguments]
        if isinstance(backend, LokyBackend):
            return _loky_tasks(function, arguments, jobs)
        with one_blas_thread():
            if isinstance(backend, ThreadingBackend):
                return _thread_tasks(function, arguments, joblib.effective_n_jobs(jobs))
            return Parallel(n_jobs=jobs, prefer="threads")(
                delayed(function)(*a) for a in arguments)


def _thread_tasks(function, arguments, jobs):
    """:func:`run_in_parallel` in ``jobs`` threads of this process (joblib's threading
    backend, the default), those of the process's shared pool (``_passes.in_threads``),
    whose results are waited for, not polled (joblib's threading backend looks for finished
    calls every 10 ms, and starts a pool of ``jobs`` + 3 threads: 16 ms of a 32 ms default
    fit of 30 rows, a scikit-learn check's or a small grid search's; a pool of its own a
    call took 4 to 8 ms a thread to start). The first exception a call raises, in the
    calls' order, is raised here, at once: the calls still running end in the background
    (a thread cannot be stopped; a second Ctrl-C, which raises KeyboardInterrupt here,
    leaves the chains to their stop signal)."""
    return in_threads(function, arguments, jobs)


#: On loky's processes, a call whose worker died under it this many times while it ran
#: alone is given up (Dask and Ray retry a task 3 times too).
LOKY_ATTEMPTS = 3


def _indexed_call(function, arguments, k):
    return k, function(*arguments)


def _loky_tasks(function, arguments, jobs):
    """:func:`run_in_parallel` on joblib's loky worker processes, keeping every call that
    returned when a worker dies: loky then ends its whole pool (``TerminatedWorkerError``)
    and joblib abandons every call. The calls that had not returned run again in a new
    pool: first together (a worker killed from outside, or out of memory once, costs one
    more run of what it stopped); after a second death one at a time, so that the call
    under which a worker dies is known, and a call under which it died
    :data:`LOKY_ATTEMPTS` times alone is given up: its place holds a :class:`WorkerLost`.
    A chain's draws depend only on its arguments (its seed), so a call run again returns
    what it would have the first time."""
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    pending = object()
    results = [pending] * len(arguments)
    deaths = [0] * len(arguments)
    for round_ in range(2 + LOKY_ATTEMPTS):  # two together, then each call alone
        missing = [k for k, result in enumerate(results) if result is pending]
        if not missing:
            break
        groups = [missing] if round_ < 2 else [[k] for k in missing]
        for group in groups:
            try:
                for k, value in Parallel(n_jobs=jobs, return_as="generator_unordered")(
                        delayed(_indexed_call)(function, arguments[k], k) for k in group):
                    results[k] = value
            except TerminatedWorkerError as error:
                if len(group) == 1:
                    deaths[group[0]] += 1
                    if deaths[group[0]] >= LOKY_ATTEMPTS:
                        results[group[0]] = WorkerLost(error)
    return results


def _call(function, arguments, k):
    """``function(*arguments[k])``: a task of :func:`run_in_parallel` on Ray, whose calls'
    arguments travel as one object in the node's object store, so that what they share (the
    data, under every chain's sampler) is sent and held once, not once per call; the store
    outlives any worker process."""
    return function(*arguments[k])


def _dask_tasks(client, function, arguments):
    # Each call's arguments in its task, which the scheduler holds: a call can be run again
    # whichever workers died (scattered arguments die with the workers that hold them).
    from distributed import KilledWorker

    _reach_stop_signals(arguments, "dask", client)
    futures = [client.submit(function, *a, pure=False) for a in arguments]
    return _gathered(futures, lambda future: future.result(), (KilledWorker,))


def _ray_tasks(function, arguments):
    import ray
    from ray import exceptions

    lost = tuple(getattr(exceptions, name) for name in (
        "WorkerCrashedError", "RayActorError", "NodeDiedError", "ObjectLostError",
        "OwnerDiedError") if hasattr(exceptions, name))
    task = ray.remote(_call)
    _reach_stop_signals(arguments, "ray")
    with sharing_scope():  # the results' targets resolve to the ones sent
        with sending_targets_once():
            everything = ray.put(list(arguments))
        references = [task.remote(function, everything, k) for k in range(len(arguments))]

        def get(reference):
            try:
                return ray.get(reference)
            except exceptions.RayTaskError as error:  # the call raised: raise that here
                raise error.as_instanceof_cause() from None

        return _gathered(references, get, lost)


def _reach_stop_signals(arguments, cluster, client=None):
    """:meth:`StopSignal.reach` the cluster for every stop signal among the calls'
    arguments."""
    for call_arguments in arguments:
        for value in call_arguments:
            if isinstance(value, StopSignal):
                value.reach(cluster, client)


def _gathered(tasks, get, lost):
    """``get(task)`` of each task in order; a :class:`WorkerLost` in the place of one whose
    ``get`` raised one of the exception types ``lost`` (its worker died)."""
    results = []
    for task in tasks:
        try:
            results.append(get(task))
        except lost as error:
            results.append(WorkerLost(error))
    return results


def chain_jobs(n_jobs, share):
    """``n_jobs`` for the chains: as given, except that ``None`` (the default) is ``share``
    and "all cores" (a negative ``n_jobs``, joblib's ``cpu_count() + 1 + n_jobs``) counts,
    where the chains run in threads of this process, only ``share`` of them
    (:func:`~skbayes_mh._passes.share_of_cores`: inside a joblib process worker, e.g.
    ``GridSearchCV(n_jobs=2)``, the worker's share; with two fits at once in threads, half
    of that each). The chains of one fit are independent and their results do not depend on
    the threads, so by default they run in parallel, as PyMC's and NumPyro's do."""
    if n_jobs is None:
        return share
    if n_jobs >= 0:
        return n_jobs
    if not runs_in_this_process():
        return n_jobs  # Dask, Ray, processes: their workers are the cores
    return max(1, min(joblib.cpu_count() + 1 + n_jobs, share))


def runs_in_this_process():
    """Whether :func:`run_in_parallel` runs its calls in this process (threads, or one
    after another), so that they can write into arrays handed to them (a Dask, Ray or
    process backend copies them)."""
    backend, _ = get_active_backend(prefer="threads")
    return isinstance(backend, (ThreadingBackend, SequentialBackend))


#: Without tqdm, the plain progress report prints a line each time this fraction more of
#: all the chains' iterations is done (about ten lines in all).
PLAIN_PROGRESS_STEP = 0.1


class Progress:
    """Progress of the chains: one tqdm bar per chain when tqdm is installed; otherwise a
    plain line each time another :data:`PLAIN_PROGRESS_STEP` of all iterations is done, with
    every chain's share; nothing when ``verbose`` is 0.

    Parameters
    ----------
    n_chains : int
    iterations : int
        Iterations per chain (warm-up and kept).
    verbose : int
    description : str

    Chain ``c`` reports through ``progress.chain(c)``, a callable ``(n_iterations)`` whose
    ``set_total(iterations)`` replaces that chain's total once it is known (``thin="auto"``
    chooses ``thin`` after the warm-up); the chains may report from different threads.
    """

    def __init__(self, n_chains, iterations, verbose, description):
        self.verbose = verbose
        self.iterations = max(int(iterations), 1)
        self.done = [0] * n_chains
        self.totals = [self.iterations] * n_chains
        self.description = description
        self.start = time.perf_counter()
        self.bars = []
        self.next_line = PLAIN_PROGRESS_STEP
        self.lock = threading.Lock()
        if verbose <= 0:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            print(f"{description}: {n_chains} chain{'s' if n_chains > 1 else ''} of "
                  f"{self.iterations} iterations (install tqdm for progress bars)", flush=True)
        else:
            self.bars = [tqdm(total=self.iterations, desc=f"{description} chain {c}",
                              position=c, leave=True) for c in range(n_chains)]

    def chain(self, c):
        """The progress callable of chain ``c`` (None when nothing is reported)."""
        if self.verbose <= 0:
            return None
        return _ChainProgress(self, c)

    def _advance(self, c, n):
        with self.lock:
            self.done[c] += n
            if self.bars:
                self.bars[c].update(n)
                return
            fraction = sum(self.done) / sum(self.totals)
            if fraction + 1e-12 < self.next_line:
                return
            while self.next_line <= fraction + 1e-12:
                self.next_line += PLAIN_PROGRESS_STEP
            shares = ", ".join(f"{min(done / total, 1.0):.0%}"
                               for done, total in zip(self.done, self.totals))
            print(f"{self.description}: {fraction:.0%} done in "
                  f"{time.perf_counter() - self.start:.1f} s (chains: {shares})", flush=True)

    def _set_total(self, c, iterations):
        with self.lock:
            self.totals[c] = max(int(iterations), 1)
            if self.bars:
                self.bars[c].total = self.totals[c]
                self.bars[c].refresh()

    def close(self):
        for bar in self.bars:
            bar.close()


class _ChainProgress:
    """``progress(n)`` for one chain. Sent to another process (a Dask or Ray joblib
    backend), it reports nothing there rather than failing to pickle the bars."""

    def __init__(self, progress, chain):
        self.progress, self.c = progress, chain

    def __call__(self, n):
        if self.progress is not None:
            self.progress._advance(self.c, n)

    def set_total(self, iterations):
        """The chain's iterations, warm-up and kept, once ``thin`` is known."""
        if self.progress is not None:
            self.progress._set_total(self.c, iterations)

    def extend(self, iterations):
        """The chain's total becomes what it has run and ``iterations`` more (a round of
        ``n_draws="auto"``)."""
        if self.progress is not None:
            self.progress._set_total(self.c, self.progress.done[self.c] + iterations)

    def __getstate__(self):
        return {"progress": None, "c": self.c}


#: A chain on a worker process asks the cluster (a Dask event, a Ray named actor) whether
#: Ctrl-C was pressed at most this often; the flag file is read every chunk.
REMOTE_CHECK_SECONDS = 0.5
#: Seconds a fit's end waits for the cluster to have been told to stop, before it
#: removes what it made there.
CLUSTER_TIMEOUT = 30.0


class StopSignal:
    """A ``threading.Event`` for the chains: ``set()``, ``is_set()``. Sent to another
    process (loky, Dask or Ray workers), it becomes one that watches a flag file, which
    this one creates when it is set: Ctrl-C reaches chains on this machine's worker
    processes between two chunks (a stat of one file a chunk), and they return their draws
    so far. Chains on another machine's Dask or Ray workers, which cannot see this
    machine's files, ask the cluster instead (:meth:`reach`: a Dask ``Event``, or a Ray
    actor by name, which :meth:`set` creates), at most every
    :data:`REMOTE_CHECK_SECONDS`. :meth:`close` removes the file and what the cluster
    holds."""

    def __init__(self):
        self._event = threading.Event()
        self._flag = None  # the flag file's path, chosen when first sent elsewhere
        self._lock = threading.RLock()  # the Ctrl-C handler may run while it is held
        self._name = None  # the cluster's name of this signal, once a cluster is reached
        self._clusters = {}  # "dask": its client, "ray": None (here only)
        self._held = []  # what set() made on the clusters, removed by close()
        self._signalling = None  # the thread that makes them

    def reach(self, cluster, client=None):
        """Reach the chains that ``cluster`` ("dask", with its ``client``, or "ray") runs,
        wherever its workers are: this signal, once set, is set there too."""
        with self._lock:
            if self._name is None:
                self._name = f"skbayes_mh-stop-{uuid.uuid4().hex}"
            if cluster not in self._clusters:
                self._clusters[cluster] = client
                if self._event.is_set():
                    self._signal_clusters([cluster])

    def set(self):
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            if self._flag is not None:
                _touch(self._flag)
            if self._clusters:
                # In a thread of its own: Ctrl-C's handler runs in the main thread, which
                # may be waiting inside the cluster's client.
                self._signalling = threading.Thread(
                    target=self._signal_clusters, args=(list(self._clusters),), daemon=True)
                self._signalling.start()

    def _signal_clusters(self, clusters):
        for cluster in clusters:
            try:
                self._held.append((cluster, _set_on_cluster(cluster, self._name,
                                                             self._clusters[cluster])))
            except Exception as error:  # noqa: BLE001 - the chains then run to their end
                print(f"skbayes_mh: could not tell the {cluster} workers to stop "
                      f"({type(error).__name__}: {error}); their chains run to their end.",
                      file=sys.stderr, flush=True)

    def is_set(self):
        if self._event is not None:
            return self._event.is_set()
        if self._seen or os.path.exists(self._flag):
            return True
        if self._name is not None and time.monotonic() >= self._next_check:
            self._next_check = time.monotonic() + REMOTE_CHECK_SECONDS
            self._seen = any(_set_on_cluster_seen(cluster, self._name)
                             for cluster in self._clusters)
        return self._seen

    def close(self):
        """Remove the flag file, if one was made, and what the clusters hold."""
        if self._event is None:
            return
        if self._flag is not None:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self._flag)
        if self._signalling is not None:
            self._signalling.join(CLUSTER_TIMEOUT)
        while self._held:
            cluster, held = self._held.pop()
            with contextlib.suppress(Exception):
                _clear_on_cluster(cluster, held)

    def __getstate__(self):
        if self._event is None:  # sent on from a worker
            return {"_flag": self._flag, "_name": self._name, "_clusters": self._clusters}
        with self._lock:
            if self._flag is None:
                self._flag = os.path.join(tempfile.gettempdir(),
                                          f"skbayes_mh-stop-{uuid.uuid4().hex}")
                if self._event.is_set():
                    _touch(self._flag)
            return {"_flag": self._flag, "_name": self._name,
                    "_clusters": dict.fromkeys(self._clusters)}

    def __setstate__(self, state):
        # The first question to the cluster after REMOTE_CHECK_SECONDS: a fit's short
        # rounds never ask (a Dask worker connects a client to the scheduler to ask).
        self.__dict__.update(state, _event=None, _lock=None, _held=[], _signalling=None,
                             _seen=False,
                             _next_check=time.monotonic() + REMOTE_CHECK_SECONDS)


def _touch(path):
    with open(path, "w"):
        pass


def _set_on_cluster(cluster, name, client):
    """Make the cluster's mark that the signal ``name`` is set; returns what to remove."""
    if cluster == "dask":
        from distributed import Event

        event = Event(name, client=client)
        event.set()
        return event
    return _ray_flag().options(name=name, num_cpus=0).remote()


def _set_on_cluster_seen(cluster, name):
    """On a worker: whether the cluster holds the mark of ``name`` (False when it cannot
    be asked)."""
    try:
        if cluster == "dask":
            from distributed import Event

            return Event(name).is_set()
        import ray

        ray.get_actor(name)
        return True
    except Exception:  # noqa: BLE001 - Ray says "no such actor" with a ValueError
        return False


def _clear_on_cluster(cluster, held):
    if cluster == "dask":
        held.clear()  # the scheduler forgets an event cleared with no waiters
    else:
        import ray

        ray.kill(held)


_RAY_FLAG = []


def _ray_flag():
    """A Ray actor class that holds nothing: its existence under a name is the mark."""
    if not _RAY_FLAG:
        import ray

        @ray.remote
        class StopMark:
            def ready(self):
                return True

        _RAY_FLAG.append(StopMark)
    return _RAY_FLAG[0]


@contextlib.contextmanager
def interruptible(description):
    """A :class:`StopSignal` that Ctrl-C sets while the block runs, instead of raising
    KeyboardInterrupt: chains check it between chunks (a fraction of a second) and return
    what they have. A second Ctrl-C raises KeyboardInterrupt at once. Outside the main thread
    (where signal handlers cannot be installed) the event is never set by Ctrl-C.
    """
    stop = StopSignal()
    try:
        with _stopped_by_ctrl_c(stop, description):
            yield stop
    finally:
        stop.close()


@contextlib.contextmanager
def _stopped_by_ctrl_c(stop, description):
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)

    def handler(signum, frame):
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        print(f"\n{description}: interrupted; the chains stop within a second and keep their "
              f"draws so far (Ctrl-C again to abort at once).", file=sys.stderr, flush=True)

    try:
        signal.signal(signal.SIGINT, handler)
    except ValueError:  # e.g. an embedded interpreter without signal support
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
