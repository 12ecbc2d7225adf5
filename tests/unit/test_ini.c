/* The INI reader shared by `pyrgrid run` and `pyrgrid solve` (issue 18):
 *  - lines longer than libinih's 200-byte buffer are read whole: the tail of
 *    a long comment never becomes a key, a long value is not cut;
 *  - a key given twice in a section is refused (before: the last one won);
 *  - a directory, an empty file or a FIFO is refused as a problem file
 *    (before: a directory ran the built-in default problem; a FIFO would hang);
 *  - comments, inline comments, BOM, indentation, key: value.
 * Both config readers are checked, since both used to call libinih. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "problem/config.h"
#include "io/ini.h"
#include "solvers/lgs/lgs_config.h"

static char dir[1024];

static const char *tpath(const char *name)
{
    static char buf[8][1200];
    static int k = 0;
    char *b = buf[k++ % 8];
    snprintf(b, 1200, "%s/%s", dir, name);
    return b;
}

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(tpath(name), "wb");
    CHECK(f != NULL, "cannot create %s", name);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* ---------------------------------------------------------- the reader itself */

typedef struct {
    char got[16][3][1024];
    int n;
    int refuse_at; /* refuse the k-th key (1-based), 0: accept all */
} seen_t;

static int collect(void *user, const char *section, const char *key, const char *value)
{
    seen_t *s = user;
    if (s->n < 16) {
        snprintf(s->got[s->n][0], 1024, "%s", section);
        snprintf(s->got[s->n][1], 1024, "%s", key);
        snprintf(s->got[s->n][2], 1024, "%s", value);
    }
    s->n++;
    return s->refuse_at != s->n;
}

static pyr_status_t parse(const char *text, unsigned flags, seen_t *s, int *line)
{
    memset(s, 0, sizeof *s);
    return pyr_ini_parse(text, strlen(text), flags, collect, s, line);
}

static void test_syntax(void)
{
    seen_t s;
    int line;
    CHECK_OK(parse("\xEF\xBB\xBF; comment\n# comment\n[a]\nk = v ; inline\nk2: w\n  k3 =  x;y  \n\n[ b ]\r\nk = ; nothing\n", 0, &s,
                   &line));
    CHECK(s.n == 4, "4 keys, got %d", s.n);
    CHECK(!strcmp(s.got[0][0], "a") && !strcmp(s.got[0][1], "k") && !strcmp(s.got[0][2], "v"), "k = v ; inline -> '%s'",
          s.got[0][2]);
    CHECK(!strcmp(s.got[1][1], "k2") && !strcmp(s.got[1][2], "w"), "key: value -> '%s' '%s'", s.got[1][1], s.got[1][2]);
    CHECK(!strcmp(s.got[2][1], "k3") && !strcmp(s.got[2][2], "x;y"), "indented line and ';' without space: '%s' = '%s'",
          s.got[2][1], s.got[2][2]);
    CHECK(!strcmp(s.got[3][0], "b") && !strcmp(s.got[3][2], ""), "[ b ] and 'k = ; nothing': [%s] '%s'", s.got[3][0],
          s.got[3][2]);

    /* The defect: libinih read 200 bytes at a time, so the tail of a long
     * comment was parsed as a line of its own, here "steps = 0". */
    char text[2048];
    char pad[600];
    memset(pad, 'x', sizeof pad - 1);
    pad[sizeof pad - 1] = 0;
    snprintf(text, sizeof text, "[scheme]\n; a long comment %s steps = 0\nalpha = 1\n", pad);
    CHECK_OK(parse(text, 0, &s, &line));
    CHECK(s.n == 1 && !strcmp(s.got[0][1], "alpha"), "long comment: %d keys, first '%s'", s.n, s.got[0][1]);
    snprintf(text, sizeof text, "[initial]\nfile = %s.npy ; and a comment\n", pad);
    CHECK_OK(parse(text, 0, &s, &line));
    CHECK(s.n == 1 && strlen(s.got[0][2]) == strlen(pad) + 4, "a %zu-byte value read as %zu bytes", strlen(pad) + 4,
          strlen(s.got[0][2]));

    /* Errors in file order, with the line. */
    CHECK_FAILS(parse("[a]\nk = 1\njunk\n", 0, &s, &line), PYR_ERR_CONFIG, "not an INI line");
    CHECK(line == 3 && s.n == 1, "syntax error: line %d, %d keys handed over before it", line, s.n);
    CHECK_FAILS(parse("[a\nk = 1\n", 0, &s, &line), PYR_ERR_CONFIG, "without its ']'");
    CHECK_FAILS(parse("[a] k = 1\n", 0, &s, &line), PYR_ERR_CONFIG, "text after a section header");
    CHECK_FAILS(parse("[]\n", 0, &s, &line), PYR_ERR_CONFIG, "empty section");
    CHECK_FAILS(parse("[a]\n = 1\n", 0, &s, &line), PYR_ERR_CONFIG, "without a key");
    CHECK_FAILS(pyr_ini_parse("[a]\nk = 1\0x = 2\n", 16, 0, collect, &s, &line), PYR_ERR_CONFIG, "NUL byte");

    /* Duplicate keys: refused, naming both lines; other sections and case rules apply. */
    CHECK_FAILS(parse("[scheme]\nsteps = 100\nalpha = 1\n[grid]\nsteps = 2\n[scheme]\nsteps = 0\n", 0, &s, &line), PYR_ERR_CONFIG,
                "key 'steps' in [scheme] was already given on line 2");
    CHECK(line == 7 && s.n == 3, "duplicate: line %d, %d keys before it", line, s.n);
    CHECK_OK(parse("[a]\nK = 1\nk = 2\n", 0, &s, &line));
    CHECK_FAILS(parse("[a]\nK = 1\n[A]\nk = 2\n", PYR_INI_ANY_CASE, &s, &line), PYR_ERR_CONFIG, "already given on line 2");

    /* A handler's refusal stops the parse at its line, message untouched. */
    pyr_clear_error();
    memset(&s, 0, sizeof s);
    s.refuse_at = 2;
    const char *t = "[a]\nx = 1\ny = 2\nz = 3\n";
    CHECK(pyr_ini_parse(t, strlen(t), 0, collect, &s, &line) == PYR_ERR_CONFIG && line == 3 && s.n == 2,
          "handler refusal: line %d after %d keys", line, s.n);
}

