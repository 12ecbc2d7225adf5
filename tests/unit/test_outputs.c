/* Outputs that must not destroy what they must not (issue 18), through
 * src/io/atomic.c:
 *   1. character devices and FIFOs are written in place, never replaced; a
 *      FIFO without a reader is refused at once; block devices and sockets
 *      are refused; /dev/null works for a user who cannot write /dev;
 *   2. a stage commits several outputs together: a failure while writing a
 *      later one leaves the earlier old files as they were;
 *   5. temporaries are removed when SIGTERM, SIGINT or SIGXFSZ ends the
 *      process, and stale ones of a dead process at the next write;
 *   8. over-long names fail in the check before any work; the same file
 *      twice among outputs, or an output that is an input, is refused.
 * Cases that need root (mknod, a second user) are skipped without it. */
#define _XOPEN_SOURCE 700 /* mknod */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "io/atomic.h"
#include "io/npy.h"

static char dir[700];

static const char *tpath(const char *name)
{
    static char buf[8][1200];
    static int k = 0;
    char *b = buf[k++ % 8];
    snprintf(b, 1200, "%s/%s", dir, name);
    return b;
}

static int count_temporaries(const char *d)
{
    DIR *dd = opendir(d);
    if (!dd) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dd)))
        if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp.")) n++;
    closedir(dd);
    return n;
}

static mode_t kind(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

static double first_value(const char *path)
{
    double v[4] = {-1, -1, -1, -1};
    int64_t s[1] = {4};
    if (pyr_npy_read_expect(path, 1, s, PYR_DOUBLE, v) != PYR_OK) return -1;
    return v[0];
}

static pyr_status_t write4(const char *path, double first)
{
    double v[4] = {first, 2, 3, 4};
    int64_t s[1] = {4};
    return pyr_npy_write(path, 1, s, PYR_DOUBLE, v);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------ 1. devices, FIFOs */

static void test_fifo(void)
{
    const char *fifo = tpath("out.fifo");
    if (mkfifo(fifo, 0600) != 0) {
        fprintf(stderr, "mkfifo: %s; FIFO cases not run\n", strerror(errno));
        return;
    }
    /* no reader: refused at once (a blocking open would hang here) */
    CHECK_FAILS(write4(fifo, 1), PYR_ERR_IO, "no process is reading");
    CHECK(kind(fifo) == S_IFIFO, "the FIFO was replaced");
    CHECK_OK(pyr_check_writable(fifo));

    /* with a reader: the data go through the FIFO, which stays */
    CHECK_OK(write4(tpath("ref.npy"), 7));
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    pid_t child = fork();
    if (child == 0) {
        int fd = open(fifo, O_RDONLY); /* blocks until the writer comes */
        char buf[4096];
        ssize_t n, total = 0;
        while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0) {
            if (write(p[1], buf, (size_t)n) != n) _exit(3);
            total += n;
        }
        _exit(total > 0 ? 0 : 2);
    }
    close(p[1]);
    pyr_status_t st = PYR_ERR_IO;
    for (int tries = 0; tries < 500 && st != PYR_OK; tries++) { /* until the reader has it open */
        st = write4(fifo, 7);
        if (st != PYR_OK) sleep_ms(10);
    }
    CHECK_OK(st);
    char got[4096], want[4096];
    ssize_t ng = read(p[0], got, sizeof got);
    close(p[0]);
    int status = 0;
    waitpid(child, &status, 0);
    FILE *f = fopen(tpath("ref.npy"), "rb");
    size_t nw = f ? fread(want, 1, sizeof want, f) : 0;
    if (f) fclose(f);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "FIFO reader status %d", status);
    CHECK(ng > 0 && (size_t)ng == nw && !memcmp(got, want, nw), "the FIFO carried %zd bytes, the file has %zu", ng, nw);
    CHECK(kind(fifo) == S_IFIFO, "the FIFO was replaced by a %o", (unsigned)kind(fifo));
    CHECK(count_temporaries(dir) == 0, "temporary left");
}

