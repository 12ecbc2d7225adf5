/* `pyrgrid solve`: problem files, --set overrides, outputs, and failures that
 * leave no output behind.  pyr_cli_solve is linked in directly. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "io/npy.h"
#include "pyrgrid.h"
#include "solvers/lgs/lgs_config.h"
#include "../../tools/cli.h"

static char dir[512];

static const char *path_in(const char *name)
{
    static char buf[8][1024];
    static int next = 0;
    char *b = buf[next++ % 8];
    snprintf(b, 1024, "%s/%s", dir, name);
    return b;
}

static int exists(const char *name)
{
    struct stat st;
    return stat(path_in(name), &st) == 0;
}

static void write_file(const char *name, const char *text)
{
    FILE *fp = fopen(path_in(name), "w");
    CHECK(fp != NULL, "cannot write %s", name);
    if (!fp) return;
    fputs(text, fp);
    fclose(fp);
}

static int run_solve(int n, ...)
{
    char *argv[16];
    va_list ap;
    va_start(ap, n);
    for (int a = 0; a < n && a < 16; a++) argv[a] = va_arg(ap, char *);
    va_end(ap);
    return pyr_cli_solve(n, argv);
}

static void remove_outputs(void)
{
    const char *names[] = {"y.npy", "res.csv", "res.png", "y.png", "hist.png"};
    for (int f = 0; f < 5; f++) unlink(path_in(names[f]));
}

static void test_end_to_end(void)
{
    char ini[2048];
    snprintf(ini, sizeof ini,
             "; test system 1, red-black, all outputs\n"
             "[system]\nkind = test1\nN = 40\nM = 30\nprecision = double\nordering = redblack\nomega = 1.0\n"
             "tolerance = 1e-13\nmax_iterations = 10000\n"
             "[run]\nbackend = cpu\nthreads = 2\ncheck_every = 1\nreport_every = 5\n"
             "[output]\nsolution = %s\nhistory = %s\nimage = %s\n",
             path_in("y.npy"), path_in("res.csv"), path_in("y.png"));
    write_file("t1.ini", ini);
    char *ini_path = strdup(path_in("t1.ini"));
    CHECK(run_solve(2, ini_path, "--quiet") == 0, "solve test1 exits 0");
    CHECK(exists("y.npy") && exists("res.csv") && exists("y.png") && exists("res.png"),
          "solution, history, image and history image (res.png, from the history's name) are written");
    double *y = malloc(40 * 30 * sizeof *y);
    int64_t shape[2] = {40, 30};
    CHECK_OK(pyr_npy_read_expect(path_in("y.npy"), 2, shape, PYR_DOUBLE, y));
    double e = 0;
    for (int q = 0; q < 1200; q++) e = fmax(e, fabs(y[q] - 1.0));
    CHECK(e <= 1e-10, "CLI solution max error %g", e);
    FILE *fp = fopen(path_in("res.csv"), "r");
    char line[256] = "";
    int rows = 0;
    double last = 1;
    if (fp) {
        CHECK(fgets(line, sizeof line, fp) && !strcmp(line, "iteration,relative_residual\n"), "CSV header: %s", line);
        long long it;
        while (fscanf(fp, "%lld,%lf", &it, &last) == 2) rows++;
        fclose(fp);
    }
    CHECK(rows >= 3 && last <= 1e-13, "history has %d rows, last %g", rows, last);
    FILE *png = fopen(path_in("res.png"), "rb");
    unsigned char sig[8] = {0};
    if (png) {
        CHECK(fread(sig, 1, 8, png) == 8, "read PNG signature");
        fclose(png);
    }
    CHECK(!memcmp(sig, "\x89PNG\r\n\x1a\n", 8), "history image is a PNG");
    remove_outputs();

    /* --set overrides win over the file; history_image names the plot */
    char set_hist[1100], set_img[1100];
    snprintf(set_hist, sizeof set_hist, "output.history_image=%s", path_in("hist.png"));
    snprintf(set_img, sizeof set_img, "output.image=");
    CHECK(run_solve(8, ini_path, "--set", "system.ordering=lexicographic", "--set", set_hist, "--set", set_img,
                    "--quiet") == 0,
          "solve with overrides");
    CHECK(exists("hist.png") && !exists("res.png") && !exists("y.png"), "history_image used, image switched off");
    remove_outputs();

    /* failures leave nothing behind */
    CHECK(run_solve(4, ini_path, "--set", "system.omega=2.5", "--quiet") == 1, "omega 2.5 fails");
    CHECK(!exists("y.npy") && !exists("res.csv") && !exists("res.png"), "no output after a failure");
    CHECK(run_solve(4, ini_path, "--set", "system.tolerence=1", "--quiet") == 1, "unknown key fails");
    CHECK(run_solve(3, ini_path, "--bogus", "--quiet") == 2, "an unknown option is a usage error (exit 2)");
    CHECK(run_solve(1, "/nonexistent/problem.ini") == 1, "missing file fails");
    /* a diverging system: strong off-block coupling.  20 iterations do not
     * meet the tolerance: the outputs hold the last iterate, and the exit
     * status says it did not converge (issue 18: it was 0) */
    CHECK(run_solve(8, ini_path, "--set", "system.kind=test2", "--set", "system.omega=1.999", "--set",
                    "system.max_iterations=20", "--quiet") == 3,
          "test2 with omega 1.999 for 20 iterations runs, and exits 3 (not converged)");
    CHECK(exists("y.npy") && exists("res.csv"), "a run that did not converge still writes its outputs");
    remove_outputs();
    /* tolerance 0 asks for exactly max_iterations: that is no failure to converge */
    CHECK(run_solve(10, ini_path, "--set", "system.kind=test2", "--set", "system.tolerance=0", "--set",
                    "system.max_iterations=20", "--set", "system.omega=1.5", "--quiet") == 0,
          "tolerance 0: max_iterations is the plan, exit 0");
    remove_outputs();
    free(ini_path);
    free(y);
}

