"""The two sides of an A/B run: which binary and which extra flags each side runs with, from two
build directories, two git revisions (built here into worktrees of their own), two codec specs on
one build, two sets of flags on one build (--flags), or two servers (--peer). A side is {"label",
"command": [argv prefix], "rename"}: rename maps a case name of that side to the name both sides
share (codec specs differ in case names)."""
import os
import shlex
import shutil
import subprocess

BENCHES = ("bench_codec", "bench_rdma", "bench_pipeline", "bench_collective")
CODEC_BENCHES = ("bench_codec", "bench_pipeline")
PEER_BENCHES = ("bench_rdma", "bench_pipeline")
REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
BUILD_TIMEOUT_S = 3600
# Open MPI as tests/python/mpi_checks.py runs it: root allowed (containers), shared memory and
# loopback TCP only, so a run needs no network.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl": "self,vader,tcp", "OMPI_MCA_btl_tcp_if_include": "lo"}


class BadInput(Exception):
    """A flag or input scripts/ab cannot use; exit status 2 with its message."""


def binary_in(build_dir, bench):
    """The bench binary of a build directory (its bin/, or the directory itself)."""
    for path in (os.path.join(build_dir, "bin", bench), os.path.join(build_dir, bench)):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.realpath(path)
    raise BadInput(f"no executable {bench} in {build_dir} (looked in bin/ and the directory itself)")


def cache_dir(args):
    base = args.cache_dir or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                                          "wirezip-ab")
    os.makedirs(base, exist_ok=True)
    return base


def git(*argv, cwd=REPO):
    return subprocess.run(["git", *argv], cwd=cwd, capture_output=True, text=True, timeout=600)


def build_revision(rev, bench, args, log):
    """Builds `bench` of git revision `rev` (Release, ccache) in a worktree under the cache dir,
    once per commit; returns the binary. Why a worktree per commit: a rebuild of a revision seen
    before costs nothing, and ccache shares objects between them (CCACHE_BASEDIR per worktree)."""
    found = git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if found.returncode != 0:
        raise BadInput(f"--rev: '{rev}' is not a commit of {REPO}")
    sha = found.stdout.strip()
    tree = os.path.join(cache_dir(args), "worktrees", sha[:12])
    if not os.path.isdir(tree):
        os.makedirs(os.path.dirname(tree), exist_ok=True)
        added = git("worktree", "add", "--detach", tree, sha)
        if added.returncode != 0:
            raise BadInput(f"--rev {rev}: git worktree add failed: {added.stderr.strip().splitlines()[-1:]}")
    build = os.path.join(tree, "build")
    env = dict(os.environ, CCACHE_BASEDIR=tree)
    launcher = ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
    steps = [["cmake", "-S", tree, "-B", build, "-DCMAKE_BUILD_TYPE=Release", *launcher],
             ["nice", "cmake", "--build", build, f"-j{os.cpu_count() or 2}", "--target", bench]]
    log(f"ab: building {bench} of {rev} ({sha[:12]}) in {tree}")
    for step in steps:
        done = subprocess.run(step, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["no output"]
            raise BadInput(f"--rev {rev}: '{' '.join(step[:3])}' failed: {tail[0]}")
    return binary_in(build, bench), sha[:12]


def codec_rename(spec):
    """Case names of a --codec-X side with its spec (a whole name segment) replaced by 'codec'."""
    def rename(name):
        return "/".join("codec" if part == spec else part for part in name.split("/"))
    return rename


def same(name):
    return name


def make_sides(args, log=print):
    """The two sides from the parsed flags; raises BadInput for a missing, doubled or mismatched pair."""
    pairs = {k: (getattr(args, f"{k}_a"), getattr(args, f"{k}_b")) for k in ("build", "rev", "codec", "flags", "peer")}
    given = [k for k, (a, b) in pairs.items() if a or b]
    if len(given) != 1:
        raise BadInput("give exactly one pair: --build-a/--build-b, --rev-a/--rev-b, --codec-a/--codec-b, "
                       f"--flags-a/--flags-b or --peer-a/--peer-b (got {', '.join(given) or 'none'})")
    kind = given[0]
    a, b = pairs[kind]
    if not (a and b):
        raise BadInput(f"--{kind}-a and --{kind}-b go together")
    if kind == "codec" and args.bench not in CODEC_BENCHES:
        raise BadInput(f"--codec-a/--codec-b: {args.bench} has no --codecs (use {' or '.join(CODEC_BENCHES)})")
    if kind == "peer" and args.bench not in PEER_BENCHES:
        raise BadInput(f"--peer-a/--peer-b: {args.bench} has no --peer client (use {' or '.join(PEER_BENCHES)})")
    if kind == "build":
        sides = [{"label": d, "binary": binary_in(d, args.bench), "flags": [], "rename": same} for d in (a, b)]
    elif kind == "rev":
        sides = []
        for rev in (a, b):
            binary, sha = build_revision(rev, args.bench, args, log)
            sides.append({"label": f"{rev} ({sha})", "binary": binary, "flags": [], "rename": same})
    elif kind == "flags":
        flags = [side_flags(a, "a"), side_flags(b, "b")]
        binary = binary_in(args.build, args.bench)
        sides = [{"label": text, "binary": binary, "flags": words, "rename": same} for text, words in zip((a, b), flags)]
    elif kind == "codec":
        binary = binary_in(args.build, args.bench)
        sides = [{"label": spec, "binary": binary, "flags": [f"--codecs={spec}"], "rename": codec_rename(spec)}
                 for spec in (a, b)]
    else:
        binary = binary_in(args.build, args.bench)
        sides = [{"label": peer, "binary": binary, "flags": [f"--peer={peer}"], "rename": same, "peer": True}
                 for peer in (a, b)]
    for side, name in zip(sides, "ab"):
        side["name"] = name
        side["command"] = mpi_prefix(args) + [side["binary"]] + side["flags"]
    return kind, sides


def side_flags(text, side):
    """The shell words of --flags-X: flags of the benchmark binary that only this side runs with."""
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise BadInput(f"--flags-{side}: {e}") from None
    if not all(word.startswith("--") for word in words):
        raise BadInput(f"--flags-{side}: every word must be a --flag of the benchmark binary (got '{text}')")
    return words


def mpi_prefix(args):
    """bench_collective runs under mpirun (its ranks form the ring); the others run alone."""
    if args.bench != "bench_collective":
        return []
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        raise BadInput("bench_collective needs mpirun, which is not on PATH (scripts/setup installs openmpi-bin)")
    if args.ranks < 2:
        raise BadInput(f"--ranks: a ring needs at least 2 ranks (got {args.ranks})")
    return [mpirun, "--oversubscribe", "-np", str(args.ranks)]


def run_env(args):
    return dict(os.environ, **MPI_ENV) if args.bench == "bench_collective" else dict(os.environ)
