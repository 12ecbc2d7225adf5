/* realpath() is XSI */
#define _XOPEN_SOURCE 700

#include "io/atomic.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

/* Longest part of the target's name kept in the temporary's name, so that
 * ".NAME.tmp.PID@HOST.XXXXXX" stays under the usual 255-byte limit of a
 * file name. */
#define PYR_TMP_NAME_KEEP 200

#ifndef NAME_MAX
#define NAME_MAX 255
#endif

static char *dup_string(const char *s, size_t n)
{
    char *r = malloc(n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = '\0';
    }
    return r;
}

/* Directory part of path ("." when there is none, "/" for "/x"); malloc'd. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return dup_string(".", 1);
    size_t n = (size_t)(slash - path);
    while (n > 0 && path[n - 1] == '/') n--; /* "a//b" */
    if (n == 0) return dup_string("/", 1);
    return dup_string(path, n);
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* For a symbolic link that leads to nothing yet (a chain of links whose
 * last names a file that does not exist): that name, malloc'd; writing
 * creates it there and the links stay, as for a link to a file that
 * exists.  NULL when path is not such a link; *loop is then set when its
 * links lead back to themselves and no name can be written. */
static char *dangling_target(const char *path, int *loop)
{
    *loop = 0;
    struct stat st, lst;
    if (stat(path, &st) == 0 || lstat(path, &lst) != 0 || !S_ISLNK(lst.st_mode)) return NULL;
    char *cur = dup_string(path, strlen(path));
    for (int hops = 0; cur && hops < 40; hops++) {
        if (lstat(cur, &lst) != 0 || !S_ISLNK(lst.st_mode)) return cur;
        char link[PYR_PATH_MAX];
        ssize_t n = readlink(cur, link, sizeof link);
        char *dir = n > 0 && (size_t)n < sizeof link ? dir_of(cur) : NULL;
        char *next = dir ? malloc(strlen(dir) + (size_t)n + 2) : NULL;
        if (next && link[0] == '/') snprintf(next, (size_t)n + 1, "%.*s", (int)n, link);
        else if (next) sprintf(next, "%s%s%.*s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", (int)n, link);
        free(dir);
        free(cur);
        cur = next;
    }
    if (cur) *loop = 1;
    free(cur);
    return NULL;
}

static pyr_status_t link_loop(const char *path)
{
    return pyr_fail(PYR_ERR_IO, "cannot write %s: it is a symbolic link whose links lead back to themselves (a loop), so it names no file; "
                    "remove it (rm %s) or choose another name", path, path);
}

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISREG(m)) return "a regular file";
    return "neither a regular file nor a device";
}

/* Why the directory `dir` cannot hold a new file, from errno of a failed
 * create in it.  Fills msg. */
static void explain_dir_errno(int err, const char *dir, char *msg, size_t cap)
{
    switch (err) {
    case ENOENT: {
        struct stat st;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) /* e.g. /proc refuses new files */
            snprintf(msg, cap, "cannot create a file in directory %s: %s; choose another output directory",
                     dir, strerror(err));
        else
            snprintf(msg, cap, "directory %s does not exist; create it first (mkdir -p %s)", dir, dir);
        break;
    }
    case ENOTDIR:
        snprintf(msg, cap, "%s (or a parent of it) is not a directory", dir);
        break;
    case EACCES:
    case EPERM:
        snprintf(msg, cap, "directory %s is not writable (%s); choose another output directory",
                 dir, strerror(err));
        break;
    case EROFS:
        snprintf(msg, cap, "directory %s is on a read-only file system; choose another output directory",
                 dir);
        break;
    default:
        snprintf(msg, cap, "cannot create a file in directory %s: %s", dir, strerror(err));
        break;
    }
}

/* The process umask, read without changing it (Linux /proc), else 022. */
static mode_t current_umask(void)
{
    mode_t mask = 022;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return mask;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "Umask:", 6) == 0) {
            mask = (mode_t)(strtoul(line + 6, NULL, 8) & 0777);
            break;
        }
    }
    fclose(f);
    return mask;
}