/* ------------------------------------------------------ both config readers */

static void test_configs(void)
{
    char pad[400], text[2048];
    memset(pad, ' ', sizeof pad - 1);
    pad[sizeof pad - 1] = 0;
    memcpy(pad, "; the old default was 5000 steps, which took too long for this machine, so", 74);

    /* pyrgrid run: a long comment ending in "steps = 0" must not set steps */
    snprintf(text, sizeof text, "[grid]\ndims = 2\nnx = 33\nny = 33\n[scheme]\nsteps = 7\n%s steps = 0\n", pad);
    write_file("long.ini", text);
    pyr_config_t cfg;
    pyr_config_default(&cfg);
    CHECK_OK(pyr_config_load(&cfg, tpath("long.ini")));
    CHECK(cfg.problem.steps == 7, "a long comment's tail set steps to %lld", (long long)cfg.problem.steps);
    /* a long path is read whole */
    char longname[320];
    memset(longname, 'd', 300);
    strcpy(longname + 300, ".npy");
    snprintf(text, sizeof text, "[initial]\nkind = file\nfile = %s\n", longname);
    write_file("longval.ini", text);
    pyr_config_default(&cfg);
    CHECK_OK(pyr_config_load(&cfg, tpath("longval.ini")));
    /* (inputs are relative to the problem file's folder: the path gains it) */
    size_t got = strlen(cfg.problem.init_file);
    CHECK(got > 304 && !strcmp(cfg.problem.init_file + got - 304, longname) && cfg.problem.init_file[got - 305] == '/',
          "long value cut to %zu bytes", got);
    /* duplicates */
    write_file("dup.ini", "[scheme]\nsteps = 100\n[grid]\nnx = 33\n[scheme]\nsteps = 0\n");
    pyr_config_default(&cfg);
    CHECK_FAILS(pyr_config_load(&cfg, tpath("dup.ini")), PYR_ERR_CONFIG, "dup.ini line 6: key 'steps' in [scheme] was already given on line 2");
    /* errors keep their form */
    write_file("typo.ini", "[scheme]\nstepz = 3\n");
    pyr_config_default(&cfg);
    CHECK_FAILS(pyr_config_load(&cfg, tpath("typo.ini")), PYR_ERR_CONFIG, "typo.ini line 2: unknown key 'stepz' in [scheme]; did you mean 'steps'?");
    write_file("junk.ini", "[scheme]\nsteps 3\n");
    CHECK_FAILS(pyr_config_load(&cfg, tpath("junk.ini")), PYR_ERR_CONFIG, "junk.ini line 2: not an INI line");

    /* pyrgrid solve: the same reader, keys in any case */
    snprintf(text, sizeof text, "[system]\nkind = test1\nN = 8\nM = 8\nmax_iterations = 50\n%s max_iterations = 0\n", pad);
    write_file("lgs_long.ini", text);
    pyr_lgs_config_t *lc = NULL;
    CHECK_OK(pyr_lgs_config_load(tpath("lgs_long.ini"), NULL, 0, &lc));
    CHECK(lc && lc->options.max_iterations == 50, "solve: a long comment's tail set max_iterations to %lld",
          lc ? (long long)lc->options.max_iterations : -1LL);
    pyr_lgs_config_destroy(&lc);
    write_file("lgs_dup.ini", "[system]\nkind = test1\nN = 8\nM = 8\nomega = 1.5\nOMEGA = 1.0\n");
    CHECK_FAILS(pyr_lgs_config_load(tpath("lgs_dup.ini"), NULL, 0, &lc), PYR_ERR_CONFIG, "lgs_dup.ini:6: key 'OMEGA' in [system] was already given on line 5");
    snprintf(text, sizeof text, "[system]\nkind = parabolic\nN = 8\nM = 8\n[parabolic]\nu_prev = %s\n", longname);
    write_file("lgs_longval.ini", text);
    CHECK_OK(pyr_lgs_config_load(tpath("lgs_longval.ini"), NULL, 0, &lc));
    /* (relative to the problem file's folder: the path gains it) */
    CHECK(lc && lc->parabolic.u_prev.path && strlen(lc->parabolic.u_prev.path) > 304 &&
              !strcmp(lc->parabolic.u_prev.path + strlen(lc->parabolic.u_prev.path) - 304, longname),
          "solve: long value cut");
    pyr_lgs_config_destroy(&lc);
}

