/* Host grid functions: their memory (allocation, wrapping, release), and
 * the caller's fields in a GPU's memory (pyr_field_wrap_device): their
 * headers are listed here with the device and stream, since a field's public
 * struct has no room for them and a caller may declare one itself. */
/* MADV_HUGEPAGE is not POSIX: glibc declares it under _DEFAULT_SOURCE, which
 * the library's _POSIX_C_SOURCE alone leaves off (and an #ifdef around the
 * advice then drops it without a word: grids were faulted in 4 KiB pages). */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/error.h"
#include "core/field.h"
#include "core/recipe.h"
#include "pyrgrid.h"

int64_t pyr_field_count(const pyr_field_t *f) { return f->n[0] * f->n[1] * f->n[2]; }

/* The header of a field made here, with what pyr_field_destroy must free
 * (a wrapped field's data belong to the caller). */
typedef struct field_box {
    pyr_field_t field;
    int owns_data;
    int device;        /* -1: host memory; else the GPU whose memory holds the data */
    uintptr_t stream;  /* the caller's stream of a device field (pyr_field_wrap_device) */
    struct field_box *next; /* in the list of device fields */
    size_t mapped;     /* bytes of data mapped for pyr_field_alloc_zero (unmapped, not freed) */
    int zero;          /* in the list of marked fields: the data unwritten since they were mapped */
    pyr_recipe_t recipe; /* what the values of a marked field are (zero: the pages as mapped) */
    int exposed;       /* a caller's (pyr_field_create_zero), who may have written the data: read before trusting */
    struct field_box *znext;
} field_box_t;

static pthread_mutex_t device_fields_lock = PTHREAD_MUTEX_INITIALIZER;
static field_box_t *device_fields;
/* Marked fields, by header: those known to hold zeros (pyr_field_alloc_zero)
 * and those whose values are a recipe (pyr_field_alloc_recipe).  A field the
 * executor is handed may be one a caller declared, whose header is no box. */
static field_box_t *zero_fields;

static pyr_field_t *new_header(int owns_data)
{
    field_box_t *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->owns_data = owns_data;
    b->device = -1;
    return &b->field;
}

/* The checks of a caller's field shape (pyr_field_wrap's and pyr_field_create_zero's); count: its values. */
static pyr_status_t check_shape(const char *who, int dims, const int64_t n[3], pyr_precision_t precision, pyr_field_t **out,
                                uint64_t *count_out)
{
    if (!out) return pyr_fail(PYR_ERR_ARG, "%s: out is NULL", who);
    *out = NULL;
    if (dims < 1 || dims > 3) return pyr_fail(PYR_ERR_ARG, "%s: dims = %d; use 1, 2 or 3", who, dims);
    if (!n) return pyr_fail(PYR_ERR_ARG, "%s: n is NULL", who);
    if (precision != PYR_FLOAT && precision != PYR_DOUBLE)
        return pyr_fail(PYR_ERR_ARG, "%s: precision %d is neither PYR_FLOAT nor PYR_DOUBLE", who, (int)precision);
    uint64_t count = 1;
    for (int d = 0; d < 3; d++) {
        if (d < dims && n[d] < 1) return pyr_fail(PYR_ERR_ARG, "%s: n[%d] = %lld; every axis needs a node", who, d, (long long)n[d]);
        if (d >= dims && n[d] != 1)
            return pyr_fail(PYR_ERR_ARG, "%s: n[%d] = %lld but dims = %d: axes beyond dims have 1 node", who, d, (long long)n[d], dims);
        if ((uint64_t)n[d] > (uint64_t)PTRDIFF_MAX / 8 / count)
            return pyr_fail(PYR_ERR_ARG, "%s: %lld x %lld x %lld values do not fit in addressable memory", who, (long long)n[0],
                            (long long)n[1], (long long)n[2]);
        count *= (uint64_t)n[d];
    }
    *count_out = count;
    return PYR_OK;
}

