/* pyr_wisdom_calibrate is the one calibration (`pyrgrid calibrate` and
 * Python's pyrgrid.calibrate call it), and its schemes are the registry's:
 *  1. a name that is no registered scheme is refused with the list of every
 *     registered one; each registered name is taken on its own, its sets
 *     the ones it has (a dry run: stopped at the first report, before
 *     anything is measured), and together they make up "all";
 *  2. Maxwell is calibrated (quickly): a record of the scheme in the store,
 *     the reports in order, its 1D grids left out; asked for alone, they are
 *     refused as a set that does not exist;
 *  3. a kernel variant one of the sets lacks is refused before anything is
 *     measured; a report that stops after the first set leaves that set in
 *     the store and returns PYR_ERR_CANCELLED;
 *  4. `pyrgrid calibrate --help` names every option its parser takes (read
 *     from tools/cli_model.c): --scheme and --kernel were missing.
 * Architecture issue: the program calibrated Maxwell, the library did not. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "schemes/scheme.h"
#include "tune/wisdom.h"

typedef struct {
    int calls, stop_at, first_total, last_done;
    char first[256], last[4096];
} reports_t;

static int on_report(void *user, int done, int total, const char *text)
{
    reports_t *r = user;
    if (r->calls == 0) {
        r->first_total = total;
        snprintf(r->first, sizeof r->first, "%s", text);
    }
    r->calls++;
    r->last_done = done;
    snprintf(r->last, sizeof r->last, "%s", text);
    return r->calls > r->stop_at;
}

/* Sets of `schemes` (and the lists) as the dry run counts them; -1 when refused. */
static int dry_run(const char *schemes, const char *precisions, const char *dims)
{
    reports_t r = {.stop_at = 0};
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    pyr_status_t st = pyr_wisdom_calibrate(&o, schemes, precisions, dims, 1.0, on_report, &r);
    if (st != PYR_ERR_CANCELLED) return -1;
    pyr_clear_error();
    return r.calls == 1 ? r.first_total : -1;
}

/* Records of `scheme` in the store. */
static int records_of(const char *scheme)
{
    static pyr_wisdom_t w;
    pyr_wisdom_store_get(&w, NULL, 0, NULL, 0);
    int n = 0;
    for (int i = 0; i < w.nconstants; i++) n += !strcmp(w.constants[i].scheme, scheme);
    return n;
}

static void test_registry(void)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    CHECK_FAILS(pyr_wisdom_calibrate(&o, "heat,frobnicate", "float", "2", 0.05, NULL, NULL), PYR_ERR_ARG, "'frobnicate'");
    char refusal[512];
    snprintf(refusal, sizeof refusal, "%s", pyr_last_error());
    int nschemes = 0, sum = 0;
    for (int e = 0; pyr_scheme_of((pyr_equation_t)e); e++, nschemes++) {
        const char *name = pyr_scheme_of((pyr_equation_t)e)->name;
        CHECK(strstr(refusal, name) != NULL, "the refusal does not list the registered scheme %s: %s", name, refusal);
        const int n = dry_run(name, NULL, NULL);
        CHECK(n > 0 && n <= 6, "the registered scheme %s is not calibrated on its own (%d sets: %s)", name, n, pyr_last_error());
        sum += n;
    }
    CHECK(nschemes >= 3, "%d schemes registered", nschemes);
    CHECK(dry_run(NULL, NULL, NULL) == sum && dry_run("all", "all", "all") == sum, "all schemes are not the registered ones: %d sets, %d",
          dry_run(NULL, NULL, NULL), sum);
    CHECK(dry_run("maxwell", NULL, NULL) == 4, "Maxwell's sets: %d, expected 2D and 3D in two precisions", dry_run("maxwell", NULL, NULL));
    CHECK(dry_run("heat,poisson", "double", "1,3") == 4, "heat and Poisson, double, 1D and 3D: %d sets", dry_run("heat,poisson", "double", "1,3"));
    CHECK_FAILS(pyr_wisdom_calibrate(&o, "maxwell", "float", "1", 0.05, NULL, NULL), PYR_ERR_ARG, "2D or 3D");
    CHECK_FAILS(pyr_wisdom_calibrate(&o, ",", NULL, NULL, 0.05, NULL, NULL), PYR_ERR_ARG, "no scheme");
    CHECK_FAILS(pyr_wisdom_calibrate(&o, "heat", "half", NULL, 0.05, NULL, NULL), PYR_ERR_ARG, "float, double");
    CHECK_FAILS(pyr_wisdom_calibrate(&o, "heat", NULL, "4", 0.05, NULL, NULL), PYR_ERR_ARG, "dims");
    CHECK_FAILS(pyr_wisdom_calibrate(&o, "heat", NULL, NULL, 0, NULL, NULL), PYR_ERR_ARG, "effort");
    /* a variant the Maxwell kernel lacks: refused before the heat set is measured */
    snprintf(o.kernel, sizeof o.kernel, "wave");
    reports_t r = {.stop_at = 100};
    CHECK_FAILS(pyr_wisdom_calibrate(&o, "heat,maxwell", "float", "2", 0.05, on_report, &r), PYR_ERR_CONFIG, "maxwell float 2D");
    CHECK(strstr(pyr_last_error(), "leave this one out") != NULL, "no advice to ask for fewer sets: %s", pyr_last_error());
    CHECK(r.calls == 0 && records_of("heat") == 0, "measured before the variant was refused: %d reports", r.calls);
}

