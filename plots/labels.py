"""Point labels that overlap neither each other, nor a point, nor the legend.

Codecs cluster (the Huffman and ANS family near one ratio and speed, lz4 and bytegroup at ratio 1), so
labels written at a fixed offset print on top of each other. Labels are collected with `add` while a
plot is drawn and placed by `place` once the layout is final (plotting.save calls it after
tight_layout): each label takes the nearest free spot on rings of growing distance around its point,
inside the axes, with a thin leader line when it had to move away."""
import math

_PENDING = "_wirezip_labels"
_RINGS_PT = [3, 8, 14, 22, 32, 45, 60, 80]  # distances from the point tried, in points
_DIRECTIONS = 16
_LEADER_PT = 4  # a label off the nearest ring gets a leader line to its point


def add(ax, x, y, text, fontsize=6, marker_size=25):
    """Labels the point (x, y) in data coordinates; placed when the figure is saved."""
    if not hasattr(ax, _PENDING):
        setattr(ax, _PENDING, [])
    getattr(ax, _PENDING).append((x, y, text, fontsize, marker_size))


def _text_size(ax, renderer, text, fontsize):
    """Width and height in pixels of `text` drawn at `fontsize`."""
    probe = ax.text(0, 0, text, fontsize=fontsize)
    extent = probe.get_window_extent(renderer)
    probe.remove()
    return extent.width, extent.height


def _box(x0, y0, width, height):
    return (x0, y0, x0 + width, y0 + height)


def _overlap(a, b):
    """Area shared by two (x0, y0, x1, y1) boxes."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _outside(box, frame):
    """Area of `box` that lies outside `frame`."""
    return (box[2] - box[0]) * (box[3] - box[1]) - _overlap(box, frame)


def _candidates(width, height, scale):
    """(offset in points, alignment, box relative to the point in pixels), nearest first."""
    for ring in _RINGS_PT:
        for step in range(_DIRECTIONS):
            angle = 2 * math.pi * step / _DIRECTIONS
            dx, dy = ring * math.cos(angle), ring * math.sin(angle)
            ha = "left" if dx > 0.5 else "right" if dx < -0.5 else "center"
            va = "bottom" if dy > 0.5 else "top" if dy < -0.5 else "center"
            x0 = dx * scale - {"left": 0, "right": width, "center": width / 2}[ha]
            y0 = dy * scale - {"bottom": 0, "top": height, "center": height / 2}[va]
            yield (dx, dy), (ha, va), (x0, y0, x0 + width, y0 + height)


def place(ax):
    """Places every label `add` collected on `ax`; returns the annotations."""
    pending = getattr(ax, _PENDING, [])
    if not pending:
        return []
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    scale = fig.dpi / 72.0  # points to pixels
    frame = ax.get_window_extent(renderer).extents
    anchors = [ax.transData.transform((x, y)) for x, y, *_ in pending]
    taken = []
    for (px, py), (*_, marker_size) in zip(anchors, pending):
        r = math.sqrt(marker_size) / 2 * scale + 1
        taken.append((px - r, py - r, px + r, py + r))
    legend = ax.get_legend()
    if legend is not None:
        taken.append(tuple(legend.get_window_extent(renderer).extents))
    # Crowded points first: they have the fewest free spots near them.
    def crowding(i):
        return -sum(math.dist(anchors[i], other) < 40 * scale for other in anchors)
    placed = []
    for i in sorted(range(len(pending)), key=crowding):
        x, y, text, fontsize, _ = pending[i]
        width, height = _text_size(ax, renderer, text, fontsize)
        best = None
        for offset, align, rel in _candidates(width + 2, height + 2, scale):
            box = (anchors[i][0] + rel[0], anchors[i][1] + rel[1], anchors[i][0] + rel[2], anchors[i][1] + rel[3])
            cost = sum(_overlap(box, other) for other in taken) + _outside(box, frame)
            if best is None or cost < best[0]:
                best = (cost, offset, align, box)
            if cost == 0:
                break
        _, offset, (ha, va), box = best
        leader = {"arrowstyle": "-", "lw": 0.4, "color": "gray", "shrinkA": 0, "shrinkB": 2}
        placed.append(ax.annotate(text, (x, y), xytext=offset, textcoords="offset points", fontsize=fontsize,
                                  ha=ha, va=va, arrowprops=leader if math.hypot(*offset) > _LEADER_PT else None))
        taken.append(box)
    setattr(ax, _PENDING, [])
    return placed
