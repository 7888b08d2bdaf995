"""Small kernels shared by the samplers: numerically stable scalar helpers, a discrete draw,
and row prefetching."""
import math

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from ._jit import jit


@jit(inline="always")
def log_sigmoid(x):
    """``log(1 / (1 + exp(-x)))`` without overflow."""
    if x >= 0.0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


@jit
def log_expm1(d):
    """``log(exp(d) - 1)`` for ``d >= 0`` (``-inf`` at ``d <= 0``)."""
    if d <= 0.0:
        return -math.inf
    return d + math.log(-math.expm1(-d))


@jit
def sample_discrete(support, cdf, rng):
    """One draw from the discrete distribution with points ``support`` and cumulative
    weights ``cdf`` (non-decreasing, last entry 1)."""
    u = rng.random()
    lo = 0
    hi = cdf.shape[0] - 1
    while lo < hi:  # first j with cdf[j] > u
        mid = (lo + hi) // 2
        if cdf[mid] > u:
            hi = mid
        else:
            lo = mid + 1
    return support[lo]


#: Bytes in a cache line (x86-64 and most ARM cores).
CACHE_LINE = 64
#: Lines of a row that ``prefetch_row`` requests: the first 256 bytes start the page walk and
#: the hardware streamer, which then fetches the rest of the row; requesting every line of a
#: 6 KB row at once fills the miss queues and stalls the arithmetic it should overlap with
#: (measured in ``benchmarks/perf/minibatch_speed.py``).
PREFETCH_LINES = 4


@intrinsic
def _prefetch(typingctx, address):
    """LLVM's ``prefetch`` (read, keep in all cache levels) of the byte at ``address``."""
    def codegen(context, builder, signature, args):
        pointer = builder.inttoptr(args[0], ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        # declare_intrinsic mangles the pointer type as this LLVM names it (p0 or p0i8).
        function = builder.module.declare_intrinsic(
            "llvm.prefetch", [pointer.type],
            ir.FunctionType(ir.VoidType(), [pointer.type, i32, i32, i32]))
        read, keep, data = ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)
        builder.call(function, [pointer, read, keep, data])
        return context.get_dummy_value()
    return types.void(types.uintp), codegen