static void test_devices(void)
{
    /* a socket: refused, left alone */
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", tpath("sock"));
    if (s >= 0 && strlen(tpath("sock")) < sizeof a.sun_path && bind(s, (struct sockaddr *)&a, sizeof a) == 0) {
        CHECK_FAILS(write4(tpath("sock"), 1), PYR_ERR_IO, "a socket");
        CHECK_FAILS(pyr_check_writable(tpath("sock")), PYR_ERR_IO, "a socket");
        CHECK(kind(tpath("sock")) == S_IFSOCK, "the socket was replaced");
    }
    if (s >= 0) close(s);

    /* /dev/null for any user: not "directory /dev is not writable" */
    if (geteuid() != 0) {
        CHECK_OK(pyr_check_writable("/dev/null"));
        CHECK_OK(write4("/dev/null", 1));
        CHECK(kind("/dev/null") == S_IFCHR, "/dev/null is no longer a device");
        fprintf(stderr, "not root: the mknod cases are skipped\n");
        return;
    }
    /* root: a null device of our own (never the system's), written in place */
    const char *null = tpath("null");
    int probe = -1;
    if (mknod(null, S_IFCHR | 0666, makedev(1, 3)) != 0 || (probe = open(null, O_WRONLY)) < 0) {
        fprintf(stderr, "mknod or open: %s (a nodev mount?); device cases not run\n", strerror(errno));
        unlink(null);
        return;
    }
    close(probe);
    CHECK_OK(pyr_check_writable(null));
    CHECK_OK(write4(null, 1));
    CHECK(kind(null) == S_IFCHR, "the null device was replaced by a %o", (unsigned)kind(null));
    CHECK(count_temporaries(dir) == 0, "temporary left");
    /* a block device: refused, never opened */
    if (mknod(tpath("blk"), S_IFBLK | 0600, makedev(7, 200)) == 0) {
        CHECK_FAILS(write4(tpath("blk"), 1), PYR_ERR_IO, "a block device");
        CHECK_FAILS(pyr_check_writable(tpath("blk")), PYR_ERR_IO, "a block device");
        CHECK(kind(tpath("blk")) == S_IFBLK, "the block device was replaced");
    }
    /* a user who cannot write the device's directory (as /dev) writes the device */
    char ro[1200], ronull[1300];
    snprintf(ro, sizeof ro, "%s", tpath("rodev"));
    snprintf(ronull, sizeof ronull, "%s/null", ro);
    chmod(dir, 0755);
    if (mkdir(ro, 0755) == 0 && mknod(ronull, S_IFCHR | 0666, makedev(1, 3)) == 0 && chmod(ronull, 0666) == 0) {
        pid_t child = fork();
        if (child == 0) {
            if (setgid(65534) != 0 || setuid(65534) != 0) _exit(77);
            if (access(ro, X_OK) != 0) _exit(77); /* a parent of the build directory is closed to nobody */
            if (pyr_check_writable(ronull) != PYR_OK) {
                fprintf(stderr, "as nobody: %s\n", pyr_last_error());
                _exit(1);
            }
            if (write4(ronull, 1) != PYR_OK) {
                fprintf(stderr, "as nobody: %s\n", pyr_last_error());
                _exit(2);
            }
            _exit(0);
        }
        int status = 0;
        waitpid(child, &status, 0);
        CHECK(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 77),
              "a user without write access to the device's directory could not write the device (%d)", status);
        CHECK(kind(ronull) == S_IFCHR, "the device was replaced");
    }
}

/* ------------------------------------------------------------------ 2. stages */

static void set_fsize(rlim_t bytes, struct rlimit *old)
{
    getrlimit(RLIMIT_FSIZE, old);
    struct rlimit lim = *old;
    lim.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &lim);
}

