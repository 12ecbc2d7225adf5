/* Wisdom updates from processes at the same time lose nothing (issue 18):
 * load -> modify -> save without a lock kept one record of two concurrent
 * `pyrgrid calibrate` runs in 10 of 10 tries.  pyr_wisdom_export_file now
 * re-reads and merges the file under flock.
 *
 *   1. library: 6 processes, each with one record of its own in its store,
 *      export to one file at the same moment; all 6 records must be there;
 *   2. program: 4 `pyrgrid calibrate --import FILE_k` at the same moment
 *      (argv[1] is the program); all 4 records must be there.
 * Each is repeated 10 times.
 *   3. a FIFO and a character device (a link to /dev/null) as the export's
 *      target get the store written in place, with no lock file beside them
 *      and nothing read from them (reliability review: wisdom to devices,
 *      where the export refused them as unreadable and would have made
 *      /dev/null.lock); as the default wisdom file, nothing is imported. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "plan/model.h"
#include "tune/wisdom.h"

static char dir[600];

static pyr_wisdom_constants_t record(const char *device)
{
    pyr_wisdom_constants_t c;
    memset(&c, 0, sizeof c);
    c.backend = PYR_BACKEND_CPU;
    snprintf(c.device, sizeof c.device, "%s", device);
    snprintf(c.version, sizeof c.version, "%s", PYR_VERSION_STRING);
    c.precision = PYR_FLOAT;
    c.dims = 2;
    c.k = pyr_model_default(PYR_BACKEND_CPU, 2, PYR_FLOAT);
    return c;
}

/* Records in the file whose device starts with prefix. */
static int count_records(const char *path, const char *prefix, int n)
{
    pyr_wisdom_t *w = malloc(sizeof *w);
    int found = 0, have = 0;
    if (pyr_wisdom_load(path, w, &found) != PYR_OK) {
        fprintf(stderr, "%s\n", pyr_last_error());
        free(w);
        return -1;
    }
    for (int k = 0; k < n; k++) {
        char dev[64];
        snprintf(dev, sizeof dev, "%s %d", prefix, k);
        for (int i = 0; i < w->nconstants; i++)
            if (!strcmp(w->constants[i].device, dev)) {
                have++;
                break;
            }
    }
    free(w);
    return have;
}

/* Fork n children that wait on one pipe and then all run `job(k)`. */
static void at_once(int n, int (*job)(int k, void *arg), void *arg, int *failures)
{
    int go[2];
    if (pipe(go) != 0) {
        perror("pipe");
        exit(1);
    }
    pid_t pids[16];
    for (int k = 0; k < n; k++) {
        pids[k] = fork();
        if (pids[k] == 0) {
            close(go[1]);
            char c;
            while (read(go[0], &c, 1) < 0 && errno == EINTR) {
            }
            _exit(job(k, arg));
        }
    }
    close(go[0]);
    close(go[1]); /* every child's read returns now */
    for (int k = 0; k < n; k++) {
        int status = 0;
        waitpid(pids[k], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) (*failures)++;
    }
}

static int export_one(int k, void *arg)
{
    const char *path = arg;
    char dev[64];
    snprintf(dev, sizeof dev, "lock test device %d", k);
    pyr_wisdom_forget();
    pyr_wisdom_constants_t c = record(dev);
    if (pyr_wisdom_store_put_constants(&c) != PYR_OK || pyr_wisdom_export_file(path) != PYR_OK) {
        fprintf(stderr, "child %d: %s\n", k, pyr_last_error());
        return 1;
    }
    return 0;
}

