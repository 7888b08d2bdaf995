"""The IDX reader on files made here, the California housing reader, the digit
deformations (MNIST-100k's augmentation), and the real data where they are available."""
import gzip

import numpy as np
import pytest

from skbayes_mh.datasets import (california_log_value, deform_digits, load_california_housing,
                                 load_mnist, make_mnist_like_pair, mnist_pair,
                                 mnist_pair_augmented, mnist_pair_or_synthetic, read_idx)


def write_idx(path, array, code=0x08):
    header = bytes([0, 0, code, array.ndim]) + np.array(array.shape, ">i4").tobytes()
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as handle:
        handle.write(header + array.astype(array.dtype.newbyteorder(">")).tobytes())


@pytest.mark.parametrize("name", ["a.idx", "a.idx.gz"])
def test_read_idx_round_trip(tmp_path, name):
    array = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    write_idx(tmp_path / name, array)
    np.testing.assert_array_equal(read_idx(tmp_path / name), array)
    floats = np.linspace(0, 1, 6).reshape(2, 3)
    write_idx(tmp_path / "f.idx", floats, code=0x0E)
    np.testing.assert_array_equal(read_idx(tmp_path / "f.idx"), floats)


def test_read_idx_rejects_bad_files(tmp_path):
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(ValueError, match="not an IDX file"):
        read_idx(tmp_path / "bad")
    write_idx(tmp_path / "short", np.zeros((2, 2), np.uint8))
    (tmp_path / "short").write_bytes((tmp_path / "short").read_bytes()[:-1])
    with pytest.raises(ValueError, match="data bytes"):
        read_idx(tmp_path / "short")


def test_real_mnist_counts(shared_data):
    images, labels = load_mnist(shared_data / "mnist", "train")
    assert images.shape == (60_000, 784) and images.dtype == np.uint8
    counts = np.bincount(labels)
    assert (counts[1], counts[7], counts[9]) == (6742, 6265, 5949)
    test_images, test_labels = load_mnist(shared_data / "mnist", "test")
    assert test_images.shape == (10_000, 784)
    assert (np.bincount(test_labels)[1], np.bincount(test_labels)[7]) == (1135, 1028)
    X, y = mnist_pair(shared_data / "mnist", (1, 7))
    assert X.shape == (13_007, 784) and 0 <= X.min() and X.max() <= 1
    assert y.sum() == 6265


def test_real_california_housing(shared_data):
    X, y = load_california_housing(shared_data / "california_housing")
    assert X.shape == (20_640, 8) and y.shape == (20_640,)
    assert y.max() == 500_001  # the capped tail
    X_std, log_value = california_log_value(shared_data / "california_housing")
    np.testing.assert_allclose(X_std.mean(axis=0), 0, atol=1e-10)
    np.testing.assert_allclose(X_std.std(axis=0), 1)
    np.testing.assert_allclose(log_value, np.log(y))


def test_california_loader_rejects_a_wrong_file(tmp_path):
    (tmp_path / "cal_housing.data").write_text("1,2,3\n4,5,6\n")
    with pytest.raises(ValueError, match="columns"):
        load_california_housing(tmp_path)


@pytest.mark.parametrize("digits, n_train, n_test", [((1, 7), 13_007, 2_163),
                                                      ((7, 9), 12_214, 2_037)])
def test_synthetic_stand_in_has_mnist_shapes(tmp_path, digits, n_train, n_test):
    X, y, source = mnist_pair_or_synthetic(tmp_path / "absent", digits, "train")
    X_test, y_test, _ = mnist_pair_or_synthetic(None, digits, "test")
    assert source == "synthetic data of MNIST's shape"
    assert X.shape == (n_train, 784) and X_test.shape == (n_test, 784)
    assert X.min() >= 0.0 and X.max() <= 1.0 and 0.15 < np.mean(X > 0) < 0.25
    # Both labels are common, and the shared weights make the test labels predictable.
    assert 0.2 < y.mean() < 0.8 and set(np.unique(y_test)) == {0, 1}
    centred = X - X.mean()  # least squares by the normal equations (a ridge of 1e-6)
    weights = np.linalg.solve(centred.T @ centred + 1e-6 * np.eye(784), centred.T @ (y - y.mean()))
    assert np.corrcoef((X_test - X.mean()) @ weights, y_test)[0, 1] > 0.3
    np.testing.assert_array_equal(make_mnist_like_pair(digits, "test")[0], X_test)
    with pytest.raises(ValueError, match="digits"):
        make_mnist_like_pair((1, 12))


