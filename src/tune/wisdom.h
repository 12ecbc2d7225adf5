/* Wisdom (FFTW's word): what pyrgrid measured on this machine.  The process
 * keeps one store in memory (pyr_wisdom_import_file / export_file / forget
 * in pyrgrid.h); the planner reads and adds to that store only.  Files are
 * read and written by programs through the public calls; the pyrgrid
 * program uses pyr_wisdom_default_path ($PYRGRID_WISDOM, else
 * $XDG_CACHE_HOME/pyrgrid/wisdom, else $HOME/.cache/pyrgrid/wisdom).
 *
 * Format (UTF-8 text, fields separated by one TAB):
 *
 *     pyrgrid-wisdom<TAB>1
 *     machine<TAB><hostname> / <CPU model>
 *     constants<TAB>cpu|cuda<TAB><device><TAB><version><TAB>float|double<TAB><dims><TAB>
 *         up=..<TAB>down=..<TAB>up_both=..<TAB>down_both=..<TAB>row=..<TAB>call=..<TAB>launch=..<TAB>host=..<TAB>
 *         up_strided=..<TAB>down_strided=..<TAB>up_ragged=..<TAB>down_ragged=..<TAB>compute_row=..<TAB>
 *         up_row_busy=..<TAB>down_row_busy=..<TAB>up_part_row=..<TAB>down_part_row=..<TAB>up_row_both=..<TAB>
 *         compute=<c1>,<c2>,...[<TAB>scheme=<name>][<TAB>kernel=<variant>]
 *         [<TAB>longvector=<t_kernel>,<t_add>,<t_saxpy>,<t_scal>,<threads>]  (one compute value per entry of
 *         pyr_model_layers; records of earlier versions, without the upload cost beside downloads, the part-row, busy-row, per-row compute,
 *         ragged-row or strided costs, are read with those unset; without scheme= a record is heat's;
 *         longvector=, the long-vector method's constants (plan/longvector.h), is written by calibrations
 *         of the CUDA 2D heat kernel; records without it leave the method on its defaults)
 *     choice<TAB>cpu|cuda<TAB><device><TAB><version><TAB><problem key><TAB><decomposition><TAB><height>[<TAB>slots=<n>][<TAB>kernel=<variant>]
 *     checksum<TAB><FNV-1a 64 of every byte before this line, 16 hex digits>
 *
 * (a constants record is one line).  A file whose first line, version,
 * checksum or syntax is wrong, or that was written on another machine, is
 * rejected as a whole with a message and never used. */
#ifndef PYR_TUNE_WISDOM_H
#define PYR_TUNE_WISDOM_H

#include "plan/model.h"
#include "pyrgrid.h"

#define PYR_WISDOM_VERSION 1
#define PYR_WISDOM_KEY 160
#define PYR_WISDOM_MAX_CONSTANTS 64
#define PYR_WISDOM_MAX_CHOICES 256

typedef struct {
    pyr_backend_kind_t backend;
    char device[PYR_WISDOM_KEY];  /* "Intel(R) Xeon(R) Processor, 2 threads", "NVIDIA <name>, 79.1 GiB, cc 9.0" */
    char version[32];             /* pyrgrid version that measured it */
    char scheme[16];              /* "heat", "poisson", "maxwell": the kernel the compute costs are of */
    char kernel[32];              /* the fastest variant calibration found ("" = the kernel's default) */
    pyr_precision_t precision;
    int dims;
    pyr_model_constants_t k;
} pyr_wisdom_constants_t;

typedef struct {
    pyr_backend_kind_t backend;
    char device[PYR_WISDOM_KEY];
    char version[32];
    char problem[PYR_WISDOM_KEY]; /* see pyr_wisdom_problem_key */
    pyr_decomp_t decomp;
    int64_t height;
    int slots; /* 0: the backend's default (records written before slots were chosen) */
    char kernel[32]; /* the variant measured with ("" = the planner's choice) */
} pyr_wisdom_choice_t;

typedef struct {
    char machine[2 * PYR_WISDOM_KEY];
    int nconstants, nchoices;
    pyr_wisdom_constants_t constants[PYR_WISDOM_MAX_CONSTANTS];
    pyr_wisdom_choice_t choices[PYR_WISDOM_MAX_CHOICES];
} pyr_wisdom_t;