static pyr_status_t wrap(const char *who, int dims, const int64_t n[3], pyr_precision_t precision, void *data, pyr_field_t **out)
{
    uint64_t count = 0;
    PYR_TRY(check_shape(who, dims, n, precision, out, &count));
    if (!data) return pyr_fail(PYR_ERR_ARG, "%s: data is NULL; give the caller's buffer of %llu values", who, (unsigned long long)count);
    pyr_field_t *f = new_header(0);
    if (!f) return pyr_fail(PYR_ERR_NOMEM, "out of host memory allocating a field header");
    f->dims = dims;
    for (int d = 0; d < 3; d++) f->n[d] = n[d];
    f->precision = precision;
    f->data = data;
    *out = f;
    return PYR_OK;
}

pyr_status_t pyr_field_wrap(int dims, const int64_t n[3], pyr_precision_t precision, void *data, pyr_field_t **out)
{
    return wrap("pyr_field_wrap", dims, n, precision, data, out);
}

pyr_status_t pyr_field_wrap_on(int dims, const int64_t n[3], pyr_precision_t precision, void *data, int device, uintptr_t stream,
                               pyr_field_t **out)
{
    PYR_TRY(wrap("pyr_field_wrap_device", dims, n, precision, data, out));
    field_box_t *b = (field_box_t *)*out;
    b->device = device;
    b->stream = stream;
    pthread_mutex_lock(&device_fields_lock);
    b->next = device_fields;
    device_fields = b;
    pthread_mutex_unlock(&device_fields_lock);
    return PYR_OK;
}

int pyr_field_device(const pyr_field_t *field, uintptr_t *stream)
{
    int device = -1;
    if (!field) return device;
    pthread_mutex_lock(&device_fields_lock);
    for (const field_box_t *b = device_fields; b; b = b->next)
        if (&b->field == field) {
            device = b->device;
            if (stream) *stream = b->stream;
            break;
        }
    pthread_mutex_unlock(&device_fields_lock);
    return device;
}

pyr_status_t pyr_field_alloc(int dims, const int64_t n[3], pyr_precision_t precision, pyr_field_t **out)
{
    *out = NULL;
    pyr_field_t *f = new_header(1);
    if (!f) return pyr_fail(PYR_ERR_NOMEM, "out of host memory allocating a field header");
    f->dims = dims;
    for (int d = 0; d < 3; d++) f->n[d] = n[d];
    f->precision = precision;
    f->data = pyr_host_grid_alloc((size_t)pyr_field_count(f) * pyr_precision_size(precision));
    if (!f->data) {
        free((field_box_t *)f);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory for a field of %lld x %lld x %lld values", (long long)n[0], (long long)n[1],
                        (long long)n[2]);
    }
    *out = f;
    return PYR_OK;
}

pyr_status_t pyr_field_alloc_zero(int dims, const int64_t n[3], pyr_precision_t precision, pyr_field_t **out)
{
    *out = NULL;
    pyr_field_t *f = new_header(0);
    if (!f) return pyr_fail(PYR_ERR_NOMEM, "out of host memory allocating a field header");
    field_box_t *b = (field_box_t *)f;
    f->dims = dims;
    for (int d = 0; d < 3; d++) f->n[d] = n[d];
    f->precision = precision;
    const size_t bytes = (size_t)pyr_field_count(f) * pyr_precision_size(precision);
    b->mapped = bytes ? bytes : 1;
    /* fresh anonymous pages read as zero and cost nothing until touched */
    void *p = mmap(NULL, b->mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        free(b);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory for a field of %lld x %lld x %lld values", (long long)n[0], (long long)n[1],
                        (long long)n[2]);
    }
#if defined(MADV_HUGEPAGE)
    if (b->mapped >= (size_t)64 << 20) (void)madvise(p, b->mapped, MADV_HUGEPAGE); /* advice: refused is fine */
