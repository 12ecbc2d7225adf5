#!/usr/bin/python3
"""HDF5 inputs and outputs through the program (reliability review M1, M4, L2,
L3, L15, L17, L18, L19).

  hostile PYRGRID SOURCE_DIR    files made with h5py to make pyrgrid read what
      is not theirs (external raw storage: a secret, /dev/zero, a FIFO without
      a writer; an external link; a virtual dataset), or that describe
      themselves wrongly (soft-link loop, dangling soft link, a filter this
      libhdf5 lacks, a snapshot whose step attribute was edited, a file a
      writer holds locked): each run exits with status 1 and a message that
      says why, in time (no hang), and leaves the old output as it was; a soft
      link inside the file still works.  Skipped (77) without h5py.
  full_disk PYRGRID SOURCE_DIR  HDF5 output onto a 2 MiB tmpfs: the final
      field, a snapshot and the file's closing metadata each fail with status 1
      (not a signal) and a short message with the system's reason, the old
      output intact and no temporary left.  Skipped (77) unless mounting a
      tmpfs is permitted (root).
"""
import os
import shutil
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(binary, args, cwd, timeout=60):
    try:
        r = subprocess.run([binary] + args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stderr
    except subprocess.TimeoutExpired:
        return None, "(timed out after %d s)" % timeout


PROBLEM = """[scheme]
equation = heat
alpha = 1
dt = 1e-12
steps = 0
precision = double
[initial]
kind = file
file = x.h5
[run]
backend = cpu
[output]
field = o.npy
image =
"""


def hostile(binary, work):
    try:
        import h5py
        import numpy as np
    except ImportError:
        print("h5py or numpy missing for /usr/bin/python3 (apt-get install python3-h5py): skipped")
        return 77
    with open(os.path.join(work, "p.ini"), "w") as f:
        f.write(PROBLEM)
    old = b"the old output, which a refused run must leave as it is"
    secret_text = b"root:x:0:0:a secret that must not reach the output\n" * 8
    with open(os.path.join(work, "secret.txt"), "wb") as f:
        f.write(secret_text)
    n = len(secret_text) // 8
    os.mkfifo(os.path.join(work, "fifo.bin"))
    with h5py.File(os.path.join(work, "other.h5"), "w") as f:
        f["secret"] = np.arange(16.0).reshape(4, 4)

    def make(name, build, libver=None):
        kw = {"libver": libver} if libver else {}
        with h5py.File(os.path.join(work, name), "w", **kw) as f:
            build(f)

    make("ext.h5", lambda f: f.create_dataset("u", shape=(n,), dtype="<f8",
                                              external=[(os.path.join(work, "secret.txt"), 0, n * 8)]))
    make("zero.h5", lambda f: f.create_dataset("u", shape=(100,), dtype="<f8", external=[("/dev/zero", 0, 800)]))
    make("fifo.h5", lambda f: f.create_dataset("u", shape=(100,), dtype="<f8", external=[("fifo.bin", 0, 800)]))
    make("elink.h5", lambda f: f.__setitem__("u", h5py.ExternalLink(os.path.join(work, "other.h5"), "/secret")))

    def loop(f):
        f["u"] = h5py.SoftLink("/v")
        f["v"] = h5py.SoftLink("/u")
    make("loop.h5", loop)
    make("dangle.h5", lambda f: f.__setitem__("u", h5py.SoftLink("/nothing")))
    make("lzf.h5", lambda f: f.create_dataset("u", data=np.arange(16.0).reshape(4, 4), compression="lzf"))

    def vds(f):
        layout = h5py.VirtualLayout(shape=(4, 4), dtype="<f8")
        layout[:] = h5py.VirtualSource(os.path.join(work, "other.h5"), "secret", shape=(4, 4))
        f.create_virtual_dataset("u", layout)
    make("vds.h5", vds, libver="latest")

    def soft(f):
        f["data/field"] = np.arange(16.0).reshape(4, 4) / 7
        f["u"] = h5py.SoftLink("/data/field")
    make("soft.h5", soft)

    cases = [  # file, what the message must say
        ("ext.h5", "keeps its values outside the file, in external raw storage"),  # M1
        ("zero.h5", "external raw storage ('/dev/zero')"),
        ("fifo.h5", "external raw storage ('fifo.bin')"),  # L2
        ("elink.h5", "'u' is an external link to " + os.path.join(work, "other.h5") + ":/secret"),  # L3
        ("vds.h5", "is a virtual dataset"),
        ("loop.h5", "form a loop"),  # L17
        ("dangle.h5", "'u' is a soft link to '/nothing', which does not exist in the file (a dangling link)"),
        ("lzf.h5", "compressed with HDF5 filter 32000 (lzf), which this libhdf5 does not have"),  # L18
    ]
    out = os.path.join(work, "o.npy")
    for name, want in cases:
        with open(out, "wb") as f:
            f.write(old)
        rc, err = run(binary, ["run", "p.ini", "-q", "--set", "initial.file=" + name], work, timeout=30)
        check(rc == 1, "%s: exit status %s, expected 1: %s" % (name, rc, err))
        check(want in err, "%s: the message lacks %r: %s" % (name, want, err))
        for bad in ("a group?", "truncated or damaged", "plugins", "root:x"):
            check(bad not in err, "%s: the message says %r: %s" % (name, bad, err))
        with open(out, "rb") as f:
            check(f.read() == old, "%s: the old output was changed" % name)

    # a soft link inside the file is followed
    os.unlink(out)
    rc, err = run(binary, ["run", "p.ini", "-q", "--set", "initial.file=soft.h5"], work)
    check(rc == 0, "soft.h5: exit status %s: %s" % (rc, err))
    if rc == 0:
        check(np.array_equal(np.load(out), np.arange(16.0).reshape(4, 4) / 7), "soft.h5: the field is not the linked dataset's")

    # restarts: a snapshot whose step attribute was edited (L15), a file a writer holds (L19)
    heat = ["--set", "initial.kind=zero", "--set", "grid.nx=9", "--set", "grid.ny=9", "--set", "scheme.dt=1e-4",
            "--set", "scheme.steps=40", "--set", "output.every=10", "--set", "output.field=a.h5"]
    rc, err = run(binary, ["run", "p.ini", "-q"] + heat, work)
    check(rc == 0, "making a.h5: %s %s" % (rc, err))
    shutil.copy(os.path.join(work, "a.h5"), os.path.join(work, "edited.h5"))
    with h5py.File(os.path.join(work, "edited.h5"), "a") as f:
        f["snapshots/000020"].attrs["step"] = 30
    restart = ["--set", "initial.kind=file", "--set", "initial.step=20", "--set", "scheme.steps=40",
               "--set", "output.field=b.h5"]
    rc, err = run(binary, ["run", "p.ini", "-q", "--set", "initial.file=edited.h5"] + restart, work)
    check(rc == 1 and "has the attribute step = 30, but its name says step 20" in err and "initial.step = 20" in err,
          "edited snapshot step: %s %s" % (rc, err))
    check(not os.path.exists(os.path.join(work, "b.h5")), "edited snapshot step: b.h5 was written")
    rc, err = run(binary, ["run", "p.ini", "-q", "--set", "initial.file=a.h5"] + restart, work)
    check(rc == 0 and os.path.exists(os.path.join(work, "b.h5")), "restart from a.h5: %s %s" % (rc, err))
    os.unlink(os.path.join(work, "b.h5"))
    env_lock = dict(os.environ)
    env_lock.pop("HDF5_USE_FILE_LOCKING", None)
    holder = subprocess.Popen([sys.executable, "-c", "import h5py, sys; f = h5py.File(sys.argv[1], 'a'); print('held', flush=True); "
                               "sys.stdin.read()", os.path.join(work, "a.h5")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              env=env_lock, text=True)
    try:
        check(holder.stdout.readline().strip() == "held", "the writer could not open a.h5")
        r = subprocess.run([binary, "run", "p.ini", "-q", "--set", "initial.file=a.h5"] + restart, cwd=work, capture_output=True,
                           text=True, timeout=60, env=env_lock)
        check(r.returncode == 1 and "is locked: another process has it open for writing" in r.stderr and "damaged" not in r.stderr,
              "a.h5 held by a writer: %s %s" % (r.returncode, r.stderr))
        check(not os.path.exists(os.path.join(work, "b.h5")), "a.h5 held by a writer: b.h5 was written")
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    left = [x for x in os.listdir(work) if ".tmp" in x]
    check(not left, "temporaries left: %s" % left)
    return 0


def full_disk(binary, src, work):
    if os.geteuid() != 0:
        print("not root: mounting a tmpfs is not permitted: skipped")
        return 77
    full = os.path.join(work, "full")
    os.mkdir(full)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", full], capture_output=True, text=True)
    if r.returncode != 0:
        print("mounting a tmpfs is not permitted here (%s): skipped" % r.stderr.strip())
        return 77
    try:
        example = os.path.join(src, "examples", "heat2d.ini")
        base = ["run", example, "--set", "run.backend=cpu", "--set", "output.field=r.h5", "--set", "output.image="]
        cases = [  # (what runs out of space, options)
            ("the final field", ["--set", "scheme.steps=10"]),
            ("a snapshot", ["--set", "scheme.steps=10", "--set", "output.every=5"]),
            ("the file's closing metadata", ["--set", "grid.nx=500", "--set", "grid.ny=512", "--set", "scheme.steps=1"]),
        ]
        old = b"old"
        for what, opts in cases:
            with open(os.path.join(full, "r.h5"), "wb") as f:
                f.write(old)
            rc, err = run(binary, base + opts, full, timeout=120)
            print("%s: status %s: %s" % (what, rc, err.strip()))
            check(rc == 1, "%s: exit status %s, expected 1 (139 is the crash at exit)" % (what, rc))
            check("writing r.h5" in err and "No space left on device" in err, "%s: the message lacks the reason: %s" % (what, err))
            for raw in ("time =", "buf =", "errno =", "file descriptor", "infinite loop", "HDF5-DIAG"):
                check(raw not in err, "%s: libhdf5's raw text %r in the message: %s" % (what, raw, err))
            check(len(err.strip().splitlines()) == 1, "%s: more than one line on stderr: %s" % (what, err))
            with open(os.path.join(full, "r.h5"), "rb") as f:
                check(f.read() == old, "%s: the old r.h5 was changed" % what)
            check(os.listdir(full) == ["r.h5"], "%s: left behind: %s" % (what, os.listdir(full)))
    finally:
        subprocess.run(["umount", "-l", full])
    return 0


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("hostile", "full_disk"):
        print("usage: test_hdf5_hostile.py hostile|full_disk PYRGRID SOURCE_DIR")
        return 2
    mode, binary, src = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    work = tempfile.mkdtemp(prefix="pyr_h5_hostile_")
    try:
        rc, err = run(binary, ["run", os.path.join(src, "examples", "heat2d.ini"), "-q", "--set", "grid.nx=5", "--set", "grid.ny=5",
                               "--set", "output.field=probe.h5", "--set", "output.image="], work)
        if rc != 0 and "built without HDF5" in err:
            print("built without HDF5: skipped")
            return 77
        os.unlink(os.path.join(work, "probe.h5"))
        if os.path.exists(os.path.join(work, "probe.xmf")):
            os.unlink(os.path.join(work, "probe.xmf"))
        rc = hostile(binary, work) if mode == "hostile" else full_disk(binary, src, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if rc:
        return rc
    if failures:
        print("%d checks failed" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