/* A name we can write at all: not empty, not a directory's name, each part
 * within the file system's limits. */
static pyr_status_t check_name(const char *path)
{
    if (!path || !*path) return pyr_fail(PYR_ERR_ARG, "output file name is empty; give a file name");
    const char *base = base_of(path);
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return pyr_fail(PYR_ERR_IO, "cannot write %s: it names a directory, not a file; add a file name", path);
    if (strlen(path) >= PYR_PATH_MAX)
        return pyr_fail(PYR_ERR_IO, "cannot write %.60s...: the path is %zu bytes long, more than %d; use a shorter path", path,
                        strlen(path), PYR_PATH_MAX - 1);
    size_t blen = strlen(base);
    long max = NAME_MAX;
    char *dir = dir_of(path);
    if (dir) {
        errno = 0;
        long m = pathconf(dir, _PC_NAME_MAX);
        if (m > 0) max = m;
        free(dir);
    }
    if ((long)blen > max)
        return pyr_fail(PYR_ERR_IO, "cannot write %.60s...: its file name is %zu bytes long, more than the %ld bytes a name may "
                        "have on this file system; use a shorter name", path, blen, max);
    return PYR_OK;
}

/* ------------------------------------------------- signal-cleanup registry */

#define SLOTS 32
#define SLOT_PATH (PYR_PATH_MAX + 64)

/* A fixed table, so that a signal handler can read it: a slot's state is 0
 * (free), 1 (being filled) or 2 (names a live temporary). */
static char slot_path[SLOTS][SLOT_PATH];
static atomic_int slot_state[SLOTS];

static int register_temp(const char *tmp)
{
    size_t n = strlen(tmp);
    if (n >= SLOT_PATH) return -1;
    for (int i = 0; i < SLOTS; i++) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&slot_state[i], &expected, 1)) {
            memcpy(slot_path[i], tmp, n + 1);
            atomic_store(&slot_state[i], 2);
            return i;
        }
    }
    return -1; /* table full: the temporary is then only removed as a stale one later */
}

static void unregister_temp(int slot)
{
    if (slot >= 0 && slot < SLOTS) atomic_store(&slot_state[slot], 0);
}

static void on_fatal_signal(int sig)
{
    /* only async-signal-safe calls: unlink, sigaction, raise */
    for (int i = 0; i < SLOTS; i++)
        if (atomic_load(&slot_state[i]) == 2) unlink(slot_path[i]);
    static struct sigaction dfl; /* zero: SIG_DFL, empty mask, no flags */
    sigaction(sig, &dfl, NULL);
    raise(sig); /* delivered, with the default action, once this handler returns */
}

void pyr_atomic_cleanup_on_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigfillset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* ---------------------------------------------------------- temporaries */

/* Eight hex digits of the host's name, so that a temporary's owner is
 * known to be of this machine before its PID is asked about (a directory on
 * a shared file system may hold temporaries of live processes elsewhere). */
static unsigned host_tag(void)
{
    char host[256] = "";
    if (gethostname(host, sizeof host) != 0) host[0] = 0;
    host[sizeof host - 1] = 0;
    uint32_t h = 2166136261u;
    for (const char *c = host; *c; c++) h = (h ^ (unsigned char)*c) * 16777619u;
    return h;
}

/* Remove temporaries of `base` in `dir` named by this code whose process
 * (on this host) is gone: a run killed by SIGKILL, or a crash, left them. */