static void test_files_kind(void)
{
    pyr_lgs_system_t *sys = NULL;
    CHECK_OK(pyr_lgs_system_test1(12, 9, &sys));
    if (!sys) return;
    int64_t shape[2] = {12, 9};
    const char *names[6] = {"cC.npy", "aC.npy", "bC.npy", "cA.npy", "cB.npy", "F.npy"};
    double *arrays[6] = {sys->cC, sys->aC, sys->bC, sys->cA, sys->cB, sys->F};
    for (int a = 0; a < 6; a++) CHECK_OK(pyr_npy_write(path_in(names[a]), 2, shape, PYR_DOUBLE, arrays[a]));
    char ini[4096];
    snprintf(ini, sizeof ini,
             "[system]\nkind = files\ncC = %s\naC = %s\nbC = %s\ncA = %s\ncB = %s\nF = %s\ntolerance = 1e-13\n"
             "[run]\nbackend = cpu\n[output]\nsolution = %s\n",
             path_in(names[0]), path_in(names[1]), path_in(names[2]), path_in(names[3]), path_in(names[4]),
             path_in(names[5]), path_in("y.npy"));
    write_file("files.ini", ini);
    char *ini_path = strdup(path_in("files.ini"));
    CHECK(run_solve(2, ini_path, "--quiet") == 0, "kind = files solves");
    double y[108];
    CHECK_OK(pyr_npy_read_expect(path_in("y.npy"), 2, shape, PYR_DOUBLE, y));
    double e = 0;
    for (int q = 0; q < 108; q++) e = fmax(e, fabs(y[q] - 1.0));
    CHECK(e <= 1e-10, "files: max error %g", e);
    remove_outputs();

    /* a wrong shape is named */
    int64_t wrong[2] = {9, 12};
    CHECK_OK(pyr_npy_write(path_in("aC.npy"), 2, wrong, PYR_DOUBLE, sys->aC));
    pyr_lgs_config_t *cfg = NULL;
    CHECK_OK(pyr_lgs_config_load(ini_path, NULL, 0, &cfg));
    pyr_lgs_system_t *loaded = NULL;
    if (cfg) CHECK_FAILS(pyr_lgs_config_system(cfg, &loaded), PYR_ERR_FORMAT, "system.aC");
    CHECK(loaded == NULL, "no system on failure");
    CHECK(run_solve(2, ini_path, "--quiet") == 1, "wrong shape fails");
    CHECK(!exists("y.npy"), "no output after a failure");
    pyr_lgs_config_destroy(&cfg);
    /* N and M given but not matching the files */
    const char *set = "system.N=13";
    CHECK_OK(pyr_npy_write(path_in("aC.npy"), 2, shape, PYR_DOUBLE, sys->aC));
    CHECK_OK(pyr_lgs_config_load(ini_path, &set, 1, &cfg));
    if (cfg) CHECK_FAILS(pyr_lgs_config_system(cfg, &loaded), PYR_ERR_FORMAT, "(13, 9)");
    pyr_lgs_config_destroy(&cfg);
    /* NaN in an input file */
    sys->cB[5] = NAN;
    CHECK_OK(pyr_npy_write(path_in("cB.npy"), 2, shape, PYR_DOUBLE, sys->cB));
    CHECK(run_solve(2, ini_path, "--quiet") == 1, "NaN input fails");
    CHECK(!exists("y.npy"), "no output after a failure");
    free(ini_path);
    pyr_lgs_system_destroy(&sys);
}

