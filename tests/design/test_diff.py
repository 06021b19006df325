"""The pixel diff on known image pairs: exact changes, thresholds, anti-aliasing, shifts, sizes, boxes."""

import numpy as np
import pytest

from bee_contracts import BeeError
from bee_design.visual.boxes import boxes
from bee_design.visual.diff import Indices, PixelDiff, compare, count_differing
from bee_design.visual.shift import detect_shift
from tests.design.helpers import page_image


def test_identical_images_have_no_differing_pixels() -> None:
    image = page_image()
    diff = compare(image, image.copy())
    assert diff.positions.size == 0 and count_differing(image, image.copy(), 0.0) == 0


def test_a_recoloured_box_is_found_exactly_with_its_bounding_box() -> None:
    before, after = page_image(), page_image(color=(192, 57, 43))
    diff = compare(before, after)
    over = diff.over(0.1)
    assert over.size == 41 * 21  # the box is 41 × 21 pixels, every one of them changed
    assert boxes(diff.width, diff.height, diff.positions[over]) == ([[20, 30, 41, 21]], 0)


def test_the_threshold_separates_a_faint_change_from_a_real_one() -> None:
    before = np.full((10, 10, 4), 255, dtype=np.uint8)
    after = before.copy()
    after[2, 3, :3] = 250  # a barely visible change
    after[7, 7, :3] = 0  # black on white
    assert count_differing(before, after, 0.0) == 2
    assert count_differing(before, after, 0.1) == 1


def test_rgb_only_changes_count_where_imagechops_bbox_would_miss_them() -> None:
    before = np.zeros((4, 4, 4), dtype=np.uint8)
    before[..., 3] = 255
    after = before.copy()
    after[1, 1, 0] = 200  # only red changes; alpha stays opaque
    assert count_differing(before, after, 0.0) == 1


def test_transparent_pixels_are_compared_over_white() -> None:
    before = np.zeros((2, 2, 4), dtype=np.uint8)  # fully transparent black: white once blended
    after = np.full((2, 2, 4), 255, dtype=np.uint8)  # opaque white
    assert count_differing(before, after, 0.0) == 0


def _edge(gray: int) -> np.ndarray:
    """Black on the left, white on the right, and one column of ``gray`` between them: an anti-aliased edge."""
    image = np.full((20, 20, 4), 255, dtype=np.uint8)
    image[:, :10, :3] = 0
    image[:, 10, :3] = gray
    return image


def test_anti_aliased_edges_are_told_apart_from_content_changes() -> None:
    before, after = _edge(128), _edge(170)  # the same edge, its soft column rendered a little differently
    diff = compare(before, after)
    over = diff.over(0.05)
    assert over.size == 20 and diff.antialiased(over).all()
    assert count_differing(before, after, 0.05) == 0
    assert count_differing(before, after, 0.05, count_aa=True) == 20
    changed = after.copy()
    changed[8:10, 3:5, :3] = 255  # a hole in the black area is content, not anti-aliasing
    assert count_differing(before, changed, 0.05) == 4


def test_a_one_pixel_layout_shift_is_detected_though_few_pixels_change() -> None:
    before, after = page_image(width=400, height=300), page_image(width=400, height=300, shift=1)
    diff = compare(before, after)
    over = diff.over(0.1)
    counted = over[~diff.antialiased(over)]
    ratio = counted.size / (400 * 300)
    assert ratio < 0.01  # a 1 % ratio tolerance alone would let this pass
    shift = detect_shift(diff, counted, 0.1)
    assert shift is not None and (shift.dx, shift.dy) == (0, 1) and shift.explained >= 0.9


def test_a_content_change_is_not_mistaken_for_a_shift() -> None:
    before, after = page_image(), page_image(color=(192, 57, 43))
    diff = compare(before, after)
    assert detect_shift(diff, diff.over(0.1), 0.1) is None


def test_images_of_different_sizes_are_refused_not_cropped() -> None:
    with pytest.raises(BeeError) as caught:
        compare(page_image(120, 80), page_image(120, 81))
    assert caught.value.code == "invalid_argument"
    assert "reference is 120×80, evidence is 120×81" in caught.value.message


def test_nearby_changes_share_a_box_and_far_ones_do_not() -> None:
    width, height = 200, 100
    positions = np.array([y * width + x for x, y in [(10, 10), (12, 11), (20, 14), (150, 80), (151, 80)]])
    found, more = boxes(width, height, positions)
    assert found == [[10, 10, 11, 5], [150, 80, 2, 1]] and more == 0
    found, more = boxes(width, height, positions, limit=1)
    assert found == [[10, 10, 11, 5]] and more == 1