static void remove_stale_temps(const char *dir, const char *base, size_t keep)
{
    DIR *d = opendir(dir);
    if (!d) return;
    char prefix[PYR_TMP_NAME_KEEP + 16];
    int plen = snprintf(prefix, sizeof prefix, ".%.*s.tmp.", (int)keep, base);
    unsigned tag = host_tag();
    pid_t self = getpid();
    uid_t me = geteuid();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, (size_t)plen) != 0) continue;
        const char *q = e->d_name + plen;
        if (!isdigit((unsigned char)*q)) continue;
        char *end;
        long pid = strtol(q, &end, 10);
        if (*end != '@' || pid <= 0 || pid == (long)self) continue;
        const char *hex = end + 1;
        int ok = 1;
        for (int k = 0; k < 8 && ok; k++) ok = isxdigit((unsigned char)hex[k]) != 0;
        if (!ok || hex[8] != '.' || strlen(hex + 9) != 6) continue;
        if ((unsigned)strtoul(hex, NULL, 16) != tag) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive (or another user's) */
        size_t n = strlen(dir) + 1 + strlen(e->d_name) + 1;
        char *full = malloc(n);
        if (!full) break;
        snprintf(full, n, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(full, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == me) (void)unlink(full);
        free(full);
    }
    closedir(d);
}

/* Write a character device or FIFO where it is. */
static pyr_status_t open_in_place(pyr_atomic_file_t *af, const char *path, mode_t mode)
{
    /* O_NONBLOCK: opening a FIFO for writing would wait for a reader */
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        if (err == ENXIO && S_ISFIFO(mode))
            return pyr_fail(PYR_ERR_IO, "cannot write %s: it is a FIFO (named pipe) that no process is reading; start the "
                            "reader first (e.g. 'cat %s > copy &'), or write a regular file", path, path);
        return pyr_fail(PYR_ERR_IO, "cannot write %s (%s): %s", path, kind_of(mode), strerror(err));
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *fp = fdopen(fd, "wb");
    char *name = dup_string(path, strlen(path));
    if (!fp || !name) {
        int err = errno;
        if (fp) fclose(fp);
        else close(fd);
        free(name);
        return pyr_fail(PYR_ERR_IO, "cannot write %s: %s", path, strerror(err));
    }
    af->fp = fp;
    af->path = name;
    return PYR_OK;
}

pyr_status_t pyr_atomic_open(pyr_atomic_file_t *af, const char *path)
{
    if (!af) return pyr_fail(PYR_ERR_ARG, "pyr_atomic_open: af is NULL");
    af->fp = NULL;
    af->path = NULL;
    af->tmp_path = NULL;
    af->slot = -1;
    PYR_TRY(check_name(path));

    char *final = NULL;
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return open_in_place(af, path, st.st_mode);
        if (S_ISDIR(st.st_mode))
            return pyr_fail(PYR_ERR_IO, "cannot write %s: a directory of that name exists; choose another name", path);
        if (!S_ISREG(st.st_mode))
            return pyr_fail(PYR_ERR_IO, "cannot write %s: it is %s; pyrgrid replaces regular files, and writes character "
                            "devices (such as /dev/null) and FIFOs in place; choose another name", path, kind_of(st.st_mode));
        struct stat lst;
        if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) final = realpath(path, NULL); /* keep the link */
    } else {
        int loop;
        final = dangling_target(path, &loop); /* keep the link: create what it names */
        if (loop) return link_loop(path);
        pyr_status_t named = final ? check_name(final) : PYR_OK;
        if (named != PYR_OK) {
            free(final);
            return named;
        }
    }
    if (!final) final = dup_string(path, strlen(path));
    char *dir = final ? dir_of(final) : NULL;
    const char *base = final ? base_of(final) : "";
    size_t base_len = strlen(base);
    size_t keep = base_len < PYR_TMP_NAME_KEEP ? base_len : PYR_TMP_NAME_KEEP;
    size_t dir_len = dir ? strlen(dir) : 0;
    /* dir + "/." + base + ".tmp." + pid + "@" + 8 hex + ".XXXXXX" + NUL */
    size_t cap = dir_len + 2 + keep + 5 + 24 + 1 + 8 + 7 + 1;
    char *tmp = malloc(cap);
    if (!dir || !tmp || !final) {
        free(dir);
        free(tmp);
        free(final);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory opening %s for writing", path);
    }
    remove_stale_temps(dir, base, keep);
    snprintf(tmp, cap, "%s%s.%.*s.tmp.%ld@%08x.XXXXXX", dir, dir[dir_len - 1] == '/' ? "" : "/", (int)keep, base, (long)getpid(),
             host_tag());

    int fd = mkstemp(tmp);
    if (fd < 0) {
        int err = errno;
        char why[768], via[PYR_PATH_MAX + 32] = "";
        explain_dir_errno(err, dir, why, sizeof why);
        if (strcmp(final, path)) snprintf(via, sizeof via, " (a symbolic link to %s)", final);
        free(dir);
        free(tmp);
        free(final);
        return pyr_fail(PYR_ERR_IO, "cannot write %s%s: %s", path, via, why);
    }
    free(dir);
    af->slot = register_temp(tmp);
    /* mkstemp creates mode 0600; give the result the mode a plain fopen would. */
    (void)fchmod(fd, 0666 & ~current_umask());
    FILE *fp = fdopen(fd, "wb");
    if (!fp) {
        int err = errno;
        close(fd);
        unlink(tmp);
        unregister_temp(af->slot);
        af->slot = -1;
        free(tmp);
        free(final);
        return pyr_fail(PYR_ERR_IO, "cannot write %s: %s", path, strerror(err));
    }
    af->fp = fp;
    af->path = final;
    af->tmp_path = tmp;
    return PYR_OK;
}