static void test_config_errors(void)
{
    pyr_lgs_config_t *cfg = NULL;
    write_file("typo.ini", "[system]\nkind = test1\nN = 8\nM = 8\ntolerence = 1e-9\n");
    CHECK_FAILS(pyr_lgs_config_load(path_in("typo.ini"), NULL, 0, &cfg), PYR_ERR_CONFIG,
                "typo.ini:5: unknown key \"tolerence\" in section [system]; did you mean \"tolerance\"?");
    write_file("sec.ini", "[sytem]\nkind = test1\n");
    CHECK_FAILS(pyr_lgs_config_load(path_in("sec.ini"), NULL, 0, &cfg), PYR_ERR_CONFIG, "did you mean [system]?");
    write_file("val.ini", "[system]\nkind = test3\nN = 8\nM = 8\n");
    CHECK_FAILS(pyr_lgs_config_load(path_in("val.ini"), NULL, 0, &cfg), PYR_ERR_CONFIG, "did you mean \"test1\"?");
    write_file("num.ini", "[system]\nkind = test1\nN = 8x\nM = 8\n");
    CHECK_FAILS(pyr_lgs_config_load(path_in("num.ini"), NULL, 0, &cfg), PYR_ERR_CONFIG, "N = \"8x\" is not an integer");
    write_file("nosize.ini", "[system]\nkind = laplace\n");
    CHECK_FAILS(pyr_lgs_config_load(path_in("nosize.ini"), NULL, 0, &cfg), PYR_ERR_CONFIG, "set N and M");
    write_file("float.ini", "[system]\nkind = test1\nN = 8\nM = 8\nprecision = float\n");
    CHECK_FAILS(pyr_lgs_config_load(path_in("float.ini"), NULL, 0, &cfg), PYR_ERR_UNSUPPORTED, "use precision = double");
    write_file("ok.ini", "[system]\nkind = parabolic\nN = 8\nM = 8\n[parabolic]\na = 1 + x\nu_prev = u.npy\n"
                         "[run]\nbackend = cuda\n");
    CHECK_OK(pyr_lgs_config_load(path_in("ok.ini"), NULL, 0, &cfg));
    if (cfg) {
        CHECK(cfg->parabolic.a.formula && !strcmp(cfg->parabolic.a.formula, "1 + x"), "formula kept");
        /* (relative to the problem file's folder) */
        CHECK(cfg->parabolic.u_prev.path && !strcmp(cfg->parabolic.u_prev.path, path_in("u.npy")), ".npy is a path: %s",
              cfg->parabolic.u_prev.path ? cfg->parabolic.u_prev.path : "(none)");
        CHECK(cfg->options.backend == PYR_BACKEND_CUDA, "backend parsed");
    }
    pyr_lgs_config_destroy(&cfg);
    CHECK(cfg == NULL, "destroy NULLs");
    const char *sets[2] = {"run.backend=cpu", "parabolic.tau=0.5"};
    CHECK_OK(pyr_lgs_config_load(path_in("ok.ini"), sets, 2, &cfg));
    if (cfg) CHECK(cfg->options.backend == PYR_BACKEND_CPU && cfg->parabolic.tau == 0.5, "--set wins");
    pyr_lgs_config_destroy(&cfg);
    const char *bad1 = "run.backend";
    CHECK_FAILS(pyr_lgs_config_load(path_in("ok.ini"), &bad1, 1, &cfg), PYR_ERR_CONFIG, "expected section.key=value");
    const char *bad2 = "run.bakcend=cpu";
    CHECK_FAILS(pyr_lgs_config_load(path_in("ok.ini"), &bad2, 1, &cfg), PYR_ERR_CONFIG,
                "--set run.bakcend=cpu: unknown key \"bakcend\" in section [run]; did you mean \"backend\"?");
    const char *bad3 = "output.solutoin=y.npy";
    CHECK_FAILS(pyr_lgs_config_load(path_in("ok.ini"), &bad3, 1, &cfg), PYR_ERR_CONFIG, "did you mean \"solution\"?");
    CHECK_FAILS(pyr_lgs_config_load(path_in("missing.ini"), NULL, 0, &cfg), PYR_ERR_IO, "missing.ini");
    CHECK(cfg == NULL, "no config on failure");
}