def test_counts_equal_the_compiled_pixelmatch_port() -> None:
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


# -- the kernel's answers, asked on row bands, equal its answers on the whole image ---------------------------------


def _whole_image(before: np.ndarray, after: np.ndarray, threshold: float, *, include_aa: bool) -> int:
    """pybind11-pixelmatch on the whole image in one call: the count every shortcut must reproduce."""
    from pybind11_pixelmatch import Options, pixelmatch

    options = Options()
    options.threshold = threshold
    options.includeAA = include_aa
    return int(pixelmatch(before, after, options=options))


def _soft_page(rng: np.random.Generator, width: int = 96, height: int = 72) -> np.ndarray:
    """Shapes drawn at four times the size and scaled down: soft, anti-aliased edges everywhere."""
    from PIL import Image, ImageDraw

    big = Image.new("RGBA", (width * 4, height * 4), (255, 255, 255, 255))
    draw = ImageDraw.Draw(big)
    for _ in range(14):
        x, y = int(rng.integers(0, width * 4 - 40)), int(rng.integers(0, height * 4 - 40))
        w, h = int(rng.integers(8, 120)), int(rng.integers(8, 120))
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)((x, y, x + w, y + h), fill=(*colour, 255))
    return np.asarray(big.resize((width, height), Image.Resampling.LANCZOS)).copy()


def _moved_rows(image: np.ndarray, rows: list[int]) -> np.ndarray:
    """``image`` with each of ``rows`` moved one pixel to the right: edges move, which is what anti-aliasing is
    judged on."""
    moved = image.copy()
    for row in rows:
        moved[row, 1:] = image[row, :-1]
    return moved


@pytest.mark.parametrize("seed", range(8))
def test_counts_judged_on_row_bands_equal_the_kernel_on_the_whole_image(seed: int) -> None:
    rng = np.random.default_rng(seed)
    before = _soft_page(rng)
    # Changed rows at every gap around the band margins (bands merge rows up to four apart), and the image's edges.
    gaps = rng.permutation([1, 2, 3, 4, 5, 6, 7, 9])
    rows = [0]
    for gap in gaps:
        rows.append(rows[-1] + int(gap))
    rows = [r for r in rows if r < before.shape[0]] + [before.shape[0] - 1]
    after = _moved_rows(before, rows)
    diff = compare(before, after)
    for threshold in (0.0, 0.05, 0.1, 0.2):
        expected_all = _whole_image(before, after, threshold, include_aa=True)
        expected = _whole_image(before, after, threshold, include_aa=False)
        assert expected < expected_all  # the pair has anti-aliased pixels to tell apart
        assert count_differing(before, after, threshold, count_aa=True) == expected_all
        assert count_differing(before, after, threshold) == expected
        over = diff.over(threshold)
        assert over.size == expected_all
        assert over.size - np.count_nonzero(diff.antialiased(over)) == expected


def test_a_diff_answers_for_thresholds_from_its_own_up() -> None:
    before, after = page_image(), page_image(color=(192, 57, 43))
    diff = compare(before, after, threshold=0.1)
    assert diff.over(0.1).size == diff.over(0.3).size == 41 * 21
    with pytest.raises(ValueError, match=r"over threshold 0\.1, not 0\.05"):
        diff.over(0.05)


def test_the_kernel_refuses_arrays_it_would_misread() -> None:
    from bee_design.visual import kernel

    image = page_image()
    with pytest.raises(ValueError, match="C-contiguous"):
        kernel.run(image[:, ::2], image[:, ::2], 0.1, include_aa=False)  # strides the binding would ignore
    with pytest.raises(ValueError, match="C-contiguous"):
        kernel.run(image[..., :3].copy(), image[..., :3].copy(), 0.1, include_aa=False)
    with pytest.raises(ValueError, match="one shape"):
        kernel.run(image, image[:40].copy(), 0.1, include_aa=False)


# -- the shift search skips only offsets that cannot be the answer ----------------------------------------------------


