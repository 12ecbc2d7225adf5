/* The loader of the CUDA backend (backend/plugin.h), compiled apart from the
 * core's objects, once for each way the backend can reach the core:
 *  - PYR_CUDA_PLUGIN (libpyrgrid.so): dlopen the plug-in libpyrgrid_cuda.so
 *    when CUDA is asked for, or for backend = auto where a GPU may be
 *    present, so that libpyrgrid.so holds no CUDA code and a CPU run maps
 *    none of it;
 *  - PYR_CUDA_LINKED (the static libraries: pyrgrid_internal for the tests
 *    and benchmarks, a static libpyrgrid): the CUDA objects are linked in,
 *    and their table is taken directly;
 *  - neither (a build without CUDA): there is no table, and the reason says
 *    so.
 * It sits on the top floor because the table of the core's functions that
 * the plug-in calls (api/plugin_core.h) names functions of every floor. */
#ifdef PYR_CUDA_PLUGIN
#define _GNU_SOURCE /* dladdr */
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef PYR_CUDA_PLUGIN
#include <dlfcn.h>
#include <limits.h>
#include <sys/stat.h>
#endif

#include "api/plugin_core.h"
#include "backend/plugin.h"
#include "core/error.h"

#if defined(PYR_CUDA_PLUGIN) || defined(PYR_CUDA_LINKED)
static pyr_status_t fail_text(pyr_status_t status, const char *text) { return pyr_fail(status, "%s", text); }

static const pyr_cuda_core_t core = {
    .abi = PYR_CUDA_PLUGIN_ABI,
    .version = PYR_VERSION_STRING,
    .fail_text = fail_text,
    .device_acquire = pyr_device_acquire,
    .device_release = pyr_device_release,
    .device_shared = pyr_device_shared,
    .kernel_extra_register = pyr_kernel_extra_register,
    .kernel_extra_find = pyr_kernel_extra_find,
    .host_copy_rows = pyr_host_copy_rows,
    .lv_step = pyr_lv_step,
    .maxwell_psi_field = pyr_maxwell_psi_field,
    .options_default = pyr_options_default,
    .precision_size = pyr_precision_size,
};
#endif

/* Loaded once per process; never unloaded (the device cache and the
 * registered variants keep pointers into it). */
#if defined(PYR_CUDA_PLUGIN) || defined(PYR_CUDA_LINKED)
static _Atomic(const pyr_cuda_plugin_t *) loaded;
#endif
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int tried;
static char missing[6144];

int pyr_cuda_built(void)
{
#if defined(PYR_CUDA_PLUGIN) || defined(PYR_CUDA_LINKED)
    return 1;
#else
    return 0;
#endif
}

#ifdef PYR_CUDA_LINKED
/* The CUDA code calls the core directly: nothing to hand over. */
pyr_status_t pyr_cuda_core_attach(const pyr_cuda_core_t *c)
{
    (void)c;
    return PYR_OK;
}

static const pyr_cuda_plugin_t *load(void)
{
    const pyr_cuda_plugin_t *t = pyr_cuda_plugin_entry(&core);
    if (!t) snprintf(missing, sizeof missing, "the linked-in CUDA backend refused this library: %s", pyr_last_error());
    return t;
}
#elif defined(PYR_CUDA_PLUGIN)
/* A GPU may be present where a driver's device node is (Linux's, or WSL's):
 * a stat, so that a machine without one never maps the plug-in for
 * backend = auto. */
static int gpu_may_be_present(void)
{
    static const char *const nodes[] = {"/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg"};
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++)
        if (access(nodes[i], F_OK) == 0) return 1;
    return 0;
}

/* dlopen one file and take its table; 1 when it is loaded, 0 when there is
 * no such file (the next place is tried), -1 when it is there but unusable
 * (missing says why; no further place is tried, so the message names it). */
static int try_file(const char *path, int must_exist, const pyr_cuda_plugin_t **out)
{
    struct stat sb;
    if (must_exist && stat(path, &sb) != 0) return 0;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        if (!must_exist) return 0;
        snprintf(missing, sizeof missing, "the CUDA backend's plug-in %s could not be loaded (%s); use backend = cpu, or reinstall it from the build of this libpyrgrid",
                 path, dlerror());
        return -1;
    }
    pyr_cuda_plugin_entry_fn entry = (pyr_cuda_plugin_entry_fn)dlsym(h, PYR_CUDA_PLUGIN_ENTRY);
    const pyr_cuda_plugin_t *t = entry ? entry(&core) : NULL;
    if (!t) {
        snprintf(missing, sizeof missing, "the CUDA backend's plug-in %s is not usable: %s; use backend = cpu", path,
                 entry ? pyr_last_error() : "it has no " PYR_CUDA_PLUGIN_ENTRY);
        pyr_clear_error();
        dlclose(h);
        return -1;
    }
    *out = t;
    return 1;
}