static void test_stage(void)
{
    CHECK_OK(write4(tpath("a.npy"), 1));
    CHECK_OK(write4(tpath("b.npy"), 1));
    /* both written: both new, and only at commit */
    pyr_atomic_stage_t stage;
    pyr_atomic_stage_begin(&stage);
    CHECK_OK(write4(tpath("a.npy"), 2));
    CHECK(first_value(tpath("a.npy")) == 1, "a staged output replaced the old one before the commit");
    CHECK_OK(write4(tpath("b.npy"), 2));
    CHECK(count_temporaries(dir) == 2, "%d temporaries staged, expected 2", count_temporaries(dir));
    CHECK_OK(pyr_atomic_stage_commit(&stage));
    pyr_atomic_stage_abort(&stage); /* harmless after a commit */
    CHECK(first_value(tpath("a.npy")) == 2 && first_value(tpath("b.npy")) == 2, "commit did not write both");
    CHECK(count_temporaries(dir) == 0, "temporaries left after the commit");

    /* the second fails (file size limit, as a full disk would): the first keeps its old contents */
    struct rlimit old;
    signal(SIGXFSZ, SIG_IGN);
    pyr_atomic_stage_begin(&stage);
    CHECK_OK(write4(tpath("a.npy"), 3));
    int64_t bs[1] = {1 << 18};
    double *big = calloc((size_t)bs[0], sizeof(double));
    set_fsize(1 << 20, &old);
    CHECK_FAILS(pyr_npy_write(tpath("b.npy"), 1, bs, PYR_DOUBLE, big), PYR_ERR_IO, "b.npy");
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    free(big);
    pyr_atomic_stage_abort(&stage);
    CHECK(first_value(tpath("a.npy")) == 2, "a failed stage changed a.npy to %g", first_value(tpath("a.npy")));
    CHECK(first_value(tpath("b.npy")) == 2, "a failed stage changed b.npy");
    CHECK(count_temporaries(dir) == 0, "temporaries left after the abort");

    /* a link to a regular file: the target is replaced, the link stays */
    unlink(tpath("link.npy"));
    CHECK(symlink("a.npy", tpath("link.npy")) == 0, "symlink");
    CHECK_OK(write4(tpath("link.npy"), 5));
    CHECK(kind(tpath("link.npy")) == S_IFLNK && first_value(tpath("a.npy")) == 5, "writing through a link");

    /* reliability review L16: a link to nothing yet is followed as well: the
     * file it names is created and the link stays (also through a chain) */
    const char *names[] = {"dang.npy", "dang_target.npy", "chain1.npy", "chain2.npy", "chain_target.npy", "dang_dir.npy", "loop_a.npy", "loop_b.npy"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) unlink(tpath(names[i]));
    CHECK(symlink("dang_target.npy", tpath("dang.npy")) == 0, "symlink");
    CHECK_OK(pyr_check_writable(tpath("dang.npy")));
    CHECK(pyr_same_file(tpath("dang.npy"), tpath("dang_target.npy")), "a link to nothing yet and the name it gives are one output");
    CHECK_OK(write4(tpath("dang.npy"), 6));
    CHECK(kind(tpath("dang.npy")) == S_IFLNK, "the dangling link was replaced (kind %o)", (unsigned)kind(tpath("dang.npy")));
    CHECK(kind(tpath("dang_target.npy")) == S_IFREG && first_value(tpath("dang_target.npy")) == 6, "the link's target was not written");
    CHECK(symlink("chain2.npy", tpath("chain1.npy")) == 0 && symlink(tpath("chain_target.npy"), tpath("chain2.npy")) == 0, "symlinks");
    pyr_atomic_stage_begin(&stage);
    CHECK_OK(write4(tpath("chain1.npy"), 7));
    CHECK(kind(tpath("chain_target.npy")) == 0, "a staged output was renamed before the stage's commit");
    CHECK_OK(pyr_atomic_stage_commit(&stage));
    CHECK(kind(tpath("chain1.npy")) == S_IFLNK && kind(tpath("chain2.npy")) == S_IFLNK, "a link of the chain was replaced");
    CHECK(first_value(tpath("chain_target.npy")) == 7, "the chain's target was not written");
    /* a link into a directory that does not exist, and a loop: refused up front and at open; the links stay */
    CHECK(symlink("no_such_dir/x.npy", tpath("dang_dir.npy")) == 0, "symlink");
    CHECK_FAILS(pyr_check_writable(tpath("dang_dir.npy")), PYR_ERR_IO, "a symbolic link to");
    CHECK(strstr(pyr_last_error(), "no_such_dir does not exist"), "message: %s", pyr_last_error());
    CHECK_FAILS(write4(tpath("dang_dir.npy"), 8), PYR_ERR_IO, "no_such_dir does not exist");
    CHECK(kind(tpath("dang_dir.npy")) == S_IFLNK, "a refused link was replaced");
    CHECK(symlink("loop_b.npy", tpath("loop_a.npy")) == 0 && symlink("loop_a.npy", tpath("loop_b.npy")) == 0, "symlinks");
    CHECK_FAILS(pyr_check_writable(tpath("loop_a.npy")), PYR_ERR_IO, "(a loop)");
    CHECK_FAILS(write4(tpath("loop_a.npy"), 8), PYR_ERR_IO, "(a loop)");
    CHECK(kind(tpath("loop_a.npy")) == S_IFLNK && kind(tpath("loop_b.npy")) == S_IFLNK, "a link of a loop was replaced");
    CHECK(count_temporaries(dir) == 0, "temporaries left after the link cases");
}

