"""The end-to-end model of the pipeline (docs/METRICS.md), in original bytes per second.

C, D: compress and decompress rates; R: ratio (original / compressed); L: link rate.
Overlapped, the slowest stage sets the pace: min(C, R*L, D). Serial, the stages add up:
1 / (1/C + 1/(R*L) + 1/D). Without compression the link moves L.

Where both ends share one host (mem, loopback tcp, scripts/linkbed), the stages also compete for
its cores: each original byte costs w/C + w/D CPU seconds in the codec (w workers per side, each
busy while its stage runs alone) plus c_L in the link, so N cores deliver at most
N / (w/C + w/D + c_L), and the overlapped prediction is the smaller of the two.

A run moves a finite number of chunks, and its rate is its bytes over its whole time: the first
chunk is compressed before anything else can run, and the last one is sent and decoded after the
last compression. With one worker per side and chunks of `chunk` bytes, n of them, the stages take
t_C = chunk/C, t_L = chunk/(R L), t_D = chunk/D each per chunk, and no schedule beats
t_C + t_L + t_D + (n - 1) max(t_C, t_L, t_D). On shared cores one thread alone runs while the first
chunk is compressed and while the last is decoded (the link's threads may share the cores in
between), so the cores need at least work/N + (t_C + t_D)(1 - 1/N). Where a case
says how many bytes and chunks it moved, the prediction is for that run; `steady` is the rate of an
endless one.
"""

LOOPBACK_LINK = "loopback"  # how the binaries' `link` context starts when both ends are in one process


def overlap_rate(c, r, link, d):
    return min(c, r * link, d)


def serial_rate(c, r, link, d):
    return 1.0 / (1.0 / c + 1.0 / (r * link) + 1.0 / d)


def shared_core_rate(c, d, cores, link_cpu_per_byte=0.0, workers=1):
    """The most original bytes per second `cores` CPUs can push through both codec stages and the
    link when every stage runs on them: cores / (w/C + w/D + c_L)."""
    return cores / (workers / c + workers / d + link_cpu_per_byte)


def run_flow_time(total, chunk, c, r, link, d):
    """The least time one worker per side needs for `total` bytes in chunks of `chunk` bytes with
    the stages overlapped: the first chunk through every stage, then one chunk per slowest stage."""
    stages = [chunk / c, chunk / (r * link), chunk / d]
    return sum(stages) + (total / chunk - 1) * max(stages)


def run_shared_time(total, chunk, c, d, cores, link_cpu_per_byte=0.0):
    """The same on `cores` CPUs that run every stage: the run's CPU work over the cores, plus the
    share of the cores left idle while one thread alone compresses the first chunk and decodes the
    last."""
    work = total * (1 / c + 1 / d + link_cpu_per_byte)
    return work / cores + (chunk / c + chunk / d) * (1 - 1 / cores)


def run_size(case):
    """(original bytes, chunk bytes) of one run of a compressed case: its wire bytes times its ratio
    (chunk headers make that a few bytes per chunk too many), over its windows where a file data set
    ran as several (each window a run of its own). None for more than one worker per side (several
    chunks fill the pipeline at once) or where those counters are missing."""
    try:
        chunk, wire, ratio = float(case["chunk"]), float(case["wire_bytes"]), float(case.get("ratio", 1.0))
        windows = float(case.get("windows", 1))
    except (KeyError, TypeError, ValueError):
        return None
    if case.get("workers", 1) != 1 or chunk <= 0 or wire <= 0 or windows < 1:
        return None
    return wire * ratio / windows, chunk


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


def shares_cores(context):
    """(do both ends run on this host's cores?, note or None) from a bench_pipeline context."""
    link = context.get("link")
    if link is None:
        return True, "no 'link' in the context: both ends assumed in this process"
    return str(link).startswith(LOOPBACK_LINK), None


def host_cores(context):
    """(CPUs the process may run on, note or None): `host_cpus`, else Google Benchmark's `num_cpus`
    (every CPU of the machine, affinity ignored), else None."""
    for key, note in (("host_cpus", None),
                      ("num_cpus", "no host_cpus in the context: Google Benchmark's num_cpus used")):
        try:
            return int(context[key]), note
        except (KeyError, TypeError, ValueError):
            continue
    return None, "no host_cpus or num_cpus in the context: the shared-core term is left out"


def codec_rates(case):
    """(C, D, R) of a compressed case: C and D measured inside its timed runs (`stage_*_in_run`, the
    codec threads' CPU time with the same data, threads and placement as the pipeline) where the
    binary reports them, else the stages measured alone before the runs."""
    c = case.get("stage_compress_in_run", case["stage_compress"])
    d = case.get("stage_decompress_in_run", case["stage_decompress"])
    return c, d, case.get("ratio", 1.0)


def predict_case(case, context, link, shared=None):
    """The model for one compressed bench_pipeline case (its stage_* counters and ratio) on a link
    that moves `link` bytes per second. shared: force the shared-core term on or off (None: from
    the context's `link`). Returns {"rate": the prediction, "free": the same without the
    shared-core term, "shared": the shared-core bound of an endless run or None, "shared_cores": N
    or None, "link_cpu_per_byte": the c_L used or None, "steady": the prediction for an endless run,
    "run_chunks": how many chunks "rate" and "free" are for (None: an endless run), "notes": what
    had to be assumed}."""
    c, d, r = codec_rates(case)
    notes = []
    if case.get("mode") == "serial":  # one chunk at a time: the stages never compete for cores
        rate = serial_rate(c, r, link, d)
        return {"rate": rate, "free": rate, "shared": None, "shared_cores": None, "link_cpu_per_byte": None,
                "steady": rate, "run_chunks": None, "notes": notes}
    size = run_size(case)
    steady = overlap_rate(c, r, link, d)
    free = size[0] / run_flow_time(*size, c, r, link, d) if size else steady
    out = {"rate": free, "free": free, "shared": None, "shared_cores": None, "link_cpu_per_byte": None,
           "steady": steady, "run_chunks": size[0] / size[1] if size else None, "notes": notes}
    if shared is None:
        shared, note = shares_cores(context)
        notes += [note] if note else []
    if not shared:
        return out
    cores, note = host_cores(context)
    notes += [note] if note else []
    if cores is None:
        return out
    link_cpu = case.get("link_cpu_per_byte")
    if link_cpu is None:
        link_cpu = 0.0
        notes.append("no link_cpu_per_byte (older binary): the link's CPU is not counted (c_L = 0)")
    bound = shared_core_rate(c, d, cores, link_cpu, case.get("workers", 1))
    run_bound = size[0] / run_shared_time(*size, c, d, cores, link_cpu) if size else bound
    out.update(rate=min(free, run_bound), shared=bound, shared_cores=cores, link_cpu_per_byte=link_cpu,
               steady=min(steady, bound))
    return out


def parallel_efficiency(rate_n, threads, rate_1):
    """How much of the ideal N-fold speedup N threads reach: rate_N / (N x rate_1)."""
    return rate_n / (threads * rate_1)


def projected_rate(rate_1, efficiency, cores):
    """A codec's rate on `cores` cores, assuming the efficiency measured at a smaller thread count
    holds there: cores x rate_1 x efficiency. A projection, not a measurement: efficiency usually
    falls as cores are added (memory bandwidth, shared caches), so this is an upper estimate."""
    return cores * rate_1 * efficiency