static void release(pyr_atomic_file_t *af)
{
    free(af->path);
    free(af->tmp_path);
    af->path = NULL;
    af->tmp_path = NULL;
    af->fp = NULL;
    af->slot = -1;
}

static _Thread_local pyr_atomic_stage_t *current_stage;

static const char *space_hint(int err)
{
    if (err == ENOSPC) return "; free some space or write elsewhere";
#ifdef EDQUOT
    if (err == EDQUOT) return "; free some space (disk quota) or write elsewhere";
#endif
    if (err == EFBIG) return "; the file size limit (ulimit -f) or the file system's does not allow it";
    if (err == EISDIR) return "; a directory of that name is in the way";
    return "";
}

static pyr_status_t commit(pyr_atomic_file_t *af, int may_stage);

pyr_status_t pyr_atomic_commit(pyr_atomic_file_t *af) { return commit(af, 1); }
pyr_status_t pyr_atomic_commit_now(pyr_atomic_file_t *af) { return commit(af, 0); }

static pyr_status_t commit(pyr_atomic_file_t *af, int may_stage)
{
    if (!af || !af->fp || !af->path) {
        if (af) pyr_atomic_abort(af);
        return pyr_fail(PYR_ERR_ARG, "pyr_atomic_commit: file is not open");
    }
    int err = 0;
    const char *what = NULL;
    if (fflush(af->fp) != 0) {
        err = errno;
        what = "writing";
    } else if (ferror(af->fp)) {
        err = errno ? errno : EIO;
        what = "writing";
    } else if (af->tmp_path && fsync(fileno(af->fp)) != 0 && errno != EINVAL && errno != EROFS) {
        err = errno;
        what = "syncing";
    }
    if (fclose(af->fp) != 0 && !what) {
        err = errno;
        what = "closing";
    }
    af->fp = NULL;
    if (!af->tmp_path) { /* a device or FIFO, written in place */
        pyr_status_t st = PYR_OK;
        if (what) st = pyr_fail(PYR_ERR_IO, "failed %s %s: %s", what, af->path, strerror(err));
        release(af);
        return st;
    }
    pyr_atomic_stage_t *stage = may_stage ? current_stage : NULL;
    if (!what && stage) {
        if (stage->n == PYR_ATOMIC_STAGE_MAX) {
            err = EMFILE;
            what = "staging (too many outputs for one stage)";
        } else {
            stage->tmp[stage->n] = af->tmp_path;
            stage->path[stage->n] = af->path;
            stage->slot[stage->n] = af->slot;
            stage->n++;
            af->tmp_path = af->path = NULL; /* the stage owns them now */
            release(af);
            return PYR_OK;
        }
    }
    if (!what && rename(af->tmp_path, af->path) != 0) {
        err = errno;
        what = "renaming the finished temporary file onto";
    }
    if (what) {
        unlink(af->tmp_path);
        unregister_temp(af->slot);
        pyr_status_t st = pyr_fail(PYR_ERR_IO, "failed %s %s: %s%s (nothing was written)", what, af->path, strerror(err),
                                   space_hint(err));
        release(af);
        return st;
    }
    unregister_temp(af->slot);
    release(af);
    return PYR_OK;
}

