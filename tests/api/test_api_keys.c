/* The layout-free public API (issue 24): problems and options as handles set
 * and read by problem-file keys, pyr_field_wrap around a caller's buffer, the
 * JSON descriptions, pyr_struct_size, pyr_problem_load_file (relative inputs,
 * the grid from initial.file, restarts).  Built like the other tests of
 * tests/api/: include/ headers only, linked against the shared libpyrgrid. */
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "pyrgrid_output.h"

static char dir[1024];

static const char *tpath(const char *name)
{
    static char buf[8][1200];
    static int k = 0;
    char *b = buf[k++ % 8];
    snprintf(b, 1200, "%s/%s", dir, name);
    return b;
}

static void write_text(const char *name, const char *text)
{
    FILE *f = fopen(tpath(name), "wb");
    CHECK(f != NULL, "cannot create %s", name);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void test_problem_keys(void)
{
    pyr_problem_t *p = NULL;
    CHECK_OK(pyr_problem_create(&p));
    char v[64];
    CHECK_OK(pyr_problem_get(p, "grid.nx", v, sizeof v));
    CHECK(!strcmp(v, "1025"), "default nx %s", v);
    CHECK_OK(pyr_problem_set(p, "grid.nx", "65"));
    CHECK_OK(pyr_problem_set(p, "grid.ny", "33"));
    CHECK_OK(pyr_problem_set(p, "scheme.dt", "1e-6"));
    CHECK(p->n[0] == 65 && p->n[1] == 33 && p->heat.dt == 1e-6, "setters did not reach the struct");
    /* a real reads back as the same double */
    CHECK_OK(pyr_problem_set(p, "scheme.alpha", "0.1"));
    CHECK_OK(pyr_problem_get(p, "scheme.alpha", v, sizeof v));
    CHECK(strtod(v, NULL) == 0.1, "alpha read back as %s", v);
    /* the file's checks, and a failed set changes nothing */
    pyr_problem_t before = *p;
    CHECK_FAILS(pyr_problem_set(p, "grid.nx", "abc"), PYR_ERR_CONFIG, "grid.nx = 'abc' is not an integer");
    CHECK_FAILS(pyr_problem_set(p, "scheme.precision", "doubel"), PYR_ERR_CONFIG, "did you mean 'double'");
    CHECK_FAILS(pyr_problem_set(p, "grid.nxx", "5"), PYR_ERR_CONFIG, "did you mean 'nx'");
    CHECK_FAILS(pyr_problem_set(p, "gird.nx", "5"), PYR_ERR_CONFIG, "did you mean [grid]");
    CHECK_FAILS(pyr_problem_set(p, "nx", "5"), PYR_ERR_CONFIG, "section.key");
    CHECK_FAILS(pyr_problem_set(p, "run.memory", "4G"), PYR_ERR_CONFIG, "pyr_options_set");
    CHECK_FAILS(pyr_problem_set(p, "output.field", "a.npy"), PYR_ERR_CONFIG, "the library writes no files");
    CHECK_FAILS(pyr_problem_set(p, "initial.step", "5"), PYR_ERR_CONFIG, "restart");
    CHECK(!memcmp(&before, p, sizeof before), "a failed set changed the problem");
    /* grid.dims gives the axes beyond it one node */
    CHECK_OK(pyr_problem_set(p, "grid.dims", "1"));
    CHECK(p->n[1] == 1 && p->n[2] == 1, "dims = 1 left ny = %lld", (long long)p->n[1]);
    CHECK_OK(pyr_problem_set(p, "grid.dims", "2"));
    CHECK_OK(pyr_problem_set(p, "grid.ny", "33"));
    CHECK_OK(pyr_problem_validate(p));
    /* getters: unknown keys, small buffers */
    CHECK_FAILS(pyr_problem_get(p, "grid.nw", v, sizeof v), PYR_ERR_CONFIG, "unknown key");
    CHECK_FAILS(pyr_problem_get(p, "scheme.equation", v, 3), PYR_ERR_ARG, "needs 5 bytes");
    CHECK_OK(pyr_problem_set(p, "scheme.equation", "poisson"));
    CHECK_OK(pyr_problem_set(p, "scheme.iterations", "300"));
    CHECK_OK(pyr_problem_set(p, "scheme.tolerance", "1e-9"));
    CHECK_OK(pyr_problem_set(p, "rhs.kind", "sine"));
    CHECK(p->equation == PYR_EQ_POISSON && p->steps == 300 && p->poisson.rhs == PYR_RHS_SINE, "poisson keys");
    CHECK_FAILS(pyr_problem_set(p, "scheme.tolerance", "-1"), PYR_ERR_CONFIG, "positive");
    /* the JSON: the equation's keys only, snprintf-style */
    char json[2048];
    size_t n = pyr_problem_json(p, json, sizeof json);
    CHECK(n == strlen(json) && strstr(json, "\"equation\":\"poisson\"") && strstr(json, "\"iterations\":300") &&
              strstr(json, "\"tolerance\":1.0000000000000001e-09") && !strstr(json, "\"dt\""),
          "problem json %s", json);
    char tiny[8];
    CHECK(pyr_problem_json(p, tiny, sizeof tiny) == n && strlen(tiny) == 7, "truncated json");
    CHECK(pyr_problem_json(p, NULL, 0) == n, "length only");
    pyr_problem_destroy(&p);
    CHECK(p == NULL, "destroy sets NULL");
    pyr_problem_destroy(&p);
}

static void test_options_keys(void)
{
    pyr_options_t *o = NULL;
    CHECK_OK(pyr_options_create(&o));
    char v[64];
    CHECK_OK(pyr_options_get(o, "run.memory", v, sizeof v));
    CHECK(!strcmp(v, "auto"), "memory %s", v);
    CHECK_OK(pyr_options_set(o, "run.memory", "4GiB"));
    CHECK(o->memory == 4ull << 30, "memory %llu", (unsigned long long)o->memory);
    CHECK_OK(pyr_options_get(o, "run.memory", v, sizeof v));
    CHECK(!strcmp(v, "4294967296"), "memory read back %s", v);
    CHECK_OK(pyr_options_set(o, "run.backend", "cpu"));
    CHECK_OK(pyr_options_set(o, "run.height", "8"));
    CHECK_OK(pyr_options_set(o, "run.block", "40"));
    CHECK(o->backend == PYR_BACKEND_CPU && o->height == 8 && o->piece == 40 && o->decomposition == PYR_DECOMP_BLOCKS, "options");
    CHECK_OK(pyr_options_set(o, "run.height", "auto"));
    CHECK(o->height == 0, "height auto");
    CHECK_FAILS(pyr_options_set(o, "run.memory", "lots"), PYR_ERR_CONFIG, "run.memory");
    CHECK_FAILS(pyr_options_set(o, "run.bakend", "cpu"), PYR_ERR_CONFIG, "did you mean 'backend'");
    CHECK_FAILS(pyr_options_set(o, "grid.nx", "5"), PYR_ERR_CONFIG, "pyr_problem_set");
    /* several devices (issue 25): set and read back, and in the JSON */
    CHECK_OK(pyr_options_get(o, "run.partition", v, sizeof v));
    CHECK(!strcmp(v, "auto"), "partition %s", v);
    CHECK_OK(pyr_options_get(o, "run.exchange", v, sizeof v));
    CHECK(!strcmp(v, "auto"), "exchange %s", v);
    CHECK_OK(pyr_options_set(o, "run.devices", "0,0"));
    CHECK_OK(pyr_options_set(o, "run.partition", "1x2x1"));
    CHECK_OK(pyr_options_set(o, "run.exchange", "4"));
    CHECK(!strcmp(o->devices, "0,0") && !strcmp(o->partition, "1x2x1") && o->exchange == 4, "devices options");
    CHECK_OK(pyr_options_get(o, "run.devices", v, sizeof v));
    CHECK(!strcmp(v, "0,0"), "devices read back %s", v);
    CHECK_OK(pyr_options_get(o, "run.exchange", v, sizeof v));
    CHECK(!strcmp(v, "4"), "exchange read back %s", v);
    CHECK_FAILS(pyr_options_set(o, "run.devices", "0,x"), PYR_ERR_CONFIG, "not a device index");
    /* how device copies reach the host grid (issue 20) */
    CHECK_OK(pyr_options_get(o, "run.host_memory", v, sizeof v));
    CHECK(!strcmp(v, "auto") && o->host_memory == PYR_HOST_AUTO, "host_memory default %s", v);
    CHECK_OK(pyr_options_set(o, "run.host_memory", "stage"));
    CHECK(o->host_memory == PYR_HOST_STAGE, "host_memory stage");
    CHECK_OK(pyr_options_get(o, "run.host_memory", v, sizeof v));
    CHECK(!strcmp(v, "stage"), "host_memory read back %s", v);
    CHECK_FAILS(pyr_options_set(o, "run.host_memory", "lock"), PYR_ERR_CONFIG, "pin");
    CHECK_OK(pyr_options_set(o, "run.host_memory", "auto"));
    CHECK(!strcmp(pyr_host_memory_name(PYR_HOST_PIN), "pinned") && !strcmp(pyr_host_memory_name(PYR_HOST_STAGE), "staged") &&
              !strcmp(pyr_host_memory_name(PYR_HOST_AUTO), "none"),
          "host memory names");
    char json[1024];
    pyr_options_json(o, json, sizeof json);
    CHECK(strstr(json, "\"backend\":\"cpu\"") && strstr(json, "\"memory\":4294967296"), "options json %s", json);
    CHECK(strstr(json, "\"devices\":\"0,0\"") && strstr(json, "\"partition\":\"1x2x1\"") && strstr(json, "\"exchange\":4"),
          "options json %s", json);
    pyr_options_destroy(&o);
}

/* A plan from handles and a wrapped buffer: the run updates the caller's
 * memory in place, and equals a run on a field made by the library. */
static void test_wrap_and_run(void)
{
    pyr_problem_t *p = NULL;
    pyr_options_t *o = NULL;
    CHECK_OK(pyr_problem_create(&p));
    CHECK_OK(pyr_options_create(&o));
    CHECK_OK(pyr_problem_set(p, "grid.nx", "41"));
    CHECK_OK(pyr_problem_set(p, "grid.ny", "23"));
    CHECK_OK(pyr_problem_set(p, "scheme.dt", "1e-4"));
    CHECK_OK(pyr_problem_set(p, "scheme.steps", "30"));
    CHECK_OK(pyr_problem_set(p, "initial.kind", "random"));
    CHECK_OK(pyr_options_set(o, "run.backend", "cpu"));
    CHECK_OK(pyr_options_set(o, "run.method", "pyramid"));
    CHECK_OK(pyr_options_set(o, "run.memory", "16K"));
    pyr_plan_t *plan = NULL;
    CHECK_OK(pyr_plan_create(p, o, &plan));
    double *mine = malloc(41 * 23 * sizeof *mine);
    pyr_field_t *ref = NULL, *w = NULL;
    int64_t n[3] = {41, 23, 1};
    CHECK_OK(pyr_field_create(p, &ref));
    CHECK_OK(pyr_field_init(ref, p));
    CHECK_OK(pyr_field_wrap(2, n, PYR_DOUBLE, mine, &w));
    CHECK(w && w->data == mine, "wrap copied");
    CHECK_OK(pyr_field_init(w, p));
    CHECK(!memcmp(mine, ref->data, 41 * 23 * sizeof *mine), "init through a wrapped field");
    pyr_run_info_t ri;
    pyr_field_t *fs[1] = {w};
    CHECK_OK(pyr_execute_fields(plan, fs, 1, NULL, &ri));
    CHECK_OK(pyr_execute(plan, ref, NULL, NULL));
    CHECK(w->data == mine && !memcmp(mine, ref->data, 41 * 23 * sizeof *mine), "the wrapped buffer was not updated in place");
    char json[4096];
    size_t len = pyr_run_info_json(&ri, json, sizeof json);
    CHECK(len < sizeof json && strstr(json, "\"steps\":30") && strstr(json, "\"computed\":"), "run json %s", json);
    len = pyr_plan_json(plan, json, sizeof json);
    CHECK(len < sizeof json && strstr(json, "\"method\":\"pyramid\"") && strstr(json, "\"predicted_seconds\":"), "plan json %s", json);
    pyr_field_destroy(&w); /* the header only: mine stays ours */
    CHECK(w == NULL, "destroy sets NULL");
    mine[0] = 1.0; /* still ours (ASan would catch a free) */
    free(mine);
    /* wrap's refusals */
    int64_t bad[3] = {41, 0, 1};
    CHECK_FAILS(pyr_field_wrap(2, bad, PYR_DOUBLE, ref->data, &w), PYR_ERR_ARG, "n[1] = 0");
    int64_t beyond[3] = {41, 23, 2};
    CHECK_FAILS(pyr_field_wrap(2, beyond, PYR_DOUBLE, ref->data, &w), PYR_ERR_ARG, "axes beyond dims");
    CHECK_FAILS(pyr_field_wrap(2, n, PYR_DOUBLE, NULL, &w), PYR_ERR_ARG, "data is NULL");
    CHECK_FAILS(pyr_field_wrap(4, n, PYR_DOUBLE, ref->data, &w), PYR_ERR_ARG, "dims = 4");
    CHECK(w == NULL, "a failed wrap leaves NULL");
    /* a wrapped field of another shape is refused by the run, and nothing is written */
    int64_t other[3] = {40, 23, 1};
    double *small = calloc(40 * 23, sizeof *small);
    CHECK_OK(pyr_field_wrap(2, other, PYR_DOUBLE, small, &w));
    fs[0] = w;
    CHECK_FAILS(pyr_execute_fields(plan, fs, 1, NULL, &ri), PYR_ERR_ARG, "does not match the plan's grid");
    int zero = 1;
    for (int i = 0; i < 40 * 23; i++) zero &= small[i] == 0.0;
    CHECK(zero, "a refused run wrote into the buffer");
    pyr_field_destroy(&w);
    free(small);
    pyr_field_destroy(&ref);
    pyr_plan_destroy(&plan);
    pyr_problem_destroy(&p);
    pyr_options_destroy(&o);
}

static void test_struct_sizes(void)
{
    CHECK(pyr_struct_size("pyr_problem_t") == sizeof(pyr_problem_t), "problem size");
    CHECK(pyr_struct_size("pyr_run_info_t") == sizeof(pyr_run_info_t), "run info size");
    CHECK(pyr_struct_size("pyr_hooks_t") == sizeof(pyr_hooks_t), "hooks size");
    CHECK(pyr_struct_size("pyr_lgs_options_t") == sizeof(pyr_lgs_options_t), "lgs options size");
    CHECK(pyr_struct_size("pyr_no_such_t") == 0 && pyr_struct_size(NULL) == 0, "unknown names");
}

/* pyr_problem_load_file: inputs relative to the file's folder, the grid's
 * size from initial.file, a restart's remaining steps. */
static void test_load_file(void)
{
    char sub[1100];
    snprintf(sub, sizeof sub, "%s/case", dir);
    mkdir(sub, 0755);
    double init[5 * 7];
    for (int i = 0; i < 35; i++) init[i] = i == 17 ? 1.0 : 0.0;
    int64_t shape[2] = {5, 7};
    CHECK_OK(pyr_npy_write(tpath("case/u0.npy"), 2, shape, PYR_DOUBLE, init));
    write_text("case/p.ini", "[scheme]\nsteps = 40\ndt = 1e-3\n[initial]\nkind = file\nfile = u0.npy\nstep = 10\n[output]\nfield = r.npy\n");
    pyr_problem_t *p = NULL;
    pyr_options_t *o = NULL;
    CHECK_OK(pyr_problem_create(&p));
    CHECK_OK(pyr_options_create(&o));
    CHECK_OK(pyr_problem_load_file(p, o, tpath("case/p.ini")));
    CHECK(p->dims == 2 && p->n[0] == 7 && p->n[1] == 5 && p->n[2] == 1, "grid from the file: %d, %lld x %lld", p->dims,
          (long long)p->n[0], (long long)p->n[1]);
    CHECK(!strcmp(p->init_file, tpath("case/u0.npy")), "initial.file resolved to %s", p->init_file);
    CHECK(p->steps == 30, "a restart from step 10 of 40 runs %lld steps", (long long)p->steps);
    /* given sizes that differ from the file's */
    write_text("case/q.ini", "[grid]\nnx = 9\n[initial]\nkind = file\nfile = u0.npy\n");
    pyr_problem_t keep = *p;
    CHECK_FAILS(pyr_problem_load_file(p, o, tpath("case/q.ini")), PYR_ERR_CONFIG, "expected (5, 9) from grid.nx");
    CHECK(!memcmp(&keep, p, sizeof keep), "a failed load changed the problem");
    write_text("case/d.ini", "[grid]\ndims = 3\n[initial]\nkind = file\nfile = u0.npy\n");
    CHECK_FAILS(pyr_problem_load_file(p, o, tpath("case/d.ini")), PYR_ERR_CONFIG, "but grid.dims = 3");
    write_text("case/s.ini", "[initial]\nstep = 3\n");
    CHECK_FAILS(pyr_problem_load_file(p, o, tpath("case/s.ini")), PYR_ERR_CONFIG, "set initial.kind = file");
    /* Maxwell's material files are inputs too */
    write_text("case/m.ini", "[grid]\nnx = 7\nny = 5\n[scheme]\nequation = maxwell\nsteps = 4\n[material]\neps_file = eps.npy\n"
                             "mu_file = /abs/mu.npy\n");
    CHECK_OK(pyr_problem_load_file(p, o, tpath("case/m.ini")));
    CHECK(!strcmp(p->maxwell.eps_file, tpath("case/eps.npy")), "material.eps_file resolved to %s", p->maxwell.eps_file);
    CHECK(!strcmp(p->maxwell.mu_file, "/abs/mu.npy") && !p->maxwell.sigma_file[0], "absolute material.mu_file kept: %s", p->maxwell.mu_file);
    /* what a plan of it uses, and its time step from the Courant number */
    CHECK(!pyr_problem_field_used(p, 0) && pyr_problem_field_used(p, 2) && pyr_problem_field_used(p, 3) && !pyr_problem_field_used(p, 5) &&
              !pyr_problem_field_used(p, 99) && !pyr_problem_field_used(NULL, 0),
          "Maxwell TM uses Ez, Hx, Hy");
    double dt = 0, h = 1.0 / 6.0, k = 1.0 / 4.0;
    CHECK_OK(pyr_problem_time_step(p, &dt));
    CHECK(dt == p->maxwell.courant / sqrt(1.0 / (h * h) + 1.0 / (k * k)) && dt > 0, "Maxwell's dt %.17g", dt);
    write_text("case/past.ini", "[scheme]\nsteps = 5\n[initial]\nkind = file\nfile = u0.npy\nstep = 10\n");
    CHECK_FAILS(pyr_problem_load_file(p, o, tpath("case/past.ini")), PYR_ERR_CONFIG, "past scheme.steps = 5");
    pyr_problem_destroy(&p);
    pyr_options_destroy(&o);
    const char *names[] = {"case/u0.npy", "case/p.ini", "case/q.ini", "case/d.ini", "case/s.ini", "case/m.ini", "case/past.ini"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unlink(tpath(names[i]));
    rmdir(sub);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/test_api_keys_XXXXXX", PYR_BINARY_DIR);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_problem_keys();
    test_options_keys();
    test_wrap_and_run();
    test_struct_sizes();
    test_load_file();
    rmdir(dir);
    return check_report();
}