#endif
    f->data = p;
    b->zero = 1;
    b->recipe.kind = PYR_RECIPE_ZERO;
    b->recipe.dims = dims;
    for (int d = 0; d < 3; d++) b->recipe.whole[d] = n[d];
    pthread_mutex_lock(&device_fields_lock);
    b->znext = zero_fields;
    zero_fields = b;
    pthread_mutex_unlock(&device_fields_lock);
    *out = f;
    return PYR_OK;
}

pyr_status_t pyr_field_create_zero(int dims, const int64_t n[3], pyr_precision_t precision, pyr_field_t **out)
{
    uint64_t count = 0;
    PYR_TRY(check_shape("pyr_field_create_zero", dims, n, precision, out, &count));
    PYR_TRY(pyr_field_alloc_zero(dims, n, precision, out));
    field_box_t *b = (field_box_t *)*out;
    pthread_mutex_lock(&device_fields_lock);
    b->exposed = 1;
    pthread_mutex_unlock(&device_fields_lock);
    return PYR_OK;
}

/* Whether the pages of a zero field that its caller may have written still hold zeros: a page the
 * process never touched reads as zero (its page map says neither present nor swapped), any other is
 * read.  Without the page map, not known: the field is then used as any. */
static int pages_still_zero(const field_box_t *b)
{
    const long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || page % 8) return 0;
    const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    const uintptr_t start = (uintptr_t)b->field.data; /* mmap'd: page aligned */
    const size_t pages = (b->mapped + (size_t)page - 1) / (size_t)page;
    uint64_t map[1024];
    int zero = 1;
    for (size_t i = 0; i < pages && zero;) {
        const size_t k = pages - i < 1024 ? pages - i : 1024;
        if (pread(fd, map, k * sizeof map[0], (off_t)((start / (uintptr_t)page + i) * sizeof map[0])) != (ssize_t)(k * sizeof map[0])) {
            zero = 0;
            break;
        }
        for (size_t j = 0; j < k && zero; j++) {
            if (!(map[j] >> 62)) continue; /* bit 63: present, bit 62: swapped */
            const uint64_t *w = (const uint64_t *)(start + (i + j) * (size_t)page);
            uint64_t any = 0;
            for (size_t x = 0; x < (size_t)page / 8; x++) any |= w[x];
            zero = any == 0;
        }
        i += k;
    }
    close(fd);
    return zero;
}

/* Removes b from the zero fields; returns whether it was there (the lock held). */
static int unlist_zero(field_box_t *b)
{
    for (field_box_t **at = &zero_fields; *at; at = &(*at)->znext)
        if (*at == b) {
            *at = b->znext;
            b->zero = 0;
            return 1;
        }
    return 0;
}

/* The box of a marked field, or NULL (the lock held). */
static field_box_t *marked_box(const pyr_field_t *field)
{
    for (field_box_t *b = zero_fields; b; b = b->znext)
        if (&b->field == field) return b;
    return NULL;
}

/* Whether a field is marked (of kind `only` where that is not NONE), its recipe into *out (when
 * not NULL), and with `take` the mark removed.  A caller's field whose pages were written is no
 * longer marked.  Its page map is read without the lock (a large field's is hundreds of
 * megabytes, which every other field's lookup would wait for), and the field found again after. */
static int mark_of(const pyr_field_t *field, pyr_recipe_kind_t only, int take, pyr_recipe_t *out)
{
    if (!field) return 0;
    pthread_mutex_lock(&device_fields_lock);
    field_box_t *b = marked_box(field);
    const int ok = b && (only == PYR_RECIPE_NONE || b->recipe.kind == only), exposed = ok && b->exposed;
    pthread_mutex_unlock(&device_fields_lock);
    if (!ok) return 0;
    const int written = exposed && !pages_still_zero(b);
    pthread_mutex_lock(&device_fields_lock);
    b = marked_box(field);
    int marked = b != NULL;
    if (b && written) {
        unlist_zero(b);
        marked = 0;
    }
    if (marked && out) *out = b->recipe;
    if (marked && take) unlist_zero(b);
    pthread_mutex_unlock(&device_fields_lock);
    return marked;
}

