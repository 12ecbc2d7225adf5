/* Problem files of `pyrgrid solve`: the INI reader, the keys, and for
 * small systems (N*M <= 4096) the system they describe, formulas included.
 * No file is read: systems from .npy files are skipped. */
#include "fuzz_util.h"
#include "solvers/lgs/lgs_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pyr_lgs_config_t *cfg = NULL;
    if (pyr_lgs_config_load_text((const char *)data, size, "fuzz.ini", NULL, 0, &cfg) != PYR_OK) {
        if (cfg) abort(); /* documented: NULL on failure */
        return 0;
    }
    const pyr_lgs_parabolic_t *par = &cfg->parabolic;
    int reads_files = !strcmp(cfg->kind, "files") || par->a.path || par->f.path || par->u_prev.path || par->boundary.path;
    if (!reads_files && cfg->n > 0 && cfg->m > 0 && cfg->n * cfg->m <= 4096) {
        pyr_lgs_system_t *sys = NULL;
        if (pyr_lgs_config_system(cfg, &sys) == PYR_OK) {
            char warning[512];
            (void)pyr_lgs_system_check(sys, warning, sizeof warning);
        }
        pyr_lgs_system_destroy(&sys);
    }
    char *img = pyr_lgs_config_history_image(cfg);
    free(img);
    pyr_lgs_config_destroy(&cfg);
    return 0;
}