/* issue 18: a formula nested 60000 deep killed `pyrgrid solve` with SIGSEGV
 * (exit 139); now it is an error message and exit 1. */
static void test_deep_formula(void)
{
    write_file("par.ini", "[system]\nkind = parabolic\nN = 8\nM = 8\n[run]\nbackend = cpu\n[output]\nsolution =\n");
    size_t n = 60000;
    char *set = malloc(2 * n + 32);
    strcpy(set, "parabolic.a=");
    char *p = set + strlen(set);
    memset(p, '(', n);
    p[n] = 'x';
    memset(p + n + 1, ')', n);
    p[2 * n + 1] = 0;
    char *ini = strdup(path_in("par.ini"));
    CHECK(run_solve(4, ini, "--set", set, "--quiet") == 1, "60000 nested parentheses: exit 1");
    strcpy(set, "parabolic.f=");
    memset(set + 12, '-', 3000);
    strcpy(set + 12 + 3000, "x");
    CHECK(run_solve(4, ini, "--set", set, "--quiet") == 1, "3000 minus signs: exit 1");
    free(set);
    free(ini);
    unlink(path_in("par.ini"));
}

/* reliability review L25: a diverging run with omega = 1 advised "try omega = 1";
 * the advice must change something (under-relaxation from omega = 1 or below,
 * omega = 1 from over-relaxation). */