static void test_maxwell(void)
{
    pyr_wisdom_forget();
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    reports_t r = {.stop_at = 100};
    CHECK_OK(pyr_wisdom_calibrate(&o, "maxwell", "float", "1,2", 0.05, on_report, &r));
    CHECK(records_of("maxwell") == 1 && records_of("heat") == 0, "store: %d Maxwell records, %d heat", records_of("maxwell"), records_of("heat"));
    CHECK(r.calls == 2 && r.first_total == 1 && r.last_done == 1, "reports: %d calls, total %d, done %d", r.calls, r.first_total, r.last_done);
    CHECK(!strncmp(r.first, "calibrating the cpu backend on ", 31), "first report: '%s'", r.first);
    CHECK(!strncmp(r.last, "maxwell float 2D (kernel ", 25) && strstr(r.last, "ns/value") != NULL, "set report: '%s'", r.last);

    /* stopped after the first of two sets: that one kept */
    pyr_wisdom_forget();
    reports_t s = {.stop_at = 1};
    CHECK_FAILS(pyr_wisdom_calibrate(&o, "maxwell", "float", "2,3", 0.05, on_report, &s), PYR_ERR_CANCELLED, "after 1 of 2");
    CHECK(s.calls == 2 && records_of("maxwell") == 1, "stopped: %d reports, %d records", s.calls, records_of("maxwell"));
    pyr_wisdom_forget();
}

/* Every "--option" the calibrate command's parser compares against appears in its --help. */
static void test_help(const char *program)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tools/cli_model.c", PYR_SOURCE_DIR);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot read %s", path);
    if (!f) return;
    static char source[1 << 18], help[1 << 16];
    const size_t ns = fread(source, 1, sizeof source - 1, f);
    source[ns] = 0;
    fclose(f);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s' calibrate --help", program);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL, "cannot run %s", cmd);
    if (!p) return;
    const size_t nh = fread(help, 1, sizeof help - 1, p);
    help[nh] = 0;
    CHECK(pclose(p) == 0 && nh > 0, "%s failed", cmd);
    const char *begin = strstr(source, "int pyr_cli_calibrate(");
    const char *end = begin ? strstr(begin, "if (!any_action)") : NULL;
    CHECK(begin && end, "the calibrate command's parser not found in %s", path);
    if (!begin || !end) return;
    int options = 0;
    for (const char *q = begin; (q = strstr(q, "\"--")) != NULL && q < end; q++) {
        char opt[32];
        size_t n = 0;
        for (const char *c = q + 1; n + 1 < sizeof opt && (*c == '-' || (*c >= 'a' && *c <= 'z')); c++) opt[n++] = *c;
        opt[n] = 0;
        /* whole words of the help: the option followed by neither a letter nor a dash */
        int found = 0;
        for (const char *h = help; !found && (h = strstr(h, opt)) != NULL; h++) {
            const char next = h[n];
            found = !(next == '-' || (next >= 'a' && next <= 'z')) && (h == help || h[-1] != '-');
        }
        CHECK(found, "pyrgrid calibrate --help does not mention %s", opt);
        options++;
    }
    CHECK(options >= 12, "%d options found in the parser", options);
}

int main(int argc, char **argv)
{
    test_registry();
    test_maxwell();
    if (argc > 1) test_help(argv[1]);
    else CHECK(0, "usage: test_model_calibrate PATH-OF-pyrgrid");
    return check_report();
}