def test_real_mnist_is_used_when_present(shared_data):
    X, y, source = mnist_pair_or_synthetic(shared_data / "mnist", (1, 7), "test")
    expected_X, expected_y = mnist_pair(shared_data / "mnist", (1, 7), "test")
    assert source == "MNIST"
    np.testing.assert_array_equal(X, expected_X)
    np.testing.assert_array_equal(y, expected_y)


def blobs(side=28):
    """Nine images of a bright blob each, centred 5 pixels apart on a 3 x 3 grid in the
    frame's middle, in [0, 255]."""
    rows, cols = np.meshgrid(np.arange(side), np.arange(side), indexing="ij")
    centres = [(r, c) for r in (9, 14, 19) for c in (9, 14, 19)]
    return np.stack([255 * np.exp(-((rows - r) ** 2 + (cols - c) ** 2) / 4.0)
                     for r, c in centres]).reshape(len(centres), -1)


def test_deformations_without_displacement_are_the_drawn_images():
    # alpha = 0 and no shift: bilinear resampling at the pixels themselves.
    images = blobs()
    new, source = deform_digits(images, 12, random_state=3, alpha=0.0, max_shift=0.0)
    assert new.shape == (12, 784) and source.shape == (12,)
    np.testing.assert_allclose(new, images[source], rtol=0, atol=1e-9)
    assert len(set(source.tolist())) > 1


def test_deformations_move_the_strokes_a_little_and_are_seeded():
    images = blobs()
    new, source = deform_digits(images, 300, random_state=0)
    assert new.shape == (300, 784) and new.min() >= 0 and new.max() <= 255
    again, same_source = deform_digits(images, 300, random_state=0)
    np.testing.assert_array_equal(again, new)
    np.testing.assert_array_equal(same_source, source)
    # The k-th image does not depend on how many are asked for (batches draw in full).
    first, _ = deform_digits(images, 7, random_state=0)
    np.testing.assert_array_equal(first, new[:7])
    other, _ = deform_digits(images, 300, random_state=1)
    assert not np.array_equal(other, new)
    # Each image moves a little: its blob's centre by about 2 pixels (the smoothed field's
    # root mean square, 1.4 pixels an axis at the defaults, and the shift), never by half
    # the frame; and no image is its source.
    def centres(flat):
        squares = flat.reshape(-1, 28, 28)
        mass = squares.sum(axis=(1, 2))
        return np.stack([squares.sum(axis=2) @ np.arange(28), squares.sum(axis=1)
                         @ np.arange(28)], axis=1) / mass[:, None]

    moves = np.linalg.norm(centres(new) - centres(images)[source], axis=1)
    assert 1.0 < np.median(moves) < 2.5 and np.percentile(moves, 99) < 5.5
    assert np.all(np.abs(new - images[source]).max(axis=1) > 1.0)
    # Smooth, small displacements keep most of a blob's mass inside the frame.
    ratio = new.sum(axis=1) / images[source].sum(axis=1)
    assert 0.8 < np.median(ratio) < 1.2


@pytest.mark.parametrize("images, n_new, message", [
    (np.zeros((3, 10)), 2, "square"),
    (np.zeros((0, 784)), 2, "non-empty"),
    (np.full((3, 784), np.nan), 2, "finite"),
    (np.zeros((3, 784)), -1, "n_new"),
    (np.zeros((3, 784)), 2.5, "n_new"),
])
def test_deformations_reject_bad_input(images, n_new, message):
    with pytest.raises(ValueError, match=message):
        deform_digits(images, n_new)


def test_augmented_mnist_keeps_mnist_first(shared_data):
    X, y = mnist_pair_augmented(shared_data / "mnist", (1, 7), 14_000, random_state=0)
    X_mnist, y_mnist = mnist_pair(shared_data / "mnist", (1, 7))
    assert X.shape == (14_000, 784) and y.shape == (14_000,)
    np.testing.assert_array_equal(X[:13_007], X_mnist)
    np.testing.assert_array_equal(y[:13_007], y_mnist)
    assert X.min() >= 0 and X.max() <= 1
    assert 0.3 < y[13_007:].mean() < 0.7
    with pytest.raises(ValueError, match="13,007"):
        mnist_pair_augmented(shared_data / "mnist", (1, 7), 10_000)