void pyr_atomic_abort(pyr_atomic_file_t *af)
{
    if (!af) return;
    if (af->fp) fclose(af->fp);
    if (af->tmp_path) {
        unlink(af->tmp_path);
        unregister_temp(af->slot);
    }
    release(af);
}

/* ------------------------------------------------------------------ stages */

void pyr_atomic_stage_begin(pyr_atomic_stage_t *stage)
{
    memset(stage, 0, sizeof *stage);
    stage->prev = current_stage;
    current_stage = stage;
}

static void stage_end(pyr_atomic_stage_t *stage)
{
    if (current_stage == stage) current_stage = stage->prev;
    for (int i = 0; i < stage->n; i++) {
        free(stage->tmp[i]);
        free(stage->path[i]);
    }
    stage->n = 0;
}

pyr_status_t pyr_atomic_stage_commit(pyr_atomic_stage_t *stage)
{
    pyr_status_t st = PYR_OK;
    for (int i = 0; i < stage->n; i++) {
        if (st == PYR_OK && rename(stage->tmp[i], stage->path[i]) != 0) {
            int err = errno;
            char done[512] = "";
            for (int j = 0; j < i; j++) {
                size_t l = strlen(done);
                snprintf(done + l, sizeof done - l, "%s%s", j ? ", " : "", stage->path[j]);
            }
            if (i == 0)
                st = pyr_fail(PYR_ERR_IO, "failed renaming the finished temporary file onto %s: %s; no output was changed",
                              stage->path[i], strerror(err));
            else
                st = pyr_fail(PYR_ERR_IO, "failed renaming the finished temporary file onto %s: %s; written: %s; %s and the "
                              "outputs after it kept their old contents", stage->path[i], strerror(err), done, stage->path[i]);
        }
        if (st != PYR_OK) unlink(stage->tmp[i]);
        unregister_temp(stage->slot[i]);
    }
    stage_end(stage);
    return st;
}

void pyr_atomic_stage_abort(pyr_atomic_stage_t *stage)
{
    for (int i = 0; i < stage->n; i++) {
        unlink(stage->tmp[i]);
        unregister_temp(stage->slot[i]);
    }
    stage_end(stage);
}

/* ------------------------------------------------------------------ checks */

pyr_status_t pyr_check_writable(const char *path)
{
    PYR_TRY(check_name(path));
    struct stat st;
    const char *target = path;
    char *real = NULL;
    if (stat(path, &st) == 0) {
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            /* written in place: the directory does not matter (/dev is not writable to users) */
            if (access(path, W_OK) != 0)
                return pyr_fail(PYR_ERR_IO, "cannot write %s (%s): %s", path, kind_of(st.st_mode), strerror(errno));
            return PYR_OK;
        }
        if (S_ISDIR(st.st_mode))
            return pyr_fail(PYR_ERR_IO, "cannot write %s: a directory of that name exists; choose another name", path);
        if (!S_ISREG(st.st_mode))
            return pyr_fail(PYR_ERR_IO, "cannot write %s: it is %s; pyrgrid replaces regular files, and writes character "
                            "devices (such as /dev/null) and FIFOs in place; choose another name", path, kind_of(st.st_mode));
        struct stat lst;
        if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && (real = realpath(path, NULL)) != NULL) target = real;
    } else {
        int loop;
        if ((real = dangling_target(path, &loop)) != NULL) target = real;
        else if (loop) return link_loop(path);
        pyr_status_t named = real ? check_name(real) : PYR_OK;
        if (named != PYR_OK) {
            free(real);
            return named;
        }
    }
    char via[PYR_PATH_MAX + 32] = "";
    if (target != path) snprintf(via, sizeof via, " (a symbolic link to %s)", target);
    char *dir = dir_of(target);
    if (!dir) {
        free(real);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory checking %s", path);
    }
    char why[768];
    pyr_status_t status = PYR_OK;
    if (stat(dir, &st) != 0) {
        explain_dir_errno(errno, dir, why, sizeof why);
        status = pyr_fail(PYR_ERR_IO, "cannot write %s%s: %s", path, via, why);
    } else if (!S_ISDIR(st.st_mode)) {
        status = pyr_fail(PYR_ERR_IO, "cannot write %s%s: %s is not a directory", path, via, dir);
    } else if (access(dir, W_OK | X_OK) != 0) {
        explain_dir_errno(errno, dir, why, sizeof why);
        status = pyr_fail(PYR_ERR_IO, "cannot write %s%s: %s", path, via, why);
    }
    free(dir);
    free(real);
    return status;
}

