"""Which context differences make two runs hard to compare. Why: a 10% drop measured on another
kernel, another SIMD path or another data set is not a regression of the code, and a firmware
comparison is only fair when everything but the firmware stayed put.

A key pattern is a context key (`kernel`) or a prefix ending in `*` (`version_*`, `peer_*`).
"""

# Compared on every run: host, page policy, SIMD path, data sets, library versions, and every key
# describing the peer of a two-host run.
WATCHED = ("cpu_model", "simd_path", "kernel", "thp_enabled", "thp_defrag", "dataset_sha256:*", "version_*", "peer_*")
UNSET = "(unset)"


def matches(key, patterns):
    """Does key match one of the patterns (exact, or prefix when the pattern ends in '*')?"""
    return any(key.startswith(p[:-1]) if p.endswith("*") else key == p for p in patterns)


def differences(base, other, patterns, ignore=()):
    """[(key, base value, other value)] for each key matching the patterns whose value differs,
    in key order; a key present on one side only differs from UNSET."""
    keys = sorted(k for k in set(base) | set(other) if matches(k, patterns) and k not in ignore)
    values = [(k, str(base.get(k, UNSET)), str(other.get(k, UNSET))) for k in keys]
    return [(k, b, o) for k, b, o in values if b != o]


def parse_patterns(text):
    """--require-same=kernel,version_* -> ["kernel", "version_*"]."""
    return [p.strip() for p in text.split(",") if p.strip()]