int pyr_field_is_zero(const pyr_field_t *field) { return mark_of(field, PYR_RECIPE_ZERO, 0, NULL); }

int pyr_field_take_zero(pyr_field_t *field) { return mark_of(field, PYR_RECIPE_ZERO, 1, NULL); }

int pyr_field_recipe(const pyr_field_t *field, pyr_recipe_t *out) { return mark_of(field, PYR_RECIPE_NONE, 0, out); }

int pyr_field_take_recipe(pyr_field_t *field, pyr_recipe_t *out) { return mark_of(field, PYR_RECIPE_NONE, 1, out); }

pyr_status_t pyr_field_alloc_recipe(const pyr_recipe_t *recipe, pyr_precision_t precision, const int64_t n[3], pyr_field_t **out)
{
    *out = NULL;
    if (!recipe || recipe->kind == PYR_RECIPE_NONE || recipe->dims < 1 || recipe->dims > 3)
        return pyr_fail(PYR_ERR_INTERNAL, "pyr_field_alloc_recipe: no recipe, or one of %d dimensions", recipe ? recipe->dims : 0);
    for (int d = 0; d < 3; d++)
        if (recipe->origin[d] < 0 || n[d] < 1 || recipe->origin[d] + n[d] > recipe->whole[d])
            return pyr_fail(PYR_ERR_INTERNAL, "pyr_field_alloc_recipe: nodes %lld..%lld of axis %d lie outside the whole grid of %lld",
                            (long long)recipe->origin[d], (long long)(recipe->origin[d] + n[d] - 1), d, (long long)recipe->whole[d]);
    PYR_TRY(pyr_field_alloc_zero(recipe->dims, n, precision, out));
    pthread_mutex_lock(&device_fields_lock);
    ((field_box_t *)*out)->recipe = *recipe;
    pthread_mutex_unlock(&device_fields_lock);
    return PYR_OK;
}

/* ------------------------------------------------------------ prefaulting */

#define PREFAULT_THREADS 4
#define PREFAULT_MIN ((size_t)64 << 20) /* below this the faults cost less than the threads */

struct pyr_prefault {
    pthread_t thread[PREFAULT_THREADS];
    int started[PREFAULT_THREADS];
    char *lo[PREFAULT_THREADS], *hi[PREFAULT_THREADS];
};

typedef struct {
    pyr_prefault_t *p;
    int k;
} prefault_arg_t;

static void *prefault_main(void *arg)
{
#if defined(MADV_POPULATE_WRITE)
    prefault_arg_t *a = arg;
    pyr_prefault_t *p = a->p;
    /* advice: an older kernel refuses it, and the copies fault as before */
    if (p->hi[a->k] > p->lo[a->k]) (void)madvise(p->lo[a->k], (size_t)(p->hi[a->k] - p->lo[a->k]), MADV_POPULATE_WRITE);
    free(a);
#else
    free(arg);
#endif
    return NULL;
}

