/* Dispersive materials of the Maxwell scheme (issue 46, items 2 and 7):
 *   - problem-file syntax: [material] drude / lorentz / debye (several terms
 *     by commas) and a shape's drude= lorentz= debye= options, read back by
 *     pyr_problem_get and read again to the same terms; malformed lines
 *     refused with the form that works;
 *   - refusals of non-positive parameters, of terms with per-node material
 *     files, of a plane wave through a dispersive background or whose TF/SF
 *     faces cross a dispersive shape, of a grid without room for the terms'
 *     fields (3D with CPML on every axis takes the layers' slots where the
 *     shapes keep clear of the layers);
 *   - the stability limit: a lossless Drude medium's coupled scheme is stable
 *     exactly for dt <= 1 / sqrt(sum 1/h^2 + wp^2/4) (the characteristic
 *     polynomial z^2 - (2 - (K^2 dt^2 + wp^2 dt^2)/eps) z + 1), a Lorentz term
 *     in a dense medium for w0 dt < 2: the refusal names that dt (and a Courant
 *     number that passes), a run just below it stays bounded over 20000 steps;
 *   - no terms, no change: a problem without them uses the fields it did. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "maxwell_util.h"
#include "schemes/maxwell.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static void tm_problem(pyr_problem_t *p, int64_t nx, int64_t ny, double courant)
{
    const int64_t n[3] = {nx, ny, 1};
    const double len[3] = {(double)(nx - 1) * 0.01, (double)(ny - 1) * 0.01, 1};
    make_maxwell(p, 2, n, len, 0, PYR_DOUBLE, 10, courant);
}

static void syntax(void)
{
    pyr_problem_t p;
    tm_problem(&p, 20, 20, 0.5);
    CHECK_OK(pyr_problem_set(&p, "material.drude", "0.5 0.1, 1 0.2"));
    CHECK_OK(pyr_problem_set(&p, "material.debye", "3 0.3"));
    CHECK(p.maxwell.npoles == 3 && p.maxwell.poles[0].kind == PYR_POLE_DRUDE && p.maxwell.poles[1].p[0] == 1 &&
              p.maxwell.poles[2].kind == PYR_POLE_DEBYE && p.maxwell.poles[2].p[1] == 0.3,
          "background terms: %d", p.maxwell.npoles);
    /* a key again replaces the terms of its kind */
    CHECK_OK(pyr_problem_set(&p, "material.drude", "0.7 0"));
    CHECK(p.maxwell.npoles == 2 && p.maxwell.poles[1].kind == PYR_POLE_DRUDE && p.maxwell.poles[1].p[0] == 0.7, "drude replaced");
    char v[512];
    CHECK_OK(pyr_problem_get(&p, "material.drude", v, sizeof v));
    CHECK(!strcmp(v, "0.69999999999999996 0"), "material.drude reads '%s'", v);
    CHECK_OK(pyr_problem_get(&p, "material.lorentz", v, sizeof v));
    CHECK(!strcmp(v, ""), "no lorentz term reads '%s'", v);

    CHECK_OK(pyr_problem_set(&p, "material.shape1", "box 0 0.1 0 0.1 eps_r=2 lorentz=1.5 0.6 0.05 debye=3,0.3 lorentz=1 2 0"));
    const pyr_shape_t *s = &p.maxwell.shapes[0];
    CHECK(p.maxwell.nshapes == 1 && s->eps_r == 2 && s->npoles == 3 && s->poles[0].kind == PYR_POLE_LORENTZ && s->poles[0].p[2] == 0.05 &&
              s->poles[1].kind == PYR_POLE_DEBYE && s->poles[1].p[1] == 0.3 && s->poles[2].p[1] == 2,
          "shape terms: %d", s->npoles);
    CHECK_OK(pyr_problem_get(&p, "material.shape1", v, sizeof v));
    pyr_problem_t q = p;
    CHECK_OK(pyr_problem_set(&q, "material.shape1", v));
    CHECK(!memcmp(&q.maxwell.shapes[0], s, sizeof *s), "shape1 = '%s' reads back to other terms", v);
    CHECK(strstr(v, "lorentz=1.5 0.59999999999999998 0.050000000000000003 debye=3 0.29999999999999999 lorentz=1 2 0") != NULL,
          "shape1 reads '%s'", v);

    CHECK_FAILS(pyr_problem_set(&p, "material.shape2", "box 0 1 0 1 drude=0.5"), PYR_ERR_CONFIG, "a drude term takes 2 numbers");
    CHECK_FAILS(pyr_problem_set(&p, "material.lorentz", "1 2"), PYR_ERR_CONFIG, "give 3 numbers per term");
    CHECK_FAILS(pyr_problem_set(&p, "material.debye", "1 x"), PYR_ERR_CONFIG, "'x' is not a number");
    CHECK_FAILS(pyr_problem_set(&p, "material.shape2", "box 0 1 0 1 drude=1 0 drude=1 0 drude=1 0 drude=1 0 drude=1 0"), PYR_ERR_CONFIG,
                "at most 4");
    CHECK_FAILS(pyr_problem_set(&p, "material.shape2", "box 0 1 0 1 plasma=1"), PYR_ERR_CONFIG, "unknown option 'plasma'");
    CHECK_FAILS(pyr_problem_set(&p, "material.drudes", "1 0"), PYR_ERR_CONFIG, "drude, lorentz, debye");
}

