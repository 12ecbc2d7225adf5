/* Sky positions and times of frames (frames_wcs.h). */
#include "pipelines/frames/frames_wcs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wcserr.h>
#include <wcsfix.h>
#include <wcshdr.h>
#include <wcs.h>

#include "core/error.h"

struct fr_wcs {
    struct wcsprm *all; /* wcspih's array */
    int nwcs;
    struct wcsprm *w;   /* the primary description (key ' ') */
    char describe[96];
};

/* A keyword that only a WCS uses. */
static int wcs_card(const char *card)
{
    static const char *const prefix[] = {"CTYPE", "CRVAL", "CRPIX", "CDELT", "CD1_", "CD2_", "PC1_", "PC2_"};
    for (size_t i = 0; i < sizeof prefix / sizeof *prefix; i++)
        if (!strncmp(card, prefix[i], strlen(prefix[i]))) return 1;
    return 0;
}

static const char *wcs_reason(const struct wcsprm *w, int status, const char *const *table)
{
    if (w && w->err && w->err->msg && w->err->msg[0]) return w->err->msg;
    return table && status > 0 && status < 14 ? table[status] : "wcslib could not read it";
}

pyr_status_t fr_wcs_open(const pyr_fits_info_t *h, const char *where, fr_wcs_t **out)
{
    *out = NULL;
    int any = 0;
    for (int c = 0; c < h->ncards && !any; c++) any = wcs_card(h->cards[c]);
    if (!any) return PYR_OK;
    /* wcspih takes the header as 80-character records, blank-padded */
    char *text = malloc((size_t)h->ncards * 80 + 1);
    if (!text) return pyr_fail(PYR_ERR_NOMEM, "out of memory reading the WCS of %s", where);
    for (int c = 0; c < h->ncards; c++) {
        size_t n = strnlen(h->cards[c], 80);
        memcpy(text + (size_t)c * 80, h->cards[c], n);
        memset(text + (size_t)c * 80 + n, ' ', 80 - n);
    }
    text[(size_t)h->ncards * 80] = 0;
    wcserr_enable(1);
    fr_wcs_t *f = calloc(1, sizeof *f);
    if (!f) {
        free(text);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory reading the WCS of %s", where);
    }
    int nreject = 0;
    int status = wcspih(text, h->ncards, WCSHDR_all, 0, &nreject, &f->nwcs, &f->all);
    free(text);
    if (status || f->nwcs < 1) {
        fr_wcs_close(&f);
        if (status) return pyr_fail(PYR_ERR_FORMAT, "%s: the WCS in the header cannot be read: %s (wcslib status %d)", where,
                                    status < 6 ? wcshdr_errmsg[status] : "wcspih failed", status);
        return PYR_OK; /* keywords of no WCS wcslib knows */
    }
    f->w = &f->all[0];
    int stat[NWCSFIX];
    struct wcserr info[NWCSFIX];
    memset(info, 0, sizeof info);
    /* the fixes astropy.wcs applies too (dates, units, celestial and
     * spectral axes), so that both read one header alike; what they could
     * not fix wcsset reports.  Their notes are dropped. */
    wcsfixi(7, NULL, f->w, stat, info);
    for (int i = 0; i < NWCSFIX; i++) free(info[i].msg);
    status = wcsset(f->w);
    if (status) {
        pyr_status_t st = pyr_fail(PYR_ERR_FORMAT, "%s: the WCS in the header is not valid: %s (wcslib status %d); fix the "
                                                   "header's CTYPEn, CRVALn, CRPIXn and CDi_j / PCi_j",
                                   where, wcs_reason(f->w, status, wcs_errmsg), status);
        fr_wcs_close(&f);
        return st;
    }
    if (f->w->lng < 0 || f->w->lat < 0) {
        fr_wcs_close(&f);
        return PYR_OK; /* a WCS, but of no sky axes */
    }
    snprintf(f->describe, sizeof f->describe, "%.20s %.20s %.10s", f->w->ctype[f->w->lng], f->w->ctype[f->w->lat],
             f->w->radesys[0] ? f->w->radesys : "ICRS");
    *out = f;
    return PYR_OK;
}

