"""The pixel diff on known image pairs: exact changes, thresholds, anti-aliasing, shifts, sizes, boxes."""

import numpy as np
import pytest

from bee_contracts import BeeError
from bee_design.visual.boxes import boxes
from bee_design.visual.diff import compare, count_differing
from bee_design.visual.shift import detect_shift
from tests.design.helpers import page_image


def test_identical_images_have_no_differing_pixels():
    image = page_image()
    diff = compare(image, image.copy())
    assert diff.positions.size == 0 and count_differing(image, image.copy(), 0.0) == 0


def test_a_recoloured_box_is_found_exactly_with_its_bounding_box():
    before, after = page_image(), page_image(color=(192, 57, 43))
    diff = compare(before, after)
    over = diff.over(0.1)
    assert over.size == 41 * 21  # the box is 41 × 21 pixels, every one of them changed
    assert boxes(diff.width, diff.height, diff.positions[over]) == ([[20, 30, 41, 21]], 0)


def test_the_threshold_separates_a_faint_change_from_a_real_one():
    before = np.full((10, 10, 4), 255, dtype=np.uint8)
    after = before.copy()
    after[2, 3, :3] = 250  # a barely visible change
    after[7, 7, :3] = 0  # black on white
    assert count_differing(before, after, 0.0) == 2
    assert count_differing(before, after, 0.1) == 1


def test_rgb_only_changes_count_where_imagechops_bbox_would_miss_them():
    before = np.zeros((4, 4, 4), dtype=np.uint8)
    before[..., 3] = 255
    after = before.copy()
    after[1, 1, 0] = 200  # only red changes; alpha stays opaque
    assert count_differing(before, after, 0.0) == 1


def test_transparent_pixels_are_compared_over_white():
    before = np.zeros((2, 2, 4), dtype=np.uint8)  # fully transparent black: white once blended
    after = np.full((2, 2, 4), 255, dtype=np.uint8)  # opaque white
    assert count_differing(before, after, 0.0) == 0


def _edge(gray: int) -> np.ndarray:
    """Black on the left, white on the right, and one column of ``gray`` between them: an anti-aliased edge."""
    image = np.full((20, 20, 4), 255, dtype=np.uint8)
    image[:, :10, :3] = 0
    image[:, 10, :3] = gray
    return image


def test_anti_aliased_edges_are_told_apart_from_content_changes():
    before, after = _edge(128), _edge(170)  # the same edge, its soft column rendered a little differently
    diff = compare(before, after)
    over = diff.over(0.05)
    assert over.size == 20 and diff.antialiased(over).all()
    assert count_differing(before, after, 0.05) == 0
    assert count_differing(before, after, 0.05, count_aa=True) == 20
    changed = after.copy()
    changed[8:10, 3:5, :3] = 255  # a hole in the black area is content, not anti-aliasing
    assert count_differing(before, changed, 0.05) == 4


def test_a_one_pixel_layout_shift_is_detected_though_few_pixels_change():
    before, after = page_image(width=400, height=300), page_image(width=400, height=300, shift=1)
    diff = compare(before, after)
    over = diff.over(0.1)
    counted = over[~diff.antialiased(over)]
    ratio = counted.size / (400 * 300)
    assert ratio < 0.01  # a 1 % ratio tolerance alone would let this pass
    shift = detect_shift(diff, counted, 0.1)
    assert shift is not None and (shift.dx, shift.dy) == (0, 1) and shift.explained >= 0.9


def test_a_content_change_is_not_mistaken_for_a_shift():
    before, after = page_image(), page_image(color=(192, 57, 43))
    diff = compare(before, after)
    assert detect_shift(diff, diff.over(0.1), 0.1) is None


def test_images_of_different_sizes_are_refused_not_cropped():
    with pytest.raises(BeeError) as caught:
        compare(page_image(120, 80), page_image(120, 81))
    assert caught.value.code == "invalid_argument"
    assert "reference is 120×80, evidence is 120×81" in caught.value.message


def test_nearby_changes_share_a_box_and_far_ones_do_not():
    width, height = 200, 100
    positions = np.array([y * width + x for x, y in [(10, 10), (12, 11), (20, 14), (150, 80), (151, 80)]])
    found, more = boxes(width, height, positions)
    assert found == [[10, 10, 11, 5], [150, 80, 2, 1]] and more == 0
    found, more = boxes(width, height, positions, limit=1)
    assert found == [[10, 10, 11, 5]] and more == 1


def test_counts_equal_the_compiled_pixelmatch_port():
    from pybind11_pixelmatch import Options, pixelmatch

    rng = np.random.default_rng(7)
    pairs = [
        (page_image(300, 200), page_image(300, 200, shift=1)),
        (page_image(300, 200), page_image(300, 200, color=(10, 200, 90))),
        (_edge(128), _edge(170)),
    ]
    noisy = page_image(300, 200)
    spots = rng.integers(0, 300 * 200, 500)
    noisy.reshape(-1, 4)[spots, :3] = rng.integers(0, 256, (500, 3))
    pairs.append((page_image(300, 200), noisy))
    for before, after in pairs:
        for threshold in (0.0, 0.05, 0.1, 0.3):
            for include_aa in (False, True):
                options = Options()
                options.threshold = threshold
                options.includeAA = include_aa
                expected = pixelmatch(before, after, options=options)
                assert count_differing(before, after, threshold, count_aa=include_aa) == expected