static const pyr_cuda_plugin_t *load(void)
{
    const pyr_cuda_plugin_t *t = NULL;
    const char *env = getenv("PYRGRID_CUDA_PLUGIN");
    if (env && env[0]) {
        int r = try_file(env, 1, &t);
        if (r == 0)
            snprintf(missing, sizeof missing, "the CUDA backend's plug-in %s (PYRGRID_CUDA_PLUGIN) does not exist; unset it to use the one installed "
                     "beside libpyrgrid, or use backend = cpu", env);
        return r > 0 ? t : NULL;
    }
    /* the folder of the file holding the core: libpyrgrid.so, wherever it
     * is (build tree, install, a Python package) */
    char here[PATH_MAX] = "", path[PATH_MAX + 64];
    Dl_info info;
    if (dladdr((void *)pyr_cuda_plugin, &info) && info.dli_fname) {
        if (!realpath(info.dli_fname, here)) snprintf(here, sizeof here, "%s", info.dli_fname[0] == '/' ? info.dli_fname : "");
        char *slash = strrchr(here, '/');
        if (slash) slash[slash == here ? 1 : 0] = 0;
        else here[0] = 0;
    }
    int r = 0;
    if (here[0]) {
        snprintf(path, sizeof path, "%s/%s", here, PYR_CUDA_PLUGIN_FILE);
        r = try_file(path, 1, &t);
    }
#ifdef PYR_CUDA_PLUGIN_LIBDIR
    if (r == 0 && strcmp(here, PYR_CUDA_PLUGIN_LIBDIR) != 0) r = try_file(PYR_CUDA_PLUGIN_LIBDIR "/" PYR_CUDA_PLUGIN_FILE, 1, &t);
#endif
    if (r == 0) r = try_file(PYR_CUDA_PLUGIN_FILE, 0, &t);
    if (r == 0)
        snprintf(missing, sizeof missing,
                 "the CUDA backend's plug-in " PYR_CUDA_PLUGIN_FILE " was not found (looked in %s%s"
#ifdef PYR_CUDA_PLUGIN_LIBDIR
                 ", " PYR_CUDA_PLUGIN_LIBDIR
#endif
                 " and the loader's search path); install it beside libpyrgrid (a build with CUDA makes it), "
                 "name it with PYRGRID_CUDA_PLUGIN=FILE, or use backend = cpu",
                 here[0] ? here : "", here[0] ? " (libpyrgrid's folder)" : "(libpyrgrid's folder unknown)");
    return r > 0 ? t : NULL;
}
#endif

const pyr_cuda_plugin_t *pyr_cuda_plugin(pyr_cuda_want_t want)
{
#if !defined(PYR_CUDA_PLUGIN) && !defined(PYR_CUDA_LINKED)
    (void)want;
    return NULL;
#else
    const pyr_cuda_plugin_t *t = atomic_load_explicit(&loaded, memory_order_acquire);
    if (t) return t;
#ifdef PYR_CUDA_PLUGIN
    if (want == PYR_CUDA_IF_LOADED) return NULL;
#else
    (void)want; /* linked in: the table costs nothing to take */
#endif
    pthread_mutex_lock(&load_lock);
    t = atomic_load_explicit(&loaded, memory_order_relaxed);
#ifdef PYR_CUDA_PLUGIN
    if (!t && !tried && (want == PYR_CUDA_ASK || gpu_may_be_present())) {
#else
    if (!t && !tried) {
#endif
        tried = 1;
        t = load();
        atomic_store_explicit(&loaded, t, memory_order_release);
    }
    pthread_mutex_unlock(&load_lock);
    return t;
#endif
}

const char *pyr_cuda_missing(void)
{
    if (!pyr_cuda_built())
        return "this pyrgrid was built without CUDA (no CUDA compiler at build time); rebuild on a machine with nvcc, or use backend = cpu";
    pthread_mutex_lock(&load_lock);
    const char *why = tried && missing[0] ? missing : "the CUDA backend was not loaded";
    pthread_mutex_unlock(&load_lock);
    return why;
}