static void refusals(void)
{
    pyr_problem_t p;
    tm_problem(&p, 20, 20, 0.5);
    CHECK_OK(pyr_problem_set(&p, "material.drude", "0 0.1"));
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "use a plasma frequency > 0 and a damping >= 0");
    tm_problem(&p, 20, 20, 0.5);
    CHECK_OK(pyr_problem_set(&p, "material.shape1", "box 0 0.1 0 0.1 lorentz=1 2 -0.1"));
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "shape 1: lorentz term 1");
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "a damping >= 0");
    tm_problem(&p, 20, 20, 0.5);
    CHECK_OK(pyr_problem_set(&p, "material.shape1", "box 0 0.1 0 0.1 lorentz=-1 2 0.1"));
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "use a strength > 0");
    tm_problem(&p, 20, 20, 0.5);
    CHECK_OK(pyr_problem_set(&p, "material.debye", "1 0"));
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "a relaxation time > 0");

    tm_problem(&p, 20, 20, 0.5);
    CHECK_OK(pyr_problem_set(&p, "material.shape1", "box 0 0.1 0 0.1 drude=1 0.1"));
    CHECK_OK(pyr_problem_validate(&p));
    snprintf(p.maxwell.eps_file, sizeof p.maxwell.eps_file, "eps.npy");
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "not with per-node files");

    tm_problem(&p, 40, 40, 0.5);
    CHECK_OK(pyr_problem_set(&p, "material.drude", "1 0.1"));
    CHECK_OK(pyr_problem_set(&p, "source.planewave1", "Ez along +x box 10 10 30 30 gaussian width=0.05 delay=0.2"));
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "give the dispersive terms to shapes");

    /* a Drude disk inside the TF/SF box runs; a box whose face crosses it is refused */
    tm_problem(&p, 60, 60, 0.5);
    CHECK_OK(pyr_problem_set(&p, "material.shape1", "sphere 0.3 0.3 0.05 drude=1 0.1"));
    CHECK_OK(pyr_problem_set(&p, "source.planewave1", "Ez along +x box 15 15 45 45 gaussian width=0.05 delay=0.2"));
    CHECK_OK(pyr_problem_validate(&p));
    CHECK_OK(pyr_problem_set(&p, "source.planewave1", "Ez along +x box 30 15 45 45 gaussian width=0.05 delay=0.2"));
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "lies in a dispersive material");

    /* 3D with the CPML on every axis: the layers' psi slots hold the terms' states too where the
     * dispersive shapes keep clear of the layers; a shape reaching into them is refused, and the
     * message says what frees a slot */
    const int64_t n3[3] = {16, 16, 16};
    make_maxwell(&p, 3, n3, NULL, 0, PYR_DOUBLE, 5, 0.5);
    p.maxwell.cpml_cells = 3;
    p.maxwell.cpml_faces = 0x3f;
    CHECK_OK(pyr_problem_set(&p, "material.shape1", "sphere 0.5 0.5 0.5 0.1 lorentz=1 2 0.1"));
    CHECK_OK(pyr_problem_validate(&p));
    CHECK(pyr_maxwell_disp_fields(&p) & pyr_maxwell_psi_used(&p), "no shared slot");
    CHECK_OK(pyr_problem_set(&p, "material.shape1", "sphere 0.5 0.5 0.5 0.2 drude=1 0.1"));
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "keep the dispersive shapes a node off the CPML layers");
    p.maxwell.cpml_faces = 0x30; /* z only: x and y free four slots each */
    CHECK_OK(pyr_problem_validate(&p));
}

/* The dt in "scheme.dt <= X" of the last error, or -1. */
static double stated_dt(void)
{
    const char *s = strstr(pyr_last_error(), "scheme.dt <= ");
    return s ? strtod(s + strlen("scheme.dt <= "), NULL) : -1;
}

