"""A fit's target (its data) sent to Ray's workers once, not once per chain and per round.

The chains' calls reach Ray's workers through its object store. Pickled as it is, a
:class:`~skbayes_mh.sampling.Target` travels inside every round's arguments, and every
chain's result brings a copy back (its sampler holds the target), which the next round then
sends again: a default fit of 10^7 x 10 rows (800 MB) peaked at 7.3 GB in the calling
process and 4.2 GB in each of two workers. Within :func:`sending_targets_once`, a target
pickled in this thread goes instead as a handle: a token and the reference of one copy put
in the store the first time (its arrays are read there as zero-copy views). A worker
resolves the handle to that copy (once per process while it is in use), and its results
send the same handle back, which resolves here to the original target: the data cross once
per fit. The copy in the store is released when the outermost :func:`sharing_scope` (a fit)
ends."""
import contextlib
import threading
import uuid
import weakref

_local = threading.local()
#: Targets this process put in the store, by token (a handle coming back resolves to them).
_PUT_HERE = weakref.WeakValueDictionary()
#: Targets this process received through a handle, by token, while they are in use.
_RECEIVED = weakref.WeakValueDictionary()
#: A target's attribute caching its kernel tuples (addresses in this process; never sent).
KERNEL_TUPLES = "_kernel_tuples"


@contextlib.contextmanager
def sharing_scope():
    """The targets put in the store within (by :func:`sending_targets_once`, in this
    thread) stay there until the outermost scope ends: a fit's rounds of chains send its
    data once."""
    scopes = _local.__dict__.setdefault("scopes", [])
    scopes.append([])
    try:
        yield
    finally:
        for target in scopes.pop():
            handle = target.__dict__.pop("_put", None)
            if handle is not None:
                _PUT_HERE.pop(handle[0], None)


@contextlib.contextmanager
def sending_targets_once():
    """Targets pickled in this thread within go as handles to one copy in Ray's object
    store (``ray.init`` must have run)."""
    previous = getattr(_local, "sending", False)
    _local.sending = True
    try:
        with sharing_scope():
            yield
    finally:
        _local.sending = previous


def reduce_target(target):
    """``Target.__reduce__``: a handle for a target received through one (a worker's
    result) or sent within :func:`sending_targets_once`; otherwise its fields, as a
    dataclass pickles (without any handle)."""
    handle = target.__dict__.get("_received")
    if handle is None and getattr(_local, "sending", False):
        handle = target.__dict__.get("_put") or _put(target)
    if handle is not None:
        return _resolve, handle
    state = {key: value for key, value in target.__dict__.items()
             if key not in ("_put", "_received", KERNEL_TUPLES)}
    return _rebuild, (type(target), state)


def _put(target):
    import ray

    _local.sending = False  # the copy in the store holds the arrays themselves
    try:
        handle = (uuid.uuid4().hex, ray.put(target))
    finally:
        _local.sending = True
    target.__dict__["_put"] = handle
    _PUT_HERE[handle[0]] = target
    _local.scopes[0].append(target)
    return handle


def _rebuild(cls, state):
    target = cls.__new__(cls)
    target.__dict__.update(state)
    return target


def _resolve(token, reference):
    target = _PUT_HERE.get(token)
    if target is None:
        target = _RECEIVED.get(token)
    if target is None:
        import ray

        target = ray.get(reference)
        target.__dict__["_received"] = (token, reference)
        _RECEIVED[token] = target
    return target