/* ---------------------------------------------------------- 5. signals, stale */

/* A child that stages a.npy, opens b.npy, and is then ended by `sig`. */
static void signal_case(int sig, int by_size_limit)
{
    CHECK_OK(write4(tpath("a.npy"), 1));
    pid_t child = fork();
    if (child == 0) {
        signal(SIGXFSZ, SIG_DFL);
        pyr_atomic_cleanup_on_signals();
        pyr_atomic_stage_t stage;
        pyr_atomic_stage_begin(&stage);
        if (write4(tpath("a.npy"), 9) != PYR_OK) _exit(2);
        if (by_size_limit) {
            struct rlimit old;
            set_fsize(1 << 16, &old);
            int64_t bs[1] = {1 << 16};
            double *big = calloc((size_t)bs[0], sizeof(double));
            pyr_npy_write(tpath("b.npy"), 1, bs, PYR_DOUBLE, big); /* SIGXFSZ from the kernel */
            _exit(3);
        }
        pyr_atomic_file_t af;
        if (pyr_atomic_open(&af, tpath("b.npy")) != PYR_OK) _exit(4);
        fputs("partial", af.fp);
        fflush(af.fp);
        raise(sig);
        _exit(5);
    }
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sig, "signal %d: child status %d (not ended by the signal)", sig, status);
    CHECK(count_temporaries(dir) == 0, "signal %d left %d temporaries", sig, count_temporaries(dir));
    CHECK(first_value(tpath("a.npy")) == 1, "signal %d: the old output changed", sig);
}

static void test_signals(void)
{
    unlink(tpath("b.npy"));
    signal_case(SIGTERM, 0);
    signal_case(SIGINT, 0);
    signal_case(SIGHUP, 0);
    signal_case(SIGXFSZ, 1);
    unlink(tpath("b.npy"));
}