/* A directory, an empty file, a FIFO: refused by both, at once. */
static void test_not_problem_files(void)
{
    pyr_config_t cfg;
    pyr_lgs_config_t *lc = NULL;
    pyr_config_default(&cfg);
    CHECK_FAILS(pyr_config_load(&cfg, dir), PYR_ERR_IO, "is a directory");
    CHECK_FAILS(pyr_lgs_config_load(dir, NULL, 0, &lc), PYR_ERR_IO, "is a directory");
    write_file("empty.ini", "");
    CHECK_FAILS(pyr_config_load(&cfg, tpath("empty.ini")), PYR_ERR_IO, "is empty");
    CHECK_FAILS(pyr_lgs_config_load(tpath("empty.ini"), NULL, 0, &lc), PYR_ERR_IO, "is empty");
    CHECK(lc == NULL, "no config from an empty file");
    if (mkfifo(tpath("fifo.ini"), 0600) == 0) {
        /* without the check, opening the FIFO blocks this test forever (CTest's timeout) */
        CHECK_FAILS(pyr_config_load(&cfg, tpath("fifo.ini")), PYR_ERR_IO, "FIFO");
        CHECK_FAILS(pyr_lgs_config_load(tpath("fifo.ini"), NULL, 0, &lc), PYR_ERR_IO, "FIFO");
    } else {
        fprintf(stderr, "mkfifo: %s; FIFO case not run\n", strerror(errno));
    }
    CHECK_FAILS(pyr_config_load(&cfg, tpath("missing.ini")), PYR_ERR_IO, "cannot read problem file");
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/test_ini_XXXXXX", PYR_BINARY_DIR);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_syntax();
    test_configs();
    test_not_problem_files();
    int rc = check_report();
    const char *names[] = {"long.ini", "longval.ini", "dup.ini", "typo.ini", "junk.ini", "lgs_long.ini", "lgs_dup.ini",
                           "lgs_longval.ini", "empty.ini", "fifo.ini"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) unlink(tpath(names[i]));
    rmdir(dir);
    return rc;
}
