/* cuBLAS and cuFFT loaded on first use (cuda_libs.h): dlopen of the sonames
 * of the toolkit this was built with (the major versions from its headers),
 * then the functions of the tables by their exported names. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda_libs.h"

#define PYR_STR_(x) #x
#define PYR_STR(x) PYR_STR_(x)

namespace {

struct lib_t {
    const char *soname;
    pthread_once_t once;
    int ok;
    char why[768]; /* why it could not be loaded */
};

lib_t blas_lib = {"libcublas.so." PYR_STR(CUBLAS_VER_MAJOR), PTHREAD_ONCE_INIT, 0, ""};
lib_t fft_lib = {"libcufft.so." PYR_STR(CUFFT_VER_MAJOR), PTHREAD_ONCE_INIT, 0, ""};
pyrcu::cublas_api_t blas_table;
pyrcu::cufft_api_t fft_table;

/* The loader's search (LD_LIBRARY_PATH, its cache, the caller's run path),
 * then the library folder of the toolkit this was built with. */
void *open_lib(lib_t *l)
{
    void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    const char *e = dlerror();
    snprintf(l->why, sizeof l->why, "%s", e ? e : "not found");
#ifdef PYR_CUDA_LIBRARY_DIR
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", PYR_CUDA_LIBRARY_DIR, l->soname);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
#endif
    return h;
}

template <typename F> int resolve(lib_t *l, void *h, F *fn, const char *symbol)
{
    if (!l->ok) return 0;
    dlerror();
    void *p = dlsym(h, symbol);
    if (!p) {
        snprintf(l->why, sizeof l->why, "it has no function %s: another version than the toolkit's %s", symbol, l->soname);
        return l->ok = 0;
    }
    memcpy(fn, &p, sizeof p); /* POSIX: a function's address from dlsym */
    return 1;
}

#define PYR_LIB_RESOLVE(field, function) resolve(l, h, &table->field, PYR_STR(function));

void load_blas(void)
{
    lib_t *l = &blas_lib;
    pyrcu::cublas_api_t *table = &blas_table;
    void *h = open_lib(l);
    if (!h) return;
    l->ok = 1;
    PYR_CUBLAS_FUNCTIONS(PYR_LIB_RESOLVE)
    if (!l->ok) dlclose(h);
}

void load_fft(void)
{
    lib_t *l = &fft_lib;
    pyrcu::cufft_api_t *table = &fft_table;
    void *h = open_lib(l);
    if (!h) return;
    l->ok = 1;
    PYR_CUFFT_FUNCTIONS(PYR_LIB_RESOLVE)
    if (!l->ok) dlclose(h);
}

#undef PYR_LIB_RESOLVE

pyr_status_t missing(const lib_t *l, const char *user, const char *instead)
{
    return pyr_fail(PYR_ERR_UNSUPPORTED,
                    "%s needs %s of the CUDA toolkit, which could not be loaded (%s): install the toolkit's libraries (or put "
                    "their folder on LD_LIBRARY_PATH), %s",
                    user, l->soname, l->why, instead);
}

} // namespace

namespace pyrcu {

pyr_status_t cublas_api(const cublas_api_t **api, const char *user, const char *instead)
{
    pthread_once(&blas_lib.once, load_blas);
    if (!blas_lib.ok) return missing(&blas_lib, user, instead);
    *api = &blas_table;
    return PYR_OK;
}

pyr_status_t cufft_api(const cufft_api_t **api, const char *user, const char *instead)
{
    pthread_once(&fft_lib.once, load_fft);
    if (!fft_lib.ok) return missing(&fft_lib, user, instead);
    *api = &fft_table;
    return PYR_OK;
}

} // namespace pyrcu