static void test_stale(void)
{
    CHECK_OK(write4(tpath("s.npy"), 1));
    /* a process that dies (as by SIGKILL) with its temporary open */
    pid_t child = fork();
    if (child == 0) {
        pyr_atomic_file_t af;
        if (pyr_atomic_open(&af, tpath("s.npy")) != PYR_OK) _exit(1);
        fputs("half", af.fp);
        fflush(af.fp);
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(count_temporaries(dir) == 1, "the dead writer left %d temporaries, expected 1", count_temporaries(dir));
    CHECK_OK(write4(tpath("s.npy"), 2));
    CHECK(count_temporaries(dir) == 0, "the next write left the dead writer's temporary (%d)", count_temporaries(dir));
    CHECK(first_value(tpath("s.npy")) == 2, "the write failed");
    /* a live writer of the same output, in another process: its temporary stays */
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    int q[2];
    CHECK(pipe(q) == 0, "pipe");
    pid_t live = fork();
    if (live == 0) {
        pyr_atomic_file_t af;
        close(p[1]);
        if (pyr_atomic_open(&af, tpath("s.npy")) != PYR_OK) _exit(1);
        char c = 1;
        if (write(q[1], &c, 1) != 1) _exit(2);
        if (read(p[0], &c, 1) < 0) _exit(3); /* until the parent is done */
        pyr_atomic_abort(&af);
        _exit(0);
    }
    close(p[0]);
    char c;
    CHECK(read(q[0], &c, 1) == 1, "live writer did not start");
    CHECK(count_temporaries(dir) == 1, "%d temporaries, expected the live writer's", count_temporaries(dir));
    CHECK_OK(write4(tpath("s.npy"), 3));
    CHECK(count_temporaries(dir) == 1, "after a write: %d temporaries, expected the live writer's", count_temporaries(dir));
    CHECK(first_value(tpath("s.npy")) == 3, "the write failed");
    close(p[1]);
    waitpid(live, &status, 0);
    close(q[0]);
    close(q[1]);
    CHECK(count_temporaries(dir) == 0, "temporaries left");
}

/* ------------------------------------------------------------ 8. checks */

static void test_checks(void)
{
    char longname[305];
    memset(longname, 'n', 300);
    strcpy(longname + 300, ".npy");
    CHECK_FAILS(pyr_check_writable(tpath(longname)), PYR_ERR_IO, "more than the 255 bytes");
    CHECK_FAILS(write4(tpath(longname), 1), PYR_ERR_IO, "use a shorter name");

    CHECK_OK(write4(tpath("in.npy"), 1));
    char rel[1300];
    snprintf(rel, sizeof rel, "%s/./in.npy", dir);
    CHECK(pyr_same_file(tpath("in.npy"), rel), "same existing file, two spellings");
    CHECK(pyr_same_file(tpath("new.npy"), tpath("./new.npy")), "same new file, two spellings");
    CHECK(!pyr_same_file(tpath("new.npy"), tpath("new2.npy")), "different new files");
    unlink(tpath("in_link.npy"));
    CHECK(symlink("in.npy", tpath("in_link.npy")) == 0, "symlink");
    CHECK(pyr_same_file(tpath("in_link.npy"), tpath("in.npy")), "a link and its target");

    pyr_named_path_t in[2] = {{"initial.file", tpath("in.npy")}, {"the problem file", NULL}};
    pyr_named_path_t out[2] = {{"output.field", rel}, {"output.image", NULL}};
    CHECK_FAILS(pyr_check_outputs(out, 2, in, 2), PYR_ERR_IO, "output.field");
    CHECK(strstr(pyr_last_error(), "the input initial.file") != NULL, "message: %s", pyr_last_error());
    out[0].path = tpath("in_link.npy");
    CHECK_FAILS(pyr_check_outputs(out, 2, in, 2), PYR_ERR_IO, "would destroy the input");
    out[0].path = tpath("x.npy");
    out[1].path = tpath("./x.npy");
    CHECK_FAILS(pyr_check_outputs(out, 2, in, 2), PYR_ERR_IO, "output.image");
    CHECK(strstr(pyr_last_error(), "same file as output.field") != NULL, "message: %s", pyr_last_error());
    out[1].path = tpath("x.png");
    CHECK_OK(pyr_check_outputs(out, 2, in, 2));
    if (kind(tpath("null")) == S_IFCHR) { /* a discard sink may be named twice */
        out[0].path = out[1].path = tpath("null");
        CHECK_OK(pyr_check_outputs(out, 2, in, 2));
    }
    CHECK(!pyr_same_file("/dev/null", tpath("x.npy")), "distinct");
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/test_outputs_XXXXXX", PYR_BINARY_DIR);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    test_fifo();
    test_devices();
    test_stage();
    test_signals();
    test_stale();
    test_checks();
    int rc = check_report();
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (rc == 0 && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return rc;
}
