"""The end-to-end model of the pipeline (docs/METRICS.md), in original bytes per second.

C, D: compress and decompress rates; R: ratio (original / compressed); L: link rate.
Overlapped, the slowest stage sets the pace: min(C, R*L, D). Serial, the stages add up:
1 / (1/C + 1/(R*L) + 1/D). Without compression the link moves L.
"""


def overlap_rate(c, r, link, d):
    return min(c, r * link, d)


def serial_rate(c, r, link, d):
    return 1.0 / (1.0 / c + 1.0 / (r * link) + 1.0 / d)


def pays(c, r, link, d, serial=False):
    """Does the compressed pipeline deliver original bytes faster than the bare link?"""
    rate = serial_rate(c, r, link, d) if serial else overlap_rate(c, r, link, d)
    return rate > link


def break_even_link(c, r, d, serial=False):
    """The link rate below which compression pays (0 when it never does).

    Overlap: min(C, R L, D) > L  <=>  R > 1 and L < min(C, D).
    Serial: 1/C + 1/(R L) + 1/D < 1/L  <=>  L < (1 - 1/R) / (1/C + 1/D).
    """
    if r <= 1.0:
        return 0.0
    if serial:
        return (1.0 - 1.0 / r) / (1.0 / c + 1.0 / d)
    return min(c, d)


def step_speedup(p, s):
    """Amdahl bound on a training step whose communication share is p, sped up s times."""
    return 1.0 / ((1.0 - p) + p / s)


def serial_min_ratio(c, d, link):
    """The smallest ratio at which the serial pipeline pays, for rates c, d (inf when none does)."""
    slack = 1.0 - link * (1.0 / c + 1.0 / d)
    return float("inf") if slack <= 0 else 1.0 / slack