def _every_offset(diff: PixelDiff, members: Indices, threshold: float) -> tuple[int, int, float] | None:
    """The shift definition, every offset measured on every pixel: what detect_shift must answer."""
    from bee_design.visual import kernel
    from bee_design.visual.shift import EXPLAINED, MIN_PIXELS, RADIUS, SAMPLE

    if members.size < MIN_PIXELS:
        return None
    if members.size > SAMPLE:
        members = members[:: -(-members.size // SAMPLE)]
    positions = diff.positions[members]
    ys, xs = np.divmod(positions, diff.width)
    seen = diff.evidence_words[positions]
    best = None
    offsets = [(dx, dy) for dy in range(-RADIUS, RADIUS + 1) for dx in range(-RADIUS, RADIUS + 1) if dx or dy]
    for dx, dy in sorted(offsets, key=lambda o: (abs(o[0]) + abs(o[1]), o[1], o[0])):
        sy, sx = ys - dy, xs - dx
        inside = (sx >= 0) & (sx < diff.width) & (sy >= 0) & (sy < diff.height)
        judged = int(np.count_nonzero(inside))
        if judged < MIN_PIXELS:
            continue
        before = diff.reference_words[(sy * diff.width + sx)[inside]]
        share = (judged - kernel.count_exceeding(before, seen[inside], threshold)) / judged
        if best is None or share > best[2]:
            best = (dx, dy, round(share, 4))
    return best if best is not None and best[2] >= EXPLAINED else None


def _moved(image: np.ndarray, dx: int, dy: int) -> np.ndarray:
    moved = np.full_like(image, 255)
    h, w = image.shape[:2]
    moved[max(0, dy) : h + min(0, dy), max(0, dx) : w + min(0, dx)] = image[
        max(0, -dy) : h + min(0, -dy), max(0, -dx) : w + min(0, -dx)
    ]
    return moved


@pytest.mark.parametrize("seed", range(12))
def test_the_shift_search_answers_as_trying_every_offset_on_every_pixel_does(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    before = _soft_page(rng, 120, 90)
    dx, dy = (int(v) for v in rng.integers(-3, 4, 2))
    after = _moved(before, dx, dy)
    # Noise over some of the page, so that the best share falls anywhere around the 90 % a shift needs.
    spots = rng.integers(0, 120 * 90, int(rng.integers(0, 400)))
    after.reshape(-1, 4)[spots, :3] = rng.integers(0, 256, (spots.size, 3))
    diff = compare(before, after)
    for threshold in (0.05, 0.1):
        over = diff.over(threshold)
        for members in (over, over[~diff.antialiased(over)], over[: over.size // 3]):
            found = detect_shift(diff, members, threshold)
            expected = _every_offset(diff, members, threshold)
            assert (None if found is None else (found.dx, found.dy, found.explained)) == expected


# -- boxes group touching tiles, as a flood fill over the tiles would ------------------------------------------------


def _flood_filled(width: int, height: int, positions: np.ndarray, limit: int) -> tuple[list[list[int]], int]:
    """Boxes by the definition: tiles flood-filled (corners touching) from the first marked tile onwards."""
    tile, columns = 16, -(-width // 16)
    members: dict[int, list[int]] = {}
    for p in positions.tolist():
        y, x = divmod(p, width)
        members.setdefault((y // tile) * columns + x // tile, []).append(p)
    groups, seen = [], set()
    for start in sorted(members):
        if start in seen:
            continue
        seen.add(start)
        stack, group = [start], []
        while stack:
            current = stack.pop()
            group.extend(members[current])
            row, column = divmod(current, columns)
            for near_row in (row - 1, row, row + 1):
                for near_column in (column - 1, column, column + 1):
                    near = near_row * columns + near_column
                    if 0 <= near_column < columns and near in members and near not in seen:
                        seen.add(near)
                        stack.append(near)
        xs, ys = [p % width for p in group], [p // width for p in group]
        groups.append((len(group), min(ys), min(xs), [min(xs), min(ys), max(xs) - min(xs) + 1, max(ys) - min(ys) + 1]))
    ranked = sorted(groups, key=lambda g: (-g[0], g[1], g[2]))
    return [g[3] for g in ranked[:limit]], max(0, len(ranked) - limit)


@pytest.mark.parametrize("seed", range(6))
def test_boxes_group_the_tiles_a_flood_fill_groups(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    for _ in range(60):
        width, height = int(rng.integers(1, 260)), int(rng.integers(1, 200))
        count = int(rng.integers(1, min(width * height, 300) + 1))
        if rng.random() < 0.5:  # scattered
            positions = np.unique(rng.integers(0, width * height, count))
        else:  # in clumps, so that tiles touch along edges and at corners
            centres = rng.integers(0, width * height, 4)
            spread = rng.integers(-40, 41, (count, 2))
            ys = np.clip(centres[rng.integers(0, 4, count)] // width + spread[:, 0], 0, height - 1)
            xs = np.clip(centres[rng.integers(0, 4, count)] % width + spread[:, 1], 0, width - 1)
            positions = np.unique(ys * width + xs)
        limit = int(rng.integers(1, 12))
        assert boxes(width, height, positions.astype(np.intp), limit) == _flood_filled(width, height, positions, limit)
