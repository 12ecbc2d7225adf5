/* Output files that never destroy what they must not.
 *
 * What is at an output's path decides how it is written:
 *   - nothing, or a regular file: a temporary ".NAME.tmp.PID@HOST.XXXXXX" is
 *     written next to it and renamed over it, so that a reader never sees a
 *     half-written file and a failed write leaves the old file as it was (a
 *     symbolic link to a regular file is followed: its target is replaced,
 *     the link stays; so is a link to nothing yet: the file it names is
 *     created, in that file's directory, and the link stays; a link that
 *     leads back to itself names no file and is refused);
 *   - a character device (/dev/null as a discard sink) or a FIFO: written in
 *     place, never replaced.  A FIFO is opened without blocking; when no
 *     reader has it open the write is refused at once, with a message, rather
 *     than waiting for one;
 *   - anything else (a directory, a block device, a socket): refused.
 *
 * Several outputs of one command are committed together with a stage
 * (pyr_atomic_stage_begin): their temporaries are all written first and
 * renamed only when every one is complete; a failure removes the new
 * temporaries and leaves every old output as it was.
 *
 * Temporaries are registered (a fixed table) so that a program that calls
 * pyr_atomic_cleanup_on_signals() removes them when SIGINT, SIGTERM, SIGHUP,
 * SIGPIPE or SIGXFSZ ends it; temporaries of this naming left by a process
 * that died anyway (SIGKILL, a crash) are removed at the next write of the
 * same output on this host. */
#ifndef PYR_IO_ATOMIC_H
#define PYR_IO_ATOMIC_H

#include <stdint.h>
#include <stdio.h>

#include "pyrgrid.h"
#include "pyrgrid_output.h"

typedef struct {
    FILE *fp;       /* open for writing ("wb"); NULL when closed */
    char *path;     /* the name the data end up under (a link's target) */
    char *tmp_path; /* the temporary; NULL when writing a device or FIFO in place */
    int slot;       /* entry in the signal-cleanup table, or -1 */
} pyr_atomic_file_t;

/* Open `path` for writing as described above.  On failure af is left empty
 * (pyr_atomic_abort is then a no-op) and PYR_ERR_IO says what is in the way
 * and what would work. */
pyr_status_t pyr_atomic_open(pyr_atomic_file_t *af, const char *path);

/* Flush, check for write errors (disk full), sync and close; then rename the
 * temporary over the path, or, while a stage is active on this thread, hand
 * it to the stage.  On failure the temporary is removed and PYR_ERR_IO
 * returned.  Always frees af's resources. */
pyr_status_t pyr_atomic_commit(pyr_atomic_file_t *af);

/* The same, renaming at once even while a stage is active (a file written
 * under a lock, such as wisdom, must be in place before the lock goes). */
pyr_status_t pyr_atomic_commit_now(pyr_atomic_file_t *af);

/* Close and remove the temporary, free af's resources.  Safe to call on a
 * zeroed af, after a failed open, or twice. */
void pyr_atomic_abort(pyr_atomic_file_t *af);

/* ------------------------------------------------------------------ stages */

#define PYR_ATOMIC_STAGE_MAX 16

/* Outputs committed together.  Zero-initialise, or use stage_begin. */
typedef struct {
    int n;
    char *tmp[PYR_ATOMIC_STAGE_MAX], *path[PYR_ATOMIC_STAGE_MAX];
    int slot[PYR_ATOMIC_STAGE_MAX];
    void *prev; /* the stage that was active before this one */
} pyr_atomic_stage_t;

/* From now on, pyr_atomic_commit on this thread hands finished temporaries to
 * `stage` instead of renaming them (at most PYR_ATOMIC_STAGE_MAX). */
void pyr_atomic_stage_begin(pyr_atomic_stage_t *stage);
/* Rename every staged temporary over its path, in order, and end the stage.
 * Should a rename fail (it practically cannot: same directory), the outputs
 * before it hold their new contents, the rest keep their old ones, and the
 * message says which. */
pyr_status_t pyr_atomic_stage_commit(pyr_atomic_stage_t *stage);
/* Remove every staged temporary (old outputs stay as they are) and end the
 * stage.  Safe after a commit. */
void pyr_atomic_stage_abort(pyr_atomic_stage_t *stage);

/* The checks (pyr_check_outputs, pyr_check_writable, pyr_same_file,
 * pyr_is_char_device), pyr_open_input and pyr_atomic_cleanup_on_signals are
 * public: include/pyrgrid_output.h, with the opaque stage and file that
 * programs use instead of the structs above. */

#endif