/* A file's identity: its device and inode when it exists, else its
 * directory's and its name. */
typedef struct {
    int known, exists;
    dev_t dev;
    ino_t ino;
    char name[PYR_PATH_MAX]; /* of a file not yet created */
} file_id_t;

static file_id_t file_id(const char *path)
{
    file_id_t id = {0, 0, 0, 0, ""};
    struct stat st;
    if (!path || !*path) return id;
    if (stat(path, &st) == 0) {
        id.known = id.exists = 1;
        id.dev = st.st_dev;
        id.ino = st.st_ino;
        return id;
    }
    /* a link to nothing yet: writing it creates the name it gives */
    int loop;
    char *target = dangling_target(path, &loop);
    const char *name = target ? target : path;
    char *dir = dir_of(name);
    if (dir && stat(dir, &st) == 0) {
        id.known = 1;
        id.dev = st.st_dev;
        id.ino = st.st_ino;
        snprintf(id.name, sizeof id.name, "%s", base_of(name));
    }
    free(dir);
    free(target);
    return id;
}

static int same_id(const file_id_t *a, const file_id_t *b)
{
    if (!a->known || !b->known || a->exists != b->exists) return 0;
    if (a->dev != b->dev || a->ino != b->ino) return 0;
    return a->exists || !strcmp(a->name, b->name);
}

int pyr_same_file(const char *a, const char *b)
{
    file_id_t x = file_id(a), y = file_id(b);
    return same_id(&x, &y);
}

int pyr_is_char_device(const char *path)
{
    struct stat st;
    return path && *path && stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

pyr_status_t pyr_check_outputs(const pyr_named_path_t *out, int nout, const pyr_named_path_t *in, int nin)
{
    for (int i = 0; i < nout; i++) {
        if (!out[i].path || !out[i].path[0]) continue;
        pyr_status_t st = pyr_check_writable(out[i].path);
        if (st != PYR_OK) return pyr_fail_context(st, "%s: ", out[i].name);
        for (int j = 0; j < nin; j++) {
            if (!in[j].path || !in[j].path[0] || !pyr_same_file(out[i].path, in[j].path)) continue;
            return pyr_fail(PYR_ERR_IO, "%s = %s is the same file as the input %s = %s; writing it would destroy the input; "
                            "choose another name", out[i].name, out[i].path, in[j].name, in[j].path);
        }
        for (int j = 0; j < i; j++) {
            if (!out[j].path || !out[j].path[0] || !pyr_same_file(out[i].path, out[j].path) || pyr_is_char_device(out[i].path))
                continue;
            return pyr_fail(PYR_ERR_IO, "%s = %s is the same file as %s = %s; one would overwrite the other; give each output "
                            "its own name", out[i].name, out[i].path, out[j].name, out[j].path);
        }
    }
    return PYR_OK;
}

/* ------------------------------------------------------------------ inputs */

pyr_status_t pyr_open_input(const char *path, const char *what, FILE **fp, int64_t *size, int *missing)
{
    *fp = NULL;
    if (missing) *missing = 0;
    if (!path || !*path) return pyr_fail(PYR_ERR_ARG, "input file name is empty");
    /* O_NONBLOCK: opening a FIFO would wait for a writer (initial.file = a FIFO hung) */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT) {
            if (missing) *missing = 1;
            return pyr_fail(PYR_ERR_IO, "cannot read %s: file does not exist", path);
        }
        return pyr_fail(PYR_ERR_IO, "cannot read %s: %s", path, strerror(err));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return pyr_fail(PYR_ERR_IO, "cannot read %s: %s", path, strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return pyr_fail(PYR_ERR_IO, "cannot read %s: not a regular file (it is %s); %ss are read from regular files only", path,
                        kind_of(st.st_mode), what);
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int err = errno;
        close(fd);
        return pyr_fail(PYR_ERR_IO, "cannot read %s: %s", path, strerror(err));
    }
    *fp = f;
    if (size) *size = (int64_t)st.st_size;
    return PYR_OK;
}