static void stability(void)
{
    /* lossless Drude, eps_inf = 1: dt <= 1 / sqrt(s + wp^2 / 4) */
    pyr_problem_t p;
    tm_problem(&p, 30, 30, 0.99);
    const double fp = 40, wp = 2 * M_PI * fp, s = 2 / (0.01 * 0.01);
    const double limit = 1 / sqrt(s + wp * wp / 4);
    char v[64];
    snprintf(v, sizeof v, "%.17g 0", fp);
    CHECK_OK(pyr_problem_set(&p, "material.drude", v));
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_UNSTABLE, "the largest stable dt is about");
    const double got = stated_dt();
    CHECK(fabs(got / (limit * 0.999) - 1) < 2e-3, "Drude: the refusal states dt <= %.6g, the analytic limit is %.6g", got, limit);
    /* the Courant number it names passes */
    const char *c = strstr(pyr_last_error(), "scheme.courant <= ");
    CHECK(c != NULL, "no Courant number in '%s'", pyr_last_error());
    if (c) p.maxwell.courant = strtod(c + strlen("scheme.courant <= "), NULL);
    CHECK_OK(pyr_problem_validate(&p));

    /* just below the limit the fields stay bounded over a long run from random values */
    tm_problem(&p, 24, 24, 0.99);
    CHECK_OK(pyr_problem_set(&p, "material.drude", v));
    p.maxwell.dt = 0.995 * limit;
    p.init = PYR_INIT_RANDOM;
    p.seed = 7;
    p.steps = 20000;
    mx_result_t a = {0};
    CHECK_OK(mx_reference(&p, NULL, &a));
    const double e = mx_energy(a.c);
    CHECK(isfinite(e) && e < 1e4, "a lossless Drude medium at 0.995 of its limit: energy %g after 20000 steps", e);
    mx_free(&a);

    /* a Lorentz term in a dense medium (eps_inf = 100, the field's own limit far away): w0 dt < 2 */
    tm_problem(&p, 30, 30, 0.99);
    p.maxwell.eps_r = 100;
    const double f0 = 60, w0 = 2 * M_PI * f0;
    snprintf(v, sizeof v, "1 %.17g 0", f0);
    CHECK_OK(pyr_problem_set(&p, "material.lorentz", v));
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_UNSTABLE, "unstable time step");
    const double lg = stated_dt();
    CHECK(fabs(lg * w0 / 0.999 / 2 - 1) < 0.02, "Lorentz: the refusal states dt <= %.6g; w0 dt < 2 gives %.6g", lg, 2 / w0);
}

static void unchanged(void)
{
    pyr_problem_t p;
    tm_problem(&p, 20, 20, 0.5);
    p.maxwell.cpml_cells = 3;
    p.maxwell.cpml_faces = 0xf;
    CHECK_OK(pyr_problem_set(&p, "material.shape1", "box 0 0.1 0 0.1 eps_r=2"));
    const unsigned plain = pyr_scheme_maxwell.fields_used(&p);
    CHECK(pyr_maxwell_disp_fields(&p) == 0 && !pyr_maxwell_dispersive(&p), "terms without any");
    CHECK_OK(pyr_problem_set(&p, "material.shape1", "box 0 0.1 0 0.1 eps_r=2 drude=1 0.1"));
    const unsigned disp = pyr_scheme_maxwell.fields_used(&p);
    CHECK((disp & plain) == plain && (disp & ~plain) == pyr_maxwell_disp_fields(&p) && pyr_maxwell_disp_fields(&p) != 0,
          "fields: plain %#x, dispersive %#x", plain, disp);
    CHECK(!(pyr_maxwell_disp_fields(&p) & pyr_maxwell_psi_used(&p)), "a term's field is a layer's, with slots free");
    pyr_coef_t k;
    pyr_scheme_maxwell.coefficients(&p, &k);
    CHECK(k.c[7] == 1, "the dispersive flag");
    double *aux = NULL;
    int64_t naux = 0;
    CHECK_OK(pyr_scheme_maxwell.aux_coefficients(&p, &aux, &naux));
    k.aux = aux;
    k.naux = naux;
    CHECK(pyr_maxwell_cpml_naux(&k) == 24 * 20, "the profiles' length %lld", (long long)pyr_maxwell_cpml_naux(&k));
    const double *D = pyr_maxwell_disp_table(&k);
    CHECK(D && D[0] == 1 && D[1] == 3, "the table: %g terms, %g materials", D ? D[0] : -1, D ? D[1] : -1);
    free(aux);
}

int main(void)
{
    syntax();
    refusals();
    stability();
    unchanged();
    return check_report();
}
