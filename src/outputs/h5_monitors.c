/* Maxwell's monitors in an HDF5 result (h5_monitors.h). */
#include "outputs/h5_monitors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static const char *const comp_names[6] = {"Ex", "Ey", "Ez", "Hx", "Hy", "Hz"};

static pyr_status_t write_monitor(pyr_h5_file_t *file, const pyr_spectra_t *s, int m, int dims, int compression, double *re, double *im,
                                  double *freqs)
{
    pyr_monitor_info_t info;
    PYR_TRY(pyr_spectra_info(s, m, &info));
    PYR_TRY(pyr_spectra_freqs(s, m, freqs));
    PYR_TRY(pyr_spectra_dft(s, m, re, im));
    char group[64], name[96], comps[32] = "", axis[2] = "";
    snprintf(group, sizeof group, "monitors/%s", info.name);
    for (int c = 0; c < info.ncomponents; c++) snprintf(comps + strlen(comps), sizeof comps - strlen(comps), "%s%s", c ? " " : "", comp_names[info.components[c]]);
    if (info.axis >= 0) axis[0] = "xyz"[info.axis];
    /* the fields first: their writer makes the group (a vector's does not) */
    const int64_t nx = info.hi[0] - info.lo[0] + 1, ny = info.hi[1] - info.lo[1] + 1, nz = info.hi[2] - info.lo[2] + 1;
    const int64_t n[3] = {nx, ny, info.nfreq * (dims == 3 ? nz : 1)};
    for (int c = 0; c < info.ncomponents; c++)
        for (int part = 0; part < 2; part++) {
            pyr_field_t *f = NULL;
            double *data = (part ? im : re) + (int64_t)c * info.nfreq * info.nnodes;
            PYR_TRY(pyr_field_wrap(3, n, PYR_DOUBLE, data, &f));
            snprintf(name, sizeof name, "%s/%s_%s", group, comp_names[info.components[c]], part ? "im" : "re");
            const pyr_h5_attr_t a = pyr_h5_attr_i64("nfreq", info.nfreq);
            pyr_status_t st = pyr_h5_write_field(file, name, f, compression, &a, dims == 3 ? 1 : 0);
            pyr_field_destroy(&f);
            PYR_TRY(st);
        }
    snprintf(name, sizeof name, "%s/freqs", group);
    const pyr_h5_attr_t unit = pyr_h5_attr_str("long_name", "frequency (c = 1: cycles per unit of length)");
    PYR_TRY(pyr_h5_write_vector(file, name, info.nfreq, freqs, NULL, &unit, 1));
    if (info.flux) {
        double *power = malloc((size_t)info.nfreq * sizeof *power);
        if (!power) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for %s's spectrum", info.name);
        pyr_status_t st = pyr_spectra_flux(s, m, power);
        const pyr_h5_attr_t what = pyr_h5_attr_str("long_name", "power through the plane along +axis, Re sum (E x H*) . n dA");
        snprintf(name, sizeof name, "%s/flux", group);
        if (st == PYR_OK) st = pyr_h5_write_vector(file, name, info.nfreq, power, NULL, &what, 1);
        free(power);
        PYR_TRY(st);
    }
    const pyr_h5_attr_t attrs[] = {pyr_h5_attr_str("kind", info.flux ? "flux" : "dft"), pyr_h5_attr_str("components", comps),
                                   pyr_h5_attr_i64v("lo", 3, info.lo),           pyr_h5_attr_i64v("hi", 3, info.hi),
                                   pyr_h5_attr_str("axis", axis),                 pyr_h5_attr_i64("steps", info.steps)};
    return pyr_h5_write_attrs(file, group, attrs, (int)(sizeof attrs / sizeof *attrs), "the monitor's attributes");
}

pyr_status_t pyr_h5_write_monitors(pyr_h5_file_t *file, const pyr_spectra_t *s, int dims, int compression)
{
    int64_t most = 1, nfreq = 1;
    for (int m = 0; m < pyr_spectra_count(s); m++) {
        pyr_monitor_info_t info;
        PYR_TRY(pyr_spectra_info(s, m, &info));
        if (info.ncomponents * info.nfreq * info.nnodes > most) most = info.ncomponents * info.nfreq * info.nnodes;
        if (info.nfreq > nfreq) nfreq = info.nfreq;
    }
    double *re = malloc((size_t)most * sizeof *re), *im = malloc((size_t)most * sizeof *im), *freqs = malloc((size_t)nfreq * sizeof *freqs);
    pyr_status_t st = re && im && freqs ? PYR_OK : pyr_fail(PYR_ERR_NOMEM, "out of host memory for the monitors' transforms");
    for (int m = 0; m < pyr_spectra_count(s) && st == PYR_OK; m++) st = write_monitor(file, s, m, dims, compression, re, im, freqs);
    free(re);
    free(im);
    free(freqs);
    return st;
}
