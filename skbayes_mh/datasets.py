"""Loaders for the real data sets the benchmarks and examples use.

Nothing is downloaded: each loader reads files from a directory you give it, e.g. the
official MNIST IDX files (gzip-compressed or not).
"""
import gzip
from pathlib import Path

import numpy as np

from ._docstrings import with_sections

_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_MNIST_FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
                "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


def read_idx(path):
    """Read an IDX file (the MNIST format), plain or ``.gz``.

    The header is two zero bytes, a type code, the number of dimensions, then one big-endian
    int32 per dimension; the data follow in C order.

    Parameters
    ----------
    path : str or Path
        The file; read through gzip when its name ends in ``.gz``.

    Returns
    -------
    ndarray
        Of the file's shape and type, in native byte order.

    Raises
    ------
    ValueError
        If the magic number is not an IDX one or the data size disagrees with the header.
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        raw = handle.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES:
        raise ValueError(f"{path} is not an IDX file (bad magic number).")
    n_dims = raw[3]
    shape = tuple(int(v) for v in np.frombuffer(raw, ">i4", count=n_dims, offset=4))
    dtype = np.dtype(_IDX_TYPES[raw[2]])
    offset = 4 + 4 * n_dims
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(raw) - offset != expected:
        raise ValueError(f"{path}: header says {shape} of {dtype}, but the file holds "
                         f"{len(raw) - offset} data bytes instead of {expected}.")
    return np.frombuffer(raw, dtype, offset=offset).reshape(shape).astype(dtype.newbyteorder("="))


def _find(directory, stem):
    for name in (stem + ".gz", stem):
        if (Path(directory) / name).exists():
            return Path(directory) / name
    raise FileNotFoundError(f"neither {stem}.gz nor {stem} is in {directory}.")


def load_mnist(directory, subset="train"):
    """Load MNIST from its four official IDX files in ``directory``.

    Parameters
    ----------
    directory : str or Path
        Folder holding the images and labels files of ``subset``, each gzip-compressed
        (``.gz``) or not.
    subset : {"train", "test"}, default="train"
        The training files (``train-*``) or the test files (``t10k-*``).

    Returns
    -------
    images : ndarray of shape (n, 784), uint8
        60,000 training or 10,000 test digits, 28x28 pixels flattened row by row.
    labels : ndarray of shape (n,), uint8
        The digit of each image.
    """
    if subset not in _MNIST_FILES:
        raise ValueError(f"subset must be 'train' or 'test'; got {subset!r}.")
    image_stem, label_stem = _MNIST_FILES[subset]
    images = read_idx(_find(directory, image_stem))
    labels = read_idx(_find(directory, label_stem))
    if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
        raise ValueError(f"MNIST files in {directory} disagree: images {images.shape}, "
                         f"labels {labels.shape}.")
    return images.reshape(images.shape[0], -1), labels


def mnist_pair(directory, digits, subset="train"):
    """The images of two digits as a binary problem, pixels scaled to [0, 1].

    Parameters
    ----------
    directory : str or Path
        Folder holding MNIST's IDX files (see :func:`load_mnist`).
    digits : pair of int
        The digits of class 0 and class 1, in that order.
    subset : {"train", "test"}, default="train"
        Which of MNIST's subsets to load.

    Returns
    -------
    X : ndarray of shape (n, 784), float64
    y : ndarray of shape (n,), int64: 1 for ``digits[1]``, 0 for ``digits[0]``.
    """
    images, labels = load_mnist(directory, subset)
    keep = np.isin(labels, digits)
    return images[keep] / 255.0, (labels[keep] == digits[1]).astype(np.int64)


#: Images of each digit 0, ..., 9 in MNIST's training and test sets.
MNIST_DIGIT_COUNTS = {"train": (5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949),
                      "test": (980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009)}


def make_mnist_like_pair(digits, subset="train", random_state=0):
    """Synthetic data with the shape of :func:`mnist_pair`'s, for when MNIST is absent.

    As many rows as MNIST has images of the two digits, in the same proportion, and 784
    "pixels" in [0, 1]: a pixel is nonzero (uniform intensity) with a probability around
    0.2 that differs between the two classes by a pixel's template, shared by the training
    and test subsets of one ``random_state``. The classes overlap about as much as 7 and 9
    do, on the pixels and on their principal components alike.

    Parameters
    ----------
    digits : pair of int
        The two digits (0 to 9), of class 0 and class 1: they set the class sizes.
    subset : {"train", "test"}, default="train"
        Whose sizes to copy; the classes' templates are shared by the two subsets.
    random_state : int, default=0
        Seed of the templates and of the rows.

    Returns
    -------
    X : ndarray of shape (n, 784), float64
    y : ndarray of shape (n,), int64: 1 for ``digits[1]``, 0 for ``digits[0]``.
    """
    if subset not in MNIST_DIGIT_COUNTS:
        raise ValueError(f"subset must be 'train' or 'test'; got {subset!r}.")
    if len(digits) != 2 or not all(0 <= int(d) <= 9 for d in digits):
        raise ValueError(f"digits must be two digits from 0 to 9; got {digits!r}.")
    n_first, n_second = (MNIST_DIGIT_COUNTS[subset][int(d)] for d in digits)
    template = np.random.default_rng(random_state).normal(scale=0.03, size=784)
    rng = np.random.default_rng([random_state, 1 + (subset == "test")])
    y = np.zeros(n_first + n_second, dtype=np.int64)
    y[rng.choice(y.size, n_second, replace=False)] = 1
    on = np.clip(0.2 + np.where(y[:, None] == 1, template, -template), 0.01, 0.99)
    X = rng.random((y.size, 784)) * (rng.random((y.size, 784)) < on)
    return X, y


def mnist_pair_or_synthetic(directory, digits, subset="train"):
    """:func:`mnist_pair` when ``directory`` holds MNIST's files, otherwise
    :func:`make_mnist_like_pair`: what the gallery's examples run on.

    Parameters
    ----------
    directory : str, Path or None
        Folder that may hold MNIST's IDX files; it is used when it holds the training
        images file (plain or ``.gz``). None: synthetic data.
    digits : pair of int
        The digits of class 0 and class 1, in that order.
    subset : {"train", "test"}, default="train"
        Which subset to load or imitate.

    Returns
    -------
    X : ndarray of shape (n, 784)
    y : ndarray of shape (n,)
    source : str
        ``"MNIST"`` or ``"synthetic data of MNIST's shape"``.
    """
    stem = _MNIST_FILES["train"][0]
    if directory is not None and any((Path(directory) / name).exists()
                                     for name in (stem, stem + ".gz")):
        return (*mnist_pair(directory, digits, subset), "MNIST")
    return (*make_mnist_like_pair(digits, subset), "synthetic data of MNIST's shape")


def _projection_sections(digits_entry, y_entry):
    """The numpydoc sections of the MNIST projections, with their own ``digits`` entry and
    description of ``y``."""
    return f"""Parameters
