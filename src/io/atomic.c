#include "io/atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

/* Longest part of the target's name kept in the temporary's name, so that
 * ".NAME.tmp.XXXXXX" stays under the usual 255-byte limit of a file name. */
#define PYR_TMP_NAME_KEEP 200

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

pyr_status_t pyr_atomic_open(pyr_atomic_file_t *af, const char *path)
{
    if (!af) return pyr_fail(PYR_ERR_ARG, "pyr_atomic_open: af is NULL");
    af->fp = NULL;
    af->path = NULL;
    af->tmp_path = NULL;
    if (!path || !*path) return pyr_fail(PYR_ERR_ARG, "output file name is empty; give a file name");
    const char *base = base_of(path);
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return pyr_fail(PYR_ERR_IO, "cannot write %s: it names a directory, not a file; add a file name",
                        path);

    char *dir = dir_of(path);
    size_t base_len = strlen(base);
    size_t keep = base_len < PYR_TMP_NAME_KEEP ? base_len : PYR_TMP_NAME_KEEP;
    size_t dir_len = dir ? strlen(dir) : 0;
    /* dir + "/." + base + ".tmp.XXXXXX" + NUL */
    char *tmp = malloc(dir_len + 2 + keep + 11 + 1);
    char *final = dup_string(path, strlen(path));
    if (!dir || !tmp || !final) {
        free(dir);
        free(tmp);
        free(final);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory opening %s for writing", path);
    }
    memcpy(tmp, dir, dir_len);
    size_t k = dir_len;
    if (k == 0 || tmp[k - 1] != '/') tmp[k++] = '/';
    tmp[k++] = '.';
    memcpy(tmp + k, base, keep);
    k += keep;
    memcpy(tmp + k, ".tmp.XXXXXX", 12);

    int fd = mkstemp(tmp);
    if (fd < 0) {
        int err = errno;
        char why[768];
        explain_dir_errno(err, dir, why, sizeof why);
        free(dir);
        free(tmp);
        free(final);
        return pyr_fail(PYR_ERR_IO, "cannot write %s: %s", path, why);
    }
    free(dir);
    /* mkstemp creates mode 0600; give the result the mode a plain fopen would. */
    (void)fchmod(fd, 0666 & ~current_umask());
    FILE *fp = fdopen(fd, "wb");
    if (!fp) {
        int err = errno;
        close(fd);
        unlink(tmp);
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
}

pyr_status_t pyr_atomic_commit(pyr_atomic_file_t *af)
{
    if (!af || !af->fp || !af->tmp_path || !af->path) {
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
    } else if (fsync(fileno(af->fp)) != 0 && errno != EINVAL && errno != EROFS) {
        err = errno;
        what = "syncing";
    }
    if (fclose(af->fp) != 0 && !what) {
        err = errno;
        what = "closing";
    }
    af->fp = NULL;
    if (!what && rename(af->tmp_path, af->path) != 0) {
        err = errno;
        what = "renaming the finished temporary file onto";
    }
    if (what) {
        unlink(af->tmp_path);
        const char *hint = "";
        if (err == ENOSPC) hint = "; free some space or write elsewhere";
#ifdef EDQUOT
        else if (err == EDQUOT) hint = "; free some space (disk quota) or write elsewhere";
#endif
        else if (err == EISDIR) hint = "; a directory of that name is in the way";
        pyr_status_t st = pyr_fail(PYR_ERR_IO, "failed %s %s: %s%s (nothing was written)", what,
                                   af->path, strerror(err), hint);
        release(af);
        return st;
    }
    release(af);
    return PYR_OK;
}

void pyr_atomic_abort(pyr_atomic_file_t *af)
{
    if (!af) return;
    if (af->fp) fclose(af->fp);
    if (af->tmp_path) unlink(af->tmp_path);
    release(af);
}

pyr_status_t pyr_check_writable(const char *path)
{
    if (!path || !*path) return pyr_fail(PYR_ERR_ARG, "output file name is empty; give a file name");
    const char *base = base_of(path);
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return pyr_fail(PYR_ERR_IO, "cannot write %s: it names a directory, not a file; add a file name",
                        path);
    char *dir = dir_of(path);
    if (!dir) return pyr_fail(PYR_ERR_NOMEM, "out of memory checking %s", path);
    struct stat st;
    char why[768];
    pyr_status_t status = PYR_OK;
    if (stat(dir, &st) != 0) {
        explain_dir_errno(errno, dir, why, sizeof why);
        status = pyr_fail(PYR_ERR_IO, "cannot write %s: %s", path, why);
    } else if (!S_ISDIR(st.st_mode)) {
        status = pyr_fail(PYR_ERR_IO, "cannot write %s: %s is not a directory", path, dir);
    } else if (access(dir, W_OK | X_OK) != 0) {
        explain_dir_errno(errno, dir, why, sizeof why);
        status = pyr_fail(PYR_ERR_IO, "cannot write %s: %s", path, why);
    } else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        status = pyr_fail(PYR_ERR_IO, "cannot write %s: a directory of that name exists; choose another name",
                          path);
    }
    free(dir);
    return status;
}