/* ------------------------------------------------- the public opaque handles */

/* Programs hold stages and files by handle (pyrgrid_output.h), so that the
 * structs above may change without breaking them. */
struct pyr_output_stage {
    pyr_atomic_stage_t stage;
};

struct pyr_output_file {
    pyr_atomic_file_t file;
};

pyr_status_t pyr_output_stage_begin(pyr_output_stage_t **stage)
{
    if (!stage) return pyr_fail(PYR_ERR_ARG, "pyr_output_stage_begin: stage is NULL");
    *stage = calloc(1, sizeof **stage);
    if (!*stage) return pyr_fail(PYR_ERR_NOMEM, "out of memory starting a stage of outputs");
    pyr_atomic_stage_begin(&(*stage)->stage);
    return PYR_OK;
}

pyr_status_t pyr_output_stage_commit(pyr_output_stage_t **stage)
{
    if (!stage || !*stage) return pyr_fail(PYR_ERR_ARG, "pyr_output_stage_commit: no stage (begin one with pyr_output_stage_begin)");
    pyr_status_t st = pyr_atomic_stage_commit(&(*stage)->stage);
    free(*stage);
    *stage = NULL;
    return st;
}

void pyr_output_stage_abort(pyr_output_stage_t **stage)
{
    if (!stage || !*stage) return;
    pyr_atomic_stage_abort(&(*stage)->stage);
    free(*stage);
    *stage = NULL;
}

pyr_status_t pyr_output_file_open(pyr_output_file_t **file, const char *path)
{
    if (!file) return pyr_fail(PYR_ERR_ARG, "pyr_output_file_open: file is NULL");
    *file = NULL;
    if (!path || !path[0]) return pyr_fail(PYR_ERR_ARG, "pyr_output_file_open: no path given");
    pyr_output_file_t *f = calloc(1, sizeof *f);
    if (!f) return pyr_fail(PYR_ERR_NOMEM, "out of memory opening %s", path);
    pyr_status_t st = pyr_atomic_open(&f->file, path);
    if (st != PYR_OK) {
        free(f);
        return st;
    }
    *file = f;
    return PYR_OK;
}

FILE *pyr_output_file_stream(const pyr_output_file_t *file) { return file ? file->file.fp : NULL; }

pyr_status_t pyr_output_file_commit(pyr_output_file_t **file)
{
    if (!file || !*file) return pyr_fail(PYR_ERR_ARG, "pyr_output_file_commit: no file (open one with pyr_output_file_open)");
    pyr_status_t st = pyr_atomic_commit(&(*file)->file);
    free(*file);
    *file = NULL;
    return st;
}

void pyr_output_file_abort(pyr_output_file_t **file)
{
    if (!file || !*file) return;
    pyr_atomic_abort(&(*file)->file);
    free(*file);
    *file = NULL;
}