/* "<hostname> / <CPU model>". */
void pyr_wisdom_machine(char *out, size_t size);
/* The device key of a backend: CPU model and thread count, or the GPU's
 * name, memory and compute capability. */
pyr_status_t pyr_wisdom_device(pyr_backend_kind_t backend, int device, int threads, char *out, size_t size);

/* An empty wisdom for this machine. */
void pyr_wisdom_init(pyr_wisdom_t *w);

/* Read a wisdom file into *w (allocated by the caller).  A missing file gives
 * PYR_OK with *found = 0 and an empty wisdom.  A corrupt or foreign file
 * gives PYR_ERR_FORMAT, a message naming the file and what is wrong, and an
 * empty wisdom: nothing of it is used. */
pyr_status_t pyr_wisdom_load(const char *path, pyr_wisdom_t *w, int *found);
/* Write atomically (no lock, no merge: see pyr_wisdom_export_file),
 * creating the directory if needed; a character device or a FIFO is written
 * in place (io/atomic.h). */
pyr_status_t pyr_wisdom_save(const char *path, const pyr_wisdom_t *w);

/* Text of the file (the caller frees it), and parsing from text (same
 * checks as pyr_wisdom_load; `source` names it in messages). */
pyr_status_t pyr_wisdom_to_text(const pyr_wisdom_t *w, char **text);
pyr_status_t pyr_wisdom_from_text(const char *text, const char *source, pyr_wisdom_t *w);

/* Add or replace a record with the same key. */
pyr_status_t pyr_wisdom_put_constants(pyr_wisdom_t *w, const pyr_wisdom_constants_t *c);
pyr_status_t pyr_wisdom_put_choice(pyr_wisdom_t *w, const pyr_wisdom_choice_t *c);
/* Merge every record of src into dst (src's win). */
pyr_status_t pyr_wisdom_merge(pyr_wisdom_t *dst, const pyr_wisdom_t *src);

/* Find a record; NULL when there is none. */
const pyr_wisdom_constants_t *pyr_wisdom_find_constants(const pyr_wisdom_t *w, pyr_backend_kind_t backend, const char *device,
                                                        const char *scheme, pyr_precision_t precision, int dims);
const pyr_wisdom_choice_t *pyr_wisdom_find_choice(const pyr_wisdom_t *w, pyr_backend_kind_t backend, const char *device,
                                                  const char *problem);

/* The key of a planning problem for measured choices: scheme (other than
 * heat) with its part of the key, grid, precision, budget, requested
 * decomposition, piece size and kernel variant. */
void pyr_wisdom_problem_key(const pyr_problem_t *p, const pyr_options_t *o, uint64_t budget, char *out, size_t size);

/* ------------------------------------------------ the process's store */

/* A copy of the store.  *source (may be NULL) gets where its records came
 * from, for messages ("/home/u/.cache/pyrgrid/wisdom", "no wisdom file
 * imported"); *rejected (may be NULL) the message of the last import that
 * was rejected since the last forget, or "". */
void pyr_wisdom_store_get(pyr_wisdom_t *copy, char *source, size_t source_size, char *rejected, size_t rejected_size);
/* Add a record to the store (replacing one with the same key). */
pyr_status_t pyr_wisdom_store_put_constants(const pyr_wisdom_constants_t *c);
pyr_status_t pyr_wisdom_store_put_choice(const pyr_wisdom_choice_t *c);
/* Changes to the store so far: a program compares two readings to learn
 * whether a plan recorded something worth exporting. */
unsigned long pyr_wisdom_store_generation(void);
/* pyr_wisdom_import_file, telling whether the file existed. */
pyr_status_t pyr_wisdom_store_import(const char *path, int *found);
/* The same for the default file (pyr_wisdom_default_path, written into
 * path[size], empty when there is none), as programs import it before
 * planning: the pyrgrid program and the benchmarks.  A character device or
 * a FIFO there is a sink that exports write in place: nothing is read from
 * it (PYR_OK, *found = 0). */
pyr_status_t pyr_wisdom_store_import_default(char *path, size_t size, int *found);
/* pyr_wisdom_export_file; with replace_rejected, a file there that is not
 * wisdom of this machine is replaced (pyrgrid calibrate) instead of failing.
 * A character device or a FIFO at path gets the store written in place, with
 * no lock file beside it and nothing read from it to merge. */
pyr_status_t pyr_wisdom_store_export(const char *path, int replace_rejected);

#endif