pyr_prefault_t *pyr_prefault_start(void *data, size_t bytes)
{
#if defined(MADV_POPULATE_WRITE)
    const long page = sysconf(_SC_PAGESIZE);
    if (!data || page <= 0 || bytes < PREFAULT_MIN) return NULL;
    pyr_prefault_t *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    /* whole pages inside [data, data + bytes): the range's first and last pages may hold other data, whose
     * owner's writes the advice would not disturb anyway, but need not be asked for */
    const uintptr_t first = ((uintptr_t)data + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
    const uintptr_t end = ((uintptr_t)data + bytes) / (uintptr_t)page * (uintptr_t)page;
    const size_t pages = end > first ? (end - first) / (size_t)page : 0;
    int any = 0;
    for (int k = 0; k < PREFAULT_THREADS; k++) {
        p->lo[k] = (char *)(first + pages * (size_t)k / PREFAULT_THREADS * (size_t)page);
        p->hi[k] = (char *)(first + pages * (size_t)(k + 1) / PREFAULT_THREADS * (size_t)page);
        prefault_arg_t *a = malloc(sizeof *a);
        if (!a) continue;
        a->p = p;
        a->k = k;
        p->started[k] = pthread_create(&p->thread[k], NULL, prefault_main, a) == 0;
        if (!p->started[k]) free(a);
        any |= p->started[k];
    }
    if (!any) {
        free(p);
        return NULL;
    }
    return p;
#else
    (void)data;
    (void)bytes;
    return NULL;
#endif
}

void pyr_prefault_join(pyr_prefault_t **prefault)
{
    pyr_prefault_t *p = prefault ? *prefault : NULL;
    if (!p) return;
    for (int k = 0; k < PREFAULT_THREADS; k++)
        if (p->started[k]) pthread_join(p->thread[k], NULL);
    free(p);
    *prefault = NULL;
}

/* A grid's host memory, 64-byte aligned.  Large grids are aligned to 2 MiB
 * and offered to the kernel as transparent huge pages: a 96 GB grid is then
 * 49 152 pages to fault in (and for the GPU to register) instead of 25
 * million, and is freed in a fraction of a second instead of seconds. */
void *pyr_host_grid_alloc(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    void *p = NULL;
    if (bytes < 32 * huge) return posix_memalign(&p, 64, bytes ? bytes : 64) ? NULL : p;
    if (posix_memalign(&p, huge, (bytes + huge - 1) / huge * huge)) return NULL;
#if defined(MADV_HUGEPAGE)
    (void)madvise(p, (bytes + huge - 1) / huge * huge, MADV_HUGEPAGE); /* advice: refused is fine */
#elif defined(__linux__)
#error "MADV_HUGEPAGE undeclared: the host grid would be faulted in 4 KiB pages"
#endif
    return p;
}

pyr_status_t pyr_field_alloc_grid(const pyr_problem_t *problem, pyr_field_t **out)
{
    *out = NULL;
    pyr_field_t *f = new_header(1);
    if (!f) return pyr_fail(PYR_ERR_NOMEM, "out of host memory allocating a field header");
    f->dims = problem->dims;
    for (int d = 0; d < 3; d++) f->n[d] = problem->n[d];
    f->precision = problem->precision;
    size_t bytes = (size_t)pyr_field_count(f) * pyr_precision_size(f->precision);
    f->data = pyr_host_grid_alloc(bytes);
    if (!f->data) {
        free((field_box_t *)f);
        /* only advice that would change something: a float grid gains nothing from "float precision" */
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory: the %lld x %lld x %lld %s grid needs %.3f GiB; use fewer nodes%s a machine with more memory",
                        (long long)problem->n[0], (long long)problem->n[1], (long long)problem->n[2],
                        pyr_precision_name(problem->precision), (double)bytes / (1024.0 * 1024 * 1024),
                        problem->precision == PYR_DOUBLE ? ", float precision (half the bytes), or" : " or");
    }
    *out = f;
    return PYR_OK;
}

void pyr_field_destroy(pyr_field_t **f)
{
    if (!f || !*f) return;
    field_box_t *b = (field_box_t *)*f; /* the field is the box's first member */
    if (b->device >= 0) {
        pthread_mutex_lock(&device_fields_lock);
        for (field_box_t **at = &device_fields; *at; at = &(*at)->next)
            if (*at == b) {
                *at = b->next;
                break;
            }
        pthread_mutex_unlock(&device_fields_lock);
    }
    if (b->zero) {
        pthread_mutex_lock(&device_fields_lock);
        unlist_zero(b);
        pthread_mutex_unlock(&device_fields_lock);
    }
    if (b->mapped) munmap(b->field.data, b->mapped);
    else if (b->owns_data) free(b->field.data);
    free(b);
    *f = NULL;
}