static const char *program;
static int calibrate_import(int k, void *arg)
{
    (void)arg;
    char file[700];
    snprintf(file, sizeof file, "%s/in%d", dir, k);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 1);
    execl(program, "pyrgrid", "calibrate", "--import", file, (char *)NULL);
    _exit(127);
}

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "%s/test_wisdom_lock_XXXXXX", PYR_BINARY_DIR);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[700], lock[710];
    snprintf(path, sizeof path, "%s/shared/wisdom", dir);
    snprintf(lock, sizeof lock, "%s.lock", path);

    for (int round = 0; round < 10; round++) {
        unlink(path);
        int failures = 0;
        at_once(6, export_one, path, &failures);
        int have = count_records(path, "lock test device", 6);
        CHECK(failures == 0 && have == 6, "round %d: %d of 6 concurrent exports kept (%d failed)", round, have, failures);
    }

    /* 3. sinks: written in place, no lock, nothing read */
    {
        char fifo[720], fifo_lock[730], sink[720], sink_lock[730];
        snprintf(fifo, sizeof fifo, "%s/fifo", dir);
        snprintf(fifo_lock, sizeof fifo_lock, "%s.lock", fifo);
        snprintf(sink, sizeof sink, "%s/null", dir);
        snprintf(sink_lock, sizeof sink_lock, "%s.lock", sink);
        pyr_wisdom_forget();
        pyr_wisdom_constants_t c = record("sink test device");
        CHECK_OK(pyr_wisdom_store_put_constants(&c));
        CHECK(mkfifo(fifo, 0600) == 0, "mkfifo %s: %s", fifo, strerror(errno));
        /* the reader first (the writer's open does not wait for one); the text fits the pipe's buffer */
        int rd = open(fifo, O_RDONLY | O_NONBLOCK);
        CHECK(rd >= 0, "open %s: %s", fifo, strerror(errno));
        CHECK_OK(pyr_wisdom_export_file(fifo));
        static char got[65536];
        ssize_t n = rd >= 0 ? read(rd, got, sizeof got - 1) : -1;
        if (rd >= 0) close(rd);
        got[n > 0 ? n : 0] = 0;
        CHECK(n > 0 && strstr(got, "pyrgrid-wisdom") == got && strstr(got, "sink test device"), "the FIFO got %zd bytes: '%.200s'", n, got);
        struct stat sb;
        CHECK(stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode), "%s is no longer a FIFO", fifo);
        CHECK(access(fifo_lock, F_OK) != 0, "a lock file %s was made beside a FIFO", fifo_lock);
        CHECK(symlink("/dev/null", sink) == 0, "symlink %s: %s", sink, strerror(errno));
        CHECK_OK(pyr_wisdom_export_file(sink));
        CHECK(access(sink_lock, F_OK) != 0, "a lock file %s was made beside a device", sink_lock);
        CHECK(lstat(sink, &sb) == 0 && S_ISLNK(sb.st_mode) && stat(sink, &sb) == 0 && S_ISCHR(sb.st_mode), "%s was replaced", sink);
        /* the default file a sink: nothing to import, no error (a FIFO with no writer would give nothing either) */
        const char *old = getenv("PYRGRID_WISDOM");
        char *keep = old ? strdup(old) : NULL;
        char where[PYR_PATH_MAX];
        int found = 1;
        setenv("PYRGRID_WISDOM", sink, 1);
        CHECK_OK(pyr_wisdom_store_import_default(where, sizeof where, &found));
        CHECK(found == 0, "a device as the wisdom file counted as found");
        found = 1;
        setenv("PYRGRID_WISDOM", fifo, 1);
        CHECK_OK(pyr_wisdom_store_import_default(where, sizeof where, &found));
        CHECK(found == 0, "a FIFO as the wisdom file counted as found");
        if (keep) setenv("PYRGRID_WISDOM", keep, 1);
        else unsetenv("PYRGRID_WISDOM");
        free(keep);
        pyr_wisdom_forget();
    }

    if (argc > 1) {
        program = argv[1];
        for (int k = 0; k < 4; k++) {
            char file[700], dev[64];
            snprintf(file, sizeof file, "%s/in%d", dir, k);
            snprintf(dev, sizeof dev, "cli device %d", k);
            pyr_wisdom_t *w = malloc(sizeof *w);
            pyr_wisdom_init(w);
            pyr_wisdom_constants_t c = record(dev);
            CHECK_OK(pyr_wisdom_put_constants(w, &c));
            CHECK_OK(pyr_wisdom_save(file, w));
            free(w);
        }
        setenv("PYRGRID_WISDOM", path, 1);
        for (int round = 0; round < 10; round++) {
            unlink(path);
            int failures = 0;
            at_once(4, calibrate_import, NULL, &failures);
            int have = count_records(path, "cli device", 4);
            CHECK(failures == 0 && have == 4, "round %d: %d of 4 concurrent 'pyrgrid calibrate --import' kept (%d failed)", round,
                  have, failures);
        }
    }
    int rc = check_report();
    char cmd[800];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (rc == 0 && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return rc;
}