static void test_divergence_advice(void)
{
    enum { N = 20, M = 15 };
    const int64_t shape[2] = {N, M};
    const char *names[6] = {"cC.npy", "aC.npy", "bC.npy", "cA.npy", "cB.npy", "F.npy"};
    static double a[N * M];
    uint64_t x = 12345;
    for (int k = 0; k < 6; k++) {
        /* random values in [-1, 1): blocks far from diagonally dominant */
        for (int q = 0; q < N * M; q++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            a[q] = (double)(x >> 11) * 0x1.0p-52 - 1.0;
            if (k == 0 && a[q] == 0.0) a[q] = 0.5; /* no zero diagonal */
        }
        CHECK_OK(pyr_npy_write(path_in(names[k]), 2, shape, PYR_DOUBLE, a));
    }
    char ini[4096];
    snprintf(ini, sizeof ini,
             "[system]\nkind = files\ncC = %s\naC = %s\nbC = %s\ncA = %s\ncB = %s\nF = %s\n[run]\nbackend = cpu\n"
             "[output]\nsolution = %s\n",
             path_in(names[0]), path_in(names[1]), path_in(names[2]), path_in(names[3]), path_in(names[4]), path_in(names[5]),
             path_in("y.npy"));
    write_file("diverge.ini", ini);
    char *ini_path = strdup(path_in("diverge.ini"));
    static const struct {
        const char *omega, *want;
    } cases[] = {{"system.omega=1", "under-relaxation (omega = 0.5)"},
                 {"system.omega=0.5", "stronger under-relaxation (omega = 0.25)"},
                 {"system.omega=1.5", "try omega = 1,"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        pyr_clear_error();
        CHECK(run_solve(4, ini_path, "--set", cases[c].omega, "--quiet") == 3, "%s: a diverging system exits 3", cases[c].omega);
        const char *msg = pyr_last_error();
        CHECK(strstr(msg, "diverged") && strstr(msg, cases[c].want), "%s: the advice should say '%s': %s", cases[c].omega, cases[c].want,
              msg);
        /* never the value already in use */
        char same[64];
        snprintf(same, sizeof same, "omega = %s)", strchr(cases[c].omega, '=') + 1);
        CHECK(!strstr(msg, same), "%s: the advice repeats the current value: %s", cases[c].omega, msg);
        CHECK(strcmp(cases[c].omega, "system.omega=1") || !strstr(msg, "try omega = 1"), "omega = 1 advised omega = 1: %s", msg);
        CHECK(!exists("y.npy"), "%s: no output after divergence", cases[c].omega);
    }
    unlink(path_in("diverge.ini"));
    free(ini_path);
}

/* reliability review L24: a subnormal value was "not a finite number" */
static void test_number_messages(void)
{
    write_file("n.ini", "[system]\nkind = test1\nN = 8\nM = 8\n");
    pyr_lgs_config_t *cfg = NULL;
    const char *tiny = "system.tolerance=1e-320", *huge = "system.tolerance=1e999", *word = "system.tolerance=small";
    CHECK_FAILS(pyr_lgs_config_load(path_in("n.ini"), &tiny, 1, &cfg), PYR_ERR_CONFIG, "too small to compute with");
    CHECK(!strstr(pyr_last_error(), "not a finite number"), "a subnormal value is called not finite: %s", pyr_last_error());
    CHECK_FAILS(pyr_lgs_config_load(path_in("n.ini"), &huge, 1, &cfg), PYR_ERR_CONFIG, "too large");
    CHECK_FAILS(pyr_lgs_config_load(path_in("n.ini"), &word, 1, &cfg), PYR_ERR_CONFIG, "\"small\" is not a number");
    const char *nan = "system.omega=nan";
    CHECK_FAILS(pyr_lgs_config_load(path_in("n.ini"), &nan, 1, &cfg), PYR_ERR_CONFIG, "is not a finite number");
    CHECK(cfg == NULL, "no config on failure");
    unlink(path_in("n.ini"));
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/lgs_cli_XXXXXX", PYR_BINARY_DIR);
    if (!mkdtemp(dir)) {
        fprintf(stderr, "mkdtemp %s failed\n", dir);
        return 1;
    }
    test_config_errors();
    test_end_to_end();
    test_files_kind();
    test_deep_formula();
    test_divergence_advice();
    test_number_messages();
    int rc = check_report();
    if (rc == 0) {
        const char *names[] = {"t1.ini", "files.ini", "typo.ini", "sec.ini", "val.ini", "num.ini", "nosize.ini",
                               "float.ini", "ok.ini", "cC.npy", "aC.npy", "bC.npy", "cA.npy", "cB.npy", "F.npy"};
        for (size_t f = 0; f < sizeof names / sizeof names[0]; f++) unlink(path_in(names[f]));
        rmdir(dir);
    }
    return rc;
}