----------
directory : str or Path
    Folder holding MNIST's IDX files (see :func:`load_mnist`).
{digits_entry}
n_components : int, default=50
    Number of principal components kept.
subset : {{"train", "test"}}, default="train"
    Which of MNIST's subsets to load.

Returns
-------
X : ndarray of shape (n, n_components)
y : ndarray of shape (n,): {y_entry}
"""


@with_sections(_projection_sections("""digits : pair of int, default=(7, 9)
    The digits of class 0 and class 1, in that order.""",
                                     "1 for ``digits[1]``, 0 for ``digits[0]``."))
def mnist_pca_pair(directory, digits=(7, 9), n_components=50, subset="train"):
    """Two MNIST digits projected on their first principal components, as in the logistic
    regression experiments of Korattikara et al. and Maclaurin and Adams (7 vs 9, 50
    components; the bias is the estimator's intercept).

    The principal axes are those of the training images of the two digits (pixels in
    [0, 1], centred), computed by an exact SVD so that they are reproducible; test images
    are projected on the same axes."""
    return _projected(lambda part: mnist_pair(directory, digits, part), n_components, subset)


def _projected(load, n_components, subset):
    """``load(subset)``'s images and labels, the images projected on the first
    ``n_components`` principal axes of ``load("train")``'s (an exact SVD, reproducible)."""
    from sklearn.decomposition import PCA

    X_train, y_train = load("train")
    pca = PCA(n_components=n_components, svd_solver="full").fit(X_train)
    if subset == "train":
        return pca.transform(X_train), y_train
    X, y = load(subset)
    return pca.transform(X), y


@with_sections(_projection_sections("""digits : sequence of int, default=(0, 1, 2)
    The digits kept, in increasing order.""", "the index of each image's digit in ``digits``."))
def mnist_pca_digits(directory, digits=(0, 1, 2), n_components=50, subset="train"):
    """Several MNIST digits projected on their first principal components, for multiclass
    softmax regression (the bias is the estimator's intercept).

    The principal axes are those of the training images of these digits (pixels in [0, 1],
    centred, exact SVD); test images are projected on the same axes."""
    if list(digits) != sorted(digits):
        raise ValueError(f"digits must be increasing, got {digits!r}.")

    def select(subset):
        images, labels = load_mnist(directory, subset)
        keep = np.isin(labels, digits)
        return images[keep] / 255.0, np.searchsorted(np.asarray(digits), labels[keep])

    return _projected(select, n_components, subset)


#: Columns of the StatLib California housing file, in order.
CALIFORNIA_COLUMNS = ("longitude", "latitude", "housing_median_age", "total_rooms",
                      "total_bedrooms", "population", "households", "median_income",
                      "median_house_value")

#: The ``Parameters`` section of the California housing loaders.
_CALIFORNIA_DIRECTORY = """Parameters
----------
directory : str or Path
    Folder holding ``cal_housing.data`` (or ``cal_housing.data.gz``).
"""


@with_sections(_CALIFORNIA_DIRECTORY + """
Returns
-------
X : ndarray of shape (20640, 8)
    The eight features, in ``CALIFORNIA_COLUMNS`` order.
y : ndarray of shape (20640,)
    Median house value in dollars.
""")
def load_california_housing(directory):
    """The StatLib California housing data (``cal_housing.data``: 20,640 block groups,
    comma-separated, no header; the target is capped at 500,001)."""
    path = _find(directory, "cal_housing.data")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        table = np.loadtxt(handle, delimiter=",", dtype=np.float64)
    if table.ndim != 2 or table.shape[1] != len(CALIFORNIA_COLUMNS):
        raise ValueError(f"{path}: expected {len(CALIFORNIA_COLUMNS)} comma-separated "
                         f"columns, got an array of shape {table.shape}.")
    return table[:, :-1], table[:, -1]


@with_sections(_CALIFORNIA_DIRECTORY + """
Returns
-------
X : ndarray of shape (20640, 8), each column with mean 0 and sd 1
y : ndarray of shape (20640,)
""")
def california_log_value(directory):
    """California housing as the robust-regression benchmarks use it: standardised features
    and the log of the median house value."""
    X, value = load_california_housing(directory)
    return (X - X.mean(axis=0)) / X.std(axis=0), np.log(value)


#: Images per batch of :func:`deform_digits` (fixed, so that a seed gives the same images
#: whatever the count asked for).
_DEFORM_BATCH = 1024


def deform_digits(images, n_new, random_state=0, *, alpha=34.0, sigma=4.0, max_shift=1.0):
    """Randomly deformed copies of digit images: elastic distortions and sub-pixel shifts.

    Each new image is a copy of an image drawn at random, resampled (bilinearly, zero
    outside the frame) at ``p + alpha * s(p) + shift`` for each pixel ``p``: ``s`` is a
    field of displacements uniform in ``[-1, 1]`` per pixel and axis, smoothed by a
    Gaussian of ``sigma`` pixels (the elastic distortions of Simard, Steinkraus and Platt,
    2003, whose values these defaults are: displacements of about 1.4 pixels an axis,
    root mean square), and
    ``shift`` is uniform in ``[-max_shift, max_shift]`` per axis and image. The strokes
    bend and move a little; the digit stays what it was.

    Parameters
    ----------
    images : ndarray of shape (n, 784) or (n, 28, 28)
        Square images, flattened row by row or not (any numeric type).
    n_new : int
        How many deformed images to make.
    random_state : int, default=0
        The seed: the same seed gives the same images, each new image the same whatever
        ``n_new`` is.
    alpha : float, default=34.0
        The displacements' scale, in pixels (Simard et al.'s).
    sigma : float, default=4.0
        The smoothing Gaussian's sd, in pixels (Simard et al.'s).
    max_shift : float, default=1.0
        The largest shift per axis, in pixels.

    Returns
    -------
    new_images : ndarray of shape (n_new, 784) or (n_new, 28, 28), float64
        In the input's layout; values within the input's range.
    source : ndarray of shape (n_new,), int64
        The row of ``images`` each new image deforms (to carry its label over).
    """
    from scipy import ndimage

    images = np.asarray(images)
    if images.ndim not in (2, 3) or images.shape[0] == 0:
        raise ValueError(f"images must be a non-empty (n, side * side) or (n, side, side) "
                         f"array; got shape {images.shape}.")
    side = int(round(np.sqrt(np.prod(images.shape[1:]))))
    if side * side != int(np.prod(images.shape[1:])) or (images.ndim == 3
                                                         and images.shape[1] != side):
        raise ValueError(f"images must be square; got shape {images.shape}.")
    if not np.issubdtype(images.dtype, np.number) or not np.all(np.isfinite(images)):
        raise ValueError("images must hold finite numbers.")
    if isinstance(n_new, bool) or not isinstance(n_new, (int, np.integer)) or n_new < 0:
        raise ValueError(f"n_new must be a non-negative integer; got {n_new!r}.")
    for name, value in (("alpha", alpha), ("sigma", sigma), ("max_shift", max_shift)):
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite number >= 0; got {value!r}.")
    squares = images.reshape(-1, side, side)
    rng = np.random.default_rng(random_state)
    source = np.empty(n_new, dtype=np.int64)
    new_images = np.empty((n_new, side, side))
    grid = np.meshgrid(np.arange(side), np.arange(side), indexing="ij")
    for start in range(0, n_new, _DEFORM_BATCH):
        # Each batch draws as if it were full, so that image k never depends on n_new.
        picks = rng.integers(squares.shape[0], size=_DEFORM_BATCH)
        field = rng.uniform(-1.0, 1.0, size=(2, _DEFORM_BATCH, side, side))
        shift = rng.uniform(-max_shift, max_shift, size=(2, _DEFORM_BATCH, 1, 1))
        stop = min(start + _DEFORM_BATCH, n_new)
        b = stop - start
        field = ndimage.gaussian_filter(field[:, :b], sigma=(0, 0, sigma, sigma))
        which = np.broadcast_to(np.arange(b)[:, None, None], (b, side, side))
        coordinates = [which, grid[0] + alpha * field[0] + shift[0, :b],
                       grid[1] + alpha * field[1] + shift[1, :b]]
        new_images[start:stop] = ndimage.map_coordinates(
            squares[picks[:b]].astype(np.float64), coordinates, order=1, mode="constant",
            cval=0.0)
        source[start:stop] = picks[:b]
    return new_images.reshape((n_new, *images.shape[1:])), source


def mnist_pair_augmented(directory, digits, n_rows, random_state=0):
    """:func:`mnist_pair`'s training images of two digits, followed by deformed copies
    (:func:`deform_digits`) up to ``n_rows`` rows: a stand-in for the infinite-MNIST
    augmentation behind Seita et al.'s MNIST-100k (13,007 ones and sevens plus 87,000
    deformations). Generated on the fly (about 10 s for 100,000 rows).

    Parameters
    ----------
    directory : str or Path
        Holds MNIST's IDX files.
    digits : pair of int
        The digits of class 0 and class 1, in that order.
    n_rows : int
        At least the two digits' training images (13,007 for 1 and 7).
    random_state : int, default=0
        Seed of the deformations (see :func:`deform_digits`).

    Returns
    -------
    X : ndarray of shape (n_rows, 784), float64
        Pixels in [0, 1]; the first rows are MNIST's own.
    y : ndarray of shape (n_rows,), int64: 1 for ``digits[1]``, 0 for ``digits[0]``.
    """
    X, y = mnist_pair(directory, digits, "train")
    if isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) \
            or n_rows < X.shape[0]:
        raise ValueError(f"n_rows must be an integer of at least the {X.shape[0]:,} "
                         f"training images of digits {tuple(digits)}; got {n_rows!r}.")
    new_images, source = deform_digits(X, int(n_rows) - X.shape[0], random_state)
    return np.concatenate([X, new_images]), np.concatenate([y, y[source]])
