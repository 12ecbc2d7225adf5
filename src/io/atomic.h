/* Atomic output files: write to a temporary next to the target, then rename
 * over it, so that a reader never sees a half-written file and a failed write
 * leaves nothing behind. */
#ifndef PYR_IO_ATOMIC_H
#define PYR_IO_ATOMIC_H

#include <stdio.h>

#include "pyrgrid.h"

typedef struct {
    FILE *fp;       /* open for writing ("wb"); NULL when closed */
    char *path;     /* final name */
    char *tmp_path; /* ".NAME.tmp.XXXXXX" in the same directory */
} pyr_atomic_file_t;

/* Open a temporary file next to `path` for writing.  On failure af is left
 * empty (pyr_atomic_abort is then a no-op) and PYR_ERR_IO names the directory
 * and the reason. */
pyr_status_t pyr_atomic_open(pyr_atomic_file_t *af, const char *path);

/* Flush, check for write errors (disk full), sync, close and rename over
 * `path`.  On any failure the temporary is removed and PYR_ERR_IO returned.
 * Always frees af's resources. */
pyr_status_t pyr_atomic_commit(pyr_atomic_file_t *af);

/* Close and remove the temporary, free af's resources.  Safe to call on a
 * zeroed af, after a failed open, or twice. */
void pyr_atomic_abort(pyr_atomic_file_t *af);

/* Check, without creating anything, that `path` could be written: its
 * directory exists, is a directory and is writable, and `path` is not itself
 * a directory.  Lets a program fail before a long run rather than after. */
pyr_status_t pyr_check_writable(const char *path);

#endif