pyr_status_t fr_wcs_sky(fr_wcs_t *f, double x, double y, double *ra, double *dec)
{
    struct wcsprm *w = f->w;
    double pix[9] = {0}, img[9], world[9], phi, theta;
    int stat = 0;
    if (w->naxis > 9) return pyr_fail(PYR_ERR_FORMAT, "a WCS of %d axes; frames have 2", w->naxis);
    for (int a = 0; a < w->naxis; a++) pix[a] = 1; /* further axes at their first pixel */
    pix[0] = x + 1; /* wcslib counts pixels from 1 */
    pix[1] = y + 1;
    int status = wcsp2s(w, 1, w->naxis, pix, img, &phi, &theta, world, &stat);
    if (status || stat)
        return pyr_fail(PYR_ERR_NUMERIC, "pixel (%g, %g) has no sky position in the WCS (%s)", x, y,
                        wcs_reason(w, status, wcs_errmsg));
    *ra = world[w->lng];
    *dec = world[w->lat];
    return PYR_OK;
}

const char *fr_wcs_describe(const fr_wcs_t *f) { return f ? f->describe : ""; }

void fr_wcs_close(fr_wcs_t **wp)
{
    if (!wp || !*wp) return;
    fr_wcs_t *f = *wp;
    if (f->all) wcsvfree(&f->nwcs, &f->all);
    free(f);
    *wp = NULL;
}

/* Days from 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static long days_from_civil(long y, long m, long d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* "hh:mm:ss[.sss]" as a fraction of a day; 0 when it is not one. */
static int time_of_day(const char *t, double *frac)
{
    int hh, mm, n = 0;
    double ss = 0;
    if (sscanf(t, "%2d:%2d:%lf%n", &hh, &mm, &ss, &n) != 3) return 0;
    while (t[n] == ' ') n++;
    if (t[n] && t[n] != 'Z') return 0;
    if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || !(ss >= 0 && ss < 61)) return 0;
    *frac = (hh * 3600.0 + mm * 60.0 + ss) / 86400.0;
    return 1;
}

int fr_iso_to_mjd(const char *iso, double *mjd)
{
    int y, m, d, n = 0;
    if (!iso || sscanf(iso, "%4d-%2d-%2d%n", &y, &m, &d, &n) != 3 || n != 10) return 0;
    if (m < 1 || m > 12 || d < 1 || d > 31) return 0;
    double frac = 0;
    const char *rest = iso + 10;
    if (*rest == 'T') {
        if (!time_of_day(rest + 1, &frac)) return 0;
    } else {
        while (*rest == ' ') rest++;
        if (*rest) return 0;
    }
    /* MJD 0 is 1858-11-17 */
    *mjd = (double)(days_from_civil(y, m, d) - days_from_civil(1858, 11, 17)) + frac;
    return 1;
}

int fr_header_mjd(const pyr_fits_info_t *h, double *mjd)
{
    char v[80];
    if (pyr_fits_card_value(h, "MJD-OBS", v, sizeof v)) {
        char *end;
        double x = strtod(v, &end);
        if (end != v && isfinite(x)) {
            *mjd = x;
            return 1;
        }
    }
    if (!pyr_fits_card_value(h, "DATE-OBS", v, sizeof v)) return 0;
    if (fr_iso_to_mjd(v, mjd)) {
        char t[80];
        double frac;
        /* a date alone: the time from TIME-OBS or UT */
        if (strlen(v) == 10 && (pyr_fits_card_value(h, "TIME-OBS", t, sizeof t) || pyr_fits_card_value(h, "UT", t, sizeof t)) &&
            time_of_day(t, &frac))
            *mjd += frac;
        return 1;
    }
    return 0;
}