@intrinsic
def integer(typingctx, value):
    """``value``, an integer constant or variable, as a plain ``int64``: a helper called
    with ``integer(0)`` and with a variable compiles once, not once more for the constant
    (numba compiles a function for a literal integer argument apart)."""
    if not isinstance(types.unliteral(value), types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return context.cast(builder, args[0], signature.args[0], types.int64)
    return types.int64(value), codegen


@intrinsic
def flag(typingctx, value):
    """``value``, a boolean constant or variable, as a plain ``bool``: a helper called with
    ``flag(True)`` and ``flag(False)`` compiles once, not once for each constant (numba
    specialises a function on every literal boolean it is called with, which cost a chain
    loop's first compilation about a fifth of its time); its branch on the flag costs
    nothing the processor does not predict."""
    if not isinstance(types.unliteral(value), types.Boolean):
        return None

    def codegen(context, builder, signature, args):
        return context.cast(builder, args[0], signature.args[0], types.boolean)
    return types.boolean(value), codegen


@jit(inline="always")
def prefetch_row(data, i):
    """Ask the CPU to start loading row ``i`` of the 2-D array ``data`` (its first
    ``PREFETCH_LINES`` cache lines) into cache, without waiting.

    Random minibatch rows defeat the hardware prefetcher; asking for the next rows while
    the likelihood of the current one is computed overlaps memory latency with arithmetic.
    Only a hint: it changes no value.
    """
    start = data[i].ctypes.data
    for offset in range(0, min(data.shape[1] * data.itemsize, PREFETCH_LINES * CACHE_LINE),
                        CACHE_LINE):
        _prefetch(start + offset)


@jit(inline="always")
def prefetch_values(values, p):
    """:func:`prefetch_row` for the 1-D ``values`` from entry ``p`` on (a sparse row's)."""
    if p < values.shape[0]:
        start = values[p:].ctypes.data
        for offset in range(0, PREFETCH_LINES * CACHE_LINE, CACHE_LINE):
            _prefetch(start + offset)


@jit
def lower_solve(lower, vector, out):
    """``out = lower^{-1} vector`` for a lower-triangular ``lower``."""
    for a in range(vector.shape[0]):
        total = vector[a]
        for b in range(a):
            total -= lower[a, b] * out[b]
        out[a] = total / lower[a, a]


def _view_without_handle(context, builder, signature, args):
    """Code of a view of ``args[0]`` (same data, shape, strides) typed ``signature``'s return
    type, without a memory-manager handle."""
    source = make_array(signature.args[0])(context, builder, value=args[0])
    view = make_array(signature.return_type)(context, builder)
    populate_array(view, data=source.data, shape=source.shape, strides=source.strides,
                   itemsize=source.itemsize, meminfo=None)
    return view._getvalue()


@intrinsic
def borrow(typingctx, array):
    """A view of ``array`` (same data, shape and strides) without numba's memory-manager
    handle, so that passing it around costs no reference counting.

    The entry kernels borrow the arrays Python passes in (alive in the caller for the whole
    call), and the loops borrow their scratch arrays, keeping the owners alive to the end
    with :func:`keep_alive`. Without this, every call through a function pointer, and every
    non-inlined call given an array taken from a tuple, paid an atomic increment and
    decrement per array (~25 ns, more than a row's arithmetic).
    """
    return array(array), _view_without_handle


@intrinsic
def borrow_for_user(typingctx, array):
    """:func:`borrow`, typed writable: for a read-only array (the control variates' centre)
    that the kernels hand to a user's function, whose first-class type takes a writable
    ``theta`` (numba matches a function pointer's argument types exactly). The user's
    functions only read ``theta``; nothing writes through this view."""
    return array.copy(readonly=False)(array), _view_without_handle


@intrinsic
def borrow_read_only(typingctx, array):
    """:func:`borrow`, typed read-only: for a scratch array the kernels fill and hand to a
    model's function whose first-class type takes a read-only array (numba matches a
    function pointer's argument types exactly)."""
    return array.copy(readonly=True)(array), _view_without_handle


@jit
def keep_alive(owners):
    """A use of ``owners`` (arrays whose borrowed views a kernel is still using): called last,
    it keeps numba from freeing them earlier."""
    return None


@jit(inline="always")
def borrow_workspace(work):
    """:func:`borrow` each of the five scratch arrays of ``rows.make_workspace``."""
    return (borrow(work[0]), borrow(work[1]), borrow(work[2]), borrow(work[3]), borrow(work[4]))


@jit(inline="always")
def copy_into(out, values):
    """``out[:] = values`` for 1-D arrays of one length, as a loop: numba's slice assignment
    from an array compiles a formatted shape-mismatch message (its string machinery, a few
    seconds of every kernel's compilation) that equal lengths never need."""
    for j in range(values.shape[0]):
        out[j] = values[j]


@intrinsic
def address_of(typingctx, value, kind):
    """The address of a copy of ``value`` kept on the stack of the function this is compiled
    into (after inlining: the entry kernel), valid until that function returns. A large
    tuple passes through function pointers as this one pointer, read back with a reader of
    :func:`value_at`; ``value`` must be of the numba type ``kind`` the reader reads (a
    compile-time check: another type would be misread)."""
    if value != kind.instance_type:
        raise TypingError(f"address_of: a value of type {value} where {kind.instance_type} "
                          f"is read")

    def codegen(context, builder, signature, args):
        slot = cgutils.alloca_once_value(builder, args[0])
        return builder.bitcast(slot, cgutils.voidptr_t)
    return types.voidptr(value, kind), codegen


@intrinsic
def store_at(typingctx, buffer, value, kind):
    """Store ``value`` (of the numba type ``kind``, checked when compiling) in the bytes of
    the 1-D uint8 array ``buffer``, whose length must be at least :func:`stored_size`
    ``(kind)``: read back at :func:`data_address` ``(buffer)`` with a reader of
    :func:`value_at`."""
    if value != kind.instance_type:
        raise TypingError(f"store_at: a value of type {value} where {kind.instance_type} "
                          f"is read")

    def codegen(context, builder, signature, args):
        data = make_array(signature.args[0])(context, builder, value=args[0]).data
        builder.store(args[1], builder.bitcast(data, args[1].type.as_pointer()))
        return context.get_dummy_value()
    return types.void(buffer, value, kind), codegen


@intrinsic
def data_address(typingctx, buffer):
    """The address of the first byte of the array ``buffer``."""
    def codegen(context, builder, signature, args):
        data = make_array(signature.args[0])(context, builder, value=args[0]).data
        return builder.bitcast(data, cgutils.voidptr_t)
    return types.voidptr(buffer), codegen


def stored_size(kind):
    """Bytes that :func:`store_at` writes for a value of the numba type ``kind``."""
    from numba.core.registry import cpu_target

    context = cpu_target.target_context
    return context.get_abi_sizeof(context.get_value_type(kind))


def value_at(kind, index=None):
    """A jitted reader ``read(address)`` of the value of numba type ``kind`` (a tuple)
    stored at an address from :func:`address_of` (or :func:`data_address`), or of its entry
    ``index`` alone (one load of what the reader uses, not of the whole tuple)."""
    result = kind if index is None else kind.types[index]

    @intrinsic
    def read(typingctx, address):
        def codegen(context, builder, signature, args):
            pointer = builder.bitcast(args[0], context.get_value_type(kind).as_pointer())
            if index is not None:
                pointer = cgutils.gep_inbounds(builder, pointer, 0, index)
            return builder.load(pointer)
        return result(types.voidptr), codegen
    return read


def function_at(kind):
    """A jitted ``make(c_address, jit_address) -> function`` giving a first-class function of
    numba type ``kind`` (a ``types.FunctionType``) from its compiled addresses
    (``_jit.function_addresses``): what numba builds when Python passes a jitted function,
    without the tens of microseconds per function and per call that numba's conversion
    takes. ``jit_address`` (0: none) is the faster entry that numba's own calls use."""
    @intrinsic
    def make(typingctx, c_address, jit_address):
        def codegen(context, builder, signature, args):
            function = cgutils.create_struct_proxy(kind)(context, builder)
            fields = context.data_model_manager[kind]._fields
            pointer = context.get_value_type(types.voidptr)
            setattr(function, fields[0], builder.inttoptr(args[0], pointer))
            if "jit_addr" in fields:
                function.jit_addr = builder.inttoptr(args[1], pointer)
            return function._getvalue()
        return kind(types.int64, types.int64), codegen
    return make
