/* The parts index of MPI runs and `pyrgrid assemble` (src/io/npy_part.c), and
 * the JSON writer of reports (src/io/json.c), against forged input:
 *   1. bounds that would wrap in int64 and shapes whose product overflows
 *      are refused, and no output appears (reliability review M2, M3);
 *   2. nesting deeper than the reader's limit is refused, not a stack
 *      overflow (M10); an index ending in "parts": [] gets the right message
 *      and byte positions are offsets from the start (L14);
 *   3. parts outside the index's directory (absolute, "..", a link leading
 *      out), one file listed twice, and an output that is a part are
 *      refused (L13); parts in a subdirectory are fine;
 *   4. the index writer and reader round-trip any file name (quotes,
 *      control characters, UTF-8, bytes that are not UTF-8) and the index
 *      stays valid UTF-8; JSON escapes are decoded as JSON defines them;
 *   5. report strings are valid UTF-8 whatever the bytes of a file name
 *      (L10): each byte that is not UTF-8 becomes \ufffd, UTF-8 stays. */
#define _XOPEN_SOURCE 700 /* symlink, mkdtemp */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "io/json.h"
#include "io/npy.h"
#include "io/npy_part.h"

static char dir[700];

static const char *tpath(const char *name)
{
    static char buf[8][1200];
    static int k = 0;
    char *b = buf[k++ % 8];
    snprintf(b, 1200, "%s/%s", dir, name);
    return b;
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void write_text(const char *name, const char *text)
{
    FILE *f = fopen(tpath(name), "wb");
    if (!f || fwrite(text, 1, strlen(text), f) != strlen(text) || fclose(f) != 0) {
        perror(name);
        exit(1);
    }
}

/* An index of the review's form: dims 2, dtype <f8, shape and parts as given (JSON text). */
static void write_index(const char *name, const char *shape, const char *parts)
{
    char text[4096];
    snprintf(text, sizeof text, "{\"format\":\"pyrgrid-parts\",\"version\":1,\"dims\":2,\"shape\":%s,\"dtype\":\"<f8\",\"parts\":[%s]}", shape, parts);
    write_text(name, text);
}

/* A 2 x 4 float64 part holding first, first + 1, ... */
static void write_part(const char *name, double first)
{
    double v[8];
    for (int i = 0; i < 8; i++) v[i] = first + i;
    const int64_t s[2] = {2, 4};
    CHECK_OK(pyr_npy_write(tpath(name), 2, s, PYR_DOUBLE, v));
}

/* Assembling must fail with `needle` in the message and leave no output. */
static void refused(const char *index, const char *needle, int line)
{
    unlink(tpath("out.npy"));
    pyr_status_t st = pyr_npy_assemble(tpath(index), tpath("out.npy"));
    CHECK(st != PYR_OK && strstr(pyr_last_error(), needle), "line %d: %s gave %s: %s (wanted \"%s\")", line, index, pyr_status_name(st),
          pyr_last_error(), needle);
    CHECK(!exists(tpath("out.npy")), "line %d: %s left an output", line, index);
}
#define REFUSED(index, needle) refused(index, needle, __LINE__)

/* Values of out.npy, a (4, 4) float64 array, against a 0..7 on top of b 10..17. */
static void check_out_ab(int line)
{
    double v[16];
    const int64_t s[2] = {4, 4};
    pyr_status_t st = pyr_npy_read_expect(tpath("out.npy"), 2, s, PYR_DOUBLE, v);
    CHECK(st == PYR_OK, "line %d: out.npy: %s", line, pyr_last_error());
    int bad = 0;
    for (int i = 0; st == PYR_OK && i < 16; i++) bad += v[i] != (i < 8 ? i : 10 + (i - 8));
    CHECK(!bad, "line %d: %d values of out.npy are wrong", line, bad);
}

/* ------------------------------------------------------------ 1. bounds */

static void test_bounds(void)
{
    write_part("p_a.npy", 0);
    write_part("p_b.npy", 10);
    write_index("ok.json", "[4,4]", "{\"file\":\"p_a.npy\",\"offset\":[0,0],\"shape\":[2,4]},{\"file\":\"p_b.npy\",\"offset\":[2,0],\"shape\":[2,4]}");
    CHECK_OK(pyr_npy_assemble(tpath("ok.json"), tpath("out.npy")));
    check_out_ab(__LINE__);

    /* M2: offset + shape wraps negative and passed; rows 0-1 were uninitialised heap */
    write_index("wrap.json", "[4,4]",
                "{\"file\":\"p_a.npy\",\"offset\":[2,0],\"shape\":[2,4]},{\"file\":\"p_b.npy\",\"offset\":[9223372036854775807,0],\"shape\":[2,4]}");
    REFUSED("wrap.json", "lies outside the array along axis 0");
    write_index("wrap1.json", "[4,4]",
                "{\"file\":\"p_a.npy\",\"offset\":[0,9223372036854775807],\"shape\":[2,4]},{\"file\":\"p_b.npy\",\"offset\":[2,0],\"shape\":[2,4]}");
    REFUSED("wrap1.json", "lies outside the array along axis 1");
    write_index("neg.json", "[4,4]",
                "{\"file\":\"p_a.npy\",\"offset\":[-9223372036854775807,0],\"shape\":[2,4]},{\"file\":\"p_b.npy\",\"offset\":[2,0],\"shape\":[2,4]}");
    REFUSED("neg.json", "lies outside the array along axis 0");
    write_index("huge_part.json", "[4,4]",
                "{\"file\":\"p_a.npy\",\"offset\":[0,0],\"shape\":[9223372036854775807,4]},{\"file\":\"p_b.npy\",\"offset\":[2,0],\"shape\":[2,4]}");
    REFUSED("huge_part.json", "lies outside the array");
    write_index("range.json", "[4,4]", "{\"file\":\"p_a.npy\",\"offset\":[0,99999999999999999999],\"shape\":[2,4]}");
    REFUSED("range.json", "an integer out of range");

    /* M3: [2^62 + 1, 2, 2] wrapped to 4 values; the product times 8 bytes must be a file size */
    const int64_t s122[3] = {1, 2, 2};
    const double ones[4] = {1, 1, 1, 1};
    CHECK_OK(pyr_npy_write(tpath("p122.npy"), 3, s122, PYR_DOUBLE, ones));
    write_text("fill.json", "{\"format\":\"pyrgrid-parts\",\"version\":1,\"dims\":3,\"dtype\":\"<f8\",\"shape\":[4611686018427387905,2,2],"
                            "\"parts\":[{\"file\":\"p122.npy\",\"offset\":[0,0,0],\"shape\":[1,2,2]}]}");
    REFUSED("fill.json", "more than 2^63 bytes");
    write_text("fill2.json", "{\"format\":\"pyrgrid-parts\",\"version\":1,\"dims\":2,\"dtype\":\"<f8\",\"shape\":[3037000500,3037000500],"
                             "\"parts\":[{\"file\":\"p_a.npy\",\"offset\":[0,0],\"shape\":[2,4]}]}");
    REFUSED("fill2.json", "more than 2^63 bytes");
    /* no overflow, but far more than the parts hold: the output is capped at what they cover */
    write_text("fill3.json", "{\"format\":\"pyrgrid-parts\",\"version\":1,\"dims\":3,\"dtype\":\"<f8\",\"shape\":[1099511627776,2,2],"
                             "\"parts\":[{\"file\":\"p122.npy\",\"offset\":[0,0,0],\"shape\":[1,2,2]}]}");
    REFUSED("fill3.json", "the parts hold 4 values, the array 4398046511104; a part is missing");
    write_index("zero.json", "[0,4]", "");
    REFUSED("zero.json", "sizes are at least 1");
    write_index("dims.json", "[4,4]", "{\"file\":\"p122.npy\",\"offset\":[0,0,0],\"shape\":[1,2,2]}");
    REFUSED("dims.json", "has 3 offsets and sizes, the array 2 dimensions");
}

/* ------------------------------------------------------------ 2. syntax */

static void test_syntax(void)
{
    /* M10: 200000 levels overflowed the stack in the skipper of unknown keys */
    const int deep = 200000;
    size_t n = 64 + 2 * (size_t)deep;
    char *text = malloc(n);
    size_t k = (size_t)snprintf(text, n, "{\"format\": \"pyrgrid-parts\", \"x\": ");
    for (int i = 0; i < deep; i++) text[k++] = '[';
    for (int i = 0; i < deep; i++) text[k++] = ']';
    snprintf(text + k, n - k, "}");
    write_text("deep.json", text);
    REFUSED("deep.json", "nested more than 200 levels deep");
    /* 200 levels are read (the index itself, then 99 objects and 99 lists
     * around a value of an unknown key, one more list around it or not) */
    for (int over = 0; over < 2; over++) {
        k = (size_t)snprintf(text, n, "{\"format\": \"pyrgrid-parts\", \"x\": ");
        for (int i = 0; i < 99; i++) k += (size_t)snprintf(text + k, n - k, "{\"k\": [\"v\", ");
        k += (size_t)snprintf(text + k, n - k, over ? "[[0]]" : "[0]");
        for (int i = 0; i < 99; i++) k += (size_t)snprintf(text + k, n - k, ", -1.5e3, true, null]}");
        snprintf(text + k, n - k, ", \"dims\": 2, \"shape\": [4, 4], \"dtype\": \"<f8\", \"parts\": [{\"file\": \"p_a.npy\", \"offset\": [0, 0], "
                                  "\"shape\": [2, 4], \"rank\": {\"a\": [[1]]}}, {\"file\": \"p_b.npy\", \"offset\": [2, 0], \"shape\": [2, 4]}]}");
        write_text("nested.json", text);
        if (over) {
            REFUSED("nested.json", "nested more than 200 levels deep");
            continue;
        }
        unlink(tpath("out.npy"));
        CHECK_OK(pyr_npy_assemble(tpath("nested.json"), tpath("out.npy")));
        check_out_ab(__LINE__);
    }
    free(text);

    /* L14: "parts": [] last gave "a string expected near byte 1" */
    write_text("empty.json", "{\"format\":\"pyrgrid-parts\",\"version\":1,\"dims\":2,\"shape\":[4,4],\"dtype\":\"<f8\",\"parts\":[]}");
    REFUSED("empty.json", "the parts hold 0 values, the array 16; a part is missing");
    write_text("empty2.json", "{\"parts\": [ ], \"format\":\"pyrgrid-parts\",\"shape\":[4,4],\"dtype\":\"<f8\"}");
    REFUSED("empty2.json", "a part is missing");
    /* byte positions count from the start of the file */
    const char *colon = "{\"format\": \"pyrgrid-parts\", \"shape\" [4, 4]}";
    write_text("colon.json", colon);
    char needle[80];
    snprintf(needle, sizeof needle, "':' expected at byte %d", (int)(strchr(colon, '[') - colon));
    REFUSED("colon.json", needle);
    const char *trail = "{\"format\":\"pyrgrid-parts\",\"shape\":[2,4],\"dtype\":\"<f8\",\"parts\":[{\"file\":\"p_a.npy\",\"offset\":[0,0],"
                        "\"shape\":[2,4]}]} x";
    write_text("trail.json", trail);
    snprintf(needle, sizeof needle, "text after the closing '}' at byte %d", (int)strlen(trail) - 1);
    REFUSED("trail.json", needle);
    write_text("nul.json", "{\"format\":\"pyrgrid-parts\",\"shape\":[2,4],\"dtype\":\"<f8\",\"parts\":[{\"file\":\"p_a.npy\\u0000x\",\"offset\":[0,0],"
                           "\"shape\":[2,4]}]}");
    REFUSED("nul.json", "a NUL (\\u0000) in a string");
    write_text("surrogate.json", "{\"format\":\"pyrgrid-parts\",\"x\":\"\\ud800\"}");
    REFUSED("surrogate.json", "unpaired surrogate");
    write_text("escape.json", "{\"format\":\"pyrgrid-parts\",\"x\":\"\\q\"}");
    REFUSED("escape.json", "an unknown escape");
    write_text("hex.json", "{\"format\":\"pyrgrid-parts\",\"x\":\"\\u12g4\"}");
    REFUSED("hex.json", "four hex digits");
    write_text("value.json", "{\"format\":\"pyrgrid-parts\",\"x\": }");
    REFUSED("value.json", "a value expected");
}

/* ------------------------------------------------------------ 3. confinement */

static void test_confinement(void)
{
    mkdir(tpath("sub"), 0777);
    mkdir(tpath("x"), 0777);
    write_part("x/secret.npy", 100);
    write_part("sub/a.npy", 0);
    write_part("sub/b.npy", 10);
    /* L13: "..", absolute names, and a link inside that leads out */
    write_index("sub/up.json", "[2,4]", "{\"file\":\"../x/secret.npy\",\"offset\":[0,0],\"shape\":[2,4]}");
    REFUSED("sub/up.json", "leads out of the index's directory");
    write_index("sub/up2.json", "[2,4]", "{\"file\":\"d/../../x/secret.npy\",\"offset\":[0,0],\"shape\":[2,4]}");
    REFUSED("sub/up2.json", "leads out of the index's directory");
    char parts[2400];
    snprintf(parts, sizeof parts, "{\"file\":\"%s\",\"offset\":[0,0],\"shape\":[2,4]}", tpath("x/secret.npy"));
    write_index("sub/abs.json", "[2,4]", parts);
    REFUSED("sub/abs.json", "names the absolute path");
    unlink(tpath("sub/link.npy"));
    CHECK(symlink("../x/secret.npy", tpath("sub/link.npy")) == 0, "symlink: %s", strerror(errno));
    write_index("sub/link.json", "[2,4]", "{\"file\":\"link.npy\",\"offset\":[0,0],\"shape\":[2,4]}");
    REFUSED("sub/link.json", "outside the index's directory");
    /* L13: one file at two offsets, by the same name, another name, or a hard link */
    write_index("sub/dup.json", "[4,4]", "{\"file\":\"a.npy\",\"offset\":[0,0],\"shape\":[2,4]},{\"file\":\"a.npy\",\"offset\":[2,0],\"shape\":[2,4]}");
    REFUSED("sub/dup.json", "are the same file");
    write_index("sub/dup2.json", "[4,4]", "{\"file\":\"a.npy\",\"offset\":[0,0],\"shape\":[2,4]},{\"file\":\"./a.npy\",\"offset\":[2,0],\"shape\":[2,4]}");
    REFUSED("sub/dup2.json", "are the same file");
    unlink(tpath("sub/hard.npy"));
    CHECK(link(tpath("sub/a.npy"), tpath("sub/hard.npy")) == 0, "link: %s", strerror(errno));
    write_index("sub/dup3.json", "[4,4]", "{\"file\":\"a.npy\",\"offset\":[0,0],\"shape\":[2,4]},{\"file\":\"hard.npy\",\"offset\":[2,0],\"shape\":[2,4]}");
    REFUSED("sub/dup3.json", "are the same file");
    /* overlapping copies are reported as the overlap they are */
    write_index("sub/dup4.json", "[2,4]", "{\"file\":\"a.npy\",\"offset\":[0,0],\"shape\":[2,4]},{\"file\":\"a.npy\",\"offset\":[0,0],\"shape\":[2,4]}");
    REFUSED("sub/dup4.json", "overlap");
    /* the output is one of the parts: it would replace that part */
    write_index("sub/ab.json", "[4,4]", "{\"file\":\"a.npy\",\"offset\":[0,0],\"shape\":[2,4]},{\"file\":\"b.npy\",\"offset\":[2,0],\"shape\":[2,4]}");
    CHECK_FAILS(pyr_npy_assemble(tpath("sub/ab.json"), tpath("sub/b.npy")), PYR_ERR_IO, "would destroy that part");
    double v[8];
    const int64_t s[2] = {2, 4};
    CHECK(pyr_npy_read_expect(tpath("sub/b.npy"), 2, s, PYR_DOUBLE, v) == PYR_OK && v[0] == 10, "the part b.npy was changed");
    /* legal: names relative to the index, in it or below it */
    unlink(tpath("out.npy"));
    CHECK_OK(pyr_npy_assemble(tpath("sub/ab.json"), tpath("out.npy")));
    check_out_ab(__LINE__);
    write_index("below.json", "[4,4]", "{\"file\":\"sub/a.npy\",\"offset\":[0,0],\"shape\":[2,4]},{\"file\":\"sub//./b.npy\",\"offset\":[2,0],\"shape\":[2,4]}");
    unlink(tpath("out.npy"));
    CHECK_OK(pyr_npy_assemble(tpath("below.json"), tpath("out.npy")));
    check_out_ab(__LINE__);
}

/* ------------------------------------------------------------ 4. names */

/* Whether text is all well-formed UTF-8. */
static int valid_utf8(const char *text)
{
    for (const char *c = text; *c;) {
        size_t n = pyr_utf8_char_len(c);
        if (!n) return 0;
        c += n;
    }
    return 1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *t = calloc(1 << 16, 1);
    if (t) (void)!fread(t, 1, (1 << 16) - 1, f);
    fclose(f);
    return t;
}

static void test_names(void)
{
    /* as the MPI writer: part names relative to the index; odd bytes in them round-trip */
    const char *odd[2] = {"q\"uo\\te\tctl\x01 \xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80.npy", "bad\xff\xfe" "b\xc0\xaf\xed\xa0\x80.npy"};
    write_part(odd[0], 0);
    write_part(odd[1], 10);
    pyr_npy_part_t p[2];
    memset(p, 0, sizeof p);
    for (int i = 0; i < 2; i++) {
        snprintf(p[i].file, sizeof p[i].file, "%s", odd[i]);
        p[i].offset[0] = 2 * i;
        p[i].shape[0] = 2;
        p[i].shape[1] = 4;
    }
    pyr_npy_index_t x = {2, {4, 4, 1}, PYR_DOUBLE, 2, p};
    CHECK_OK(pyr_npy_index_write(tpath("names.parts.json"), &x));
    char *text = slurp(tpath("names.parts.json"));
    CHECK(text && valid_utf8(text), "the index is not valid UTF-8");
    CHECK(text && strstr(text, "bad\\udcff\\udcfeb\\udcc0\\udcaf\\udced\\udca0\\udc80.npy"), "bytes that are not UTF-8: %s", text ? text : "");
    CHECK(text && strstr(text, "q\\\"uo\\\\te\\u0009ctl\\u0001 \xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80.npy"), "escapes: %s", text ? text : "");
    free(text);
    pyr_npy_index_t y;
    CHECK_OK(pyr_npy_index_read(tpath("names.parts.json"), &y));
    CHECK(y.nparts == 2 && !strcmp(y.parts[0].file, odd[0]) && !strcmp(y.parts[1].file, odd[1]), "names differ after a round trip");
    free(y.parts);
    unlink(tpath("out.npy"));
    CHECK_OK(pyr_npy_assemble(tpath("names.parts.json"), tpath("out.npy")));
    check_out_ab(__LINE__);

    /* JSON's escapes as JSON defines them: \u00e9 is U+00E9 (UTF-8 c3 a9), a pair is one code point */
    mkdir(tpath("\xc3\xa9"), 0777);
    write_part("\xc3\xa9/\xf0\x9f\x98\x80.npy", 0);
    write_part("\xe4\xb8\xad.npy", 10);
    write_index("escapes.json", "[4,4]",
                "{\"file\":\"\\u00e9\\/\\ud83d\\ude00.npy\",\"offset\":[0,0],\"shape\":[2,4]},{\"file\":\"\\u4e2d.npy\",\"offset\":[2,0],\"shape\":[2,4]}");
    unlink(tpath("out.npy"));
    CHECK_OK(pyr_npy_assemble(tpath("escapes.json"), tpath("out.npy")));
    check_out_ab(__LINE__);
}

/* ------------------------------------------------------------ 5. reports */

static void test_report_strings(void)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"a\xff" "b.npy", "\"a\\ufffdb.npy\""},                            /* the review's name */
        {"\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""}, /* UTF-8 stays */
        {"\xc0\xaf", "\"\\ufffd\\ufffd\""},                                 /* overlong '/' */
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},                      /* a surrogate */
        {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""},           /* past U+10FFFF */
        {"x\xe2\x82", "\"x\\ufffd\\ufffd\""},                               /* cut short by the end */
        {"\xe2\x82x", "\"\\ufffd\\ufffdx\""},                               /* cut short */
        {"\x80\xbf", "\"\\ufffd\\ufffd\""},                                 /* stray continuation bytes */
        {"q\"b\\\n\x01\x7f", "\"q\\\"b\\\\\\n\\u0001\x7f\""},               /* the escapes that held */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pyr_json_t j;
        pyr_json_init(&j, 0);
        pyr_json_string(&j, NULL, cases[i].in);
        const char *t = pyr_json_text(&j);
        CHECK(t && !strcmp(t, cases[i].out), "case %zu: %s, wanted %s", i, t ? t : "(null)", cases[i].out);
        CHECK(t && valid_utf8(t), "case %zu: not valid UTF-8", i);
        pyr_json_free(&j);
    }
    /* keys too */
    pyr_json_t j;
    pyr_json_init(&j, 1);
    pyr_json_object(&j, NULL);
    pyr_json_string(&j, "k\xfe", "v");
    pyr_json_end(&j);
    const char *t = pyr_json_text(&j);
    CHECK(t && strstr(t, "\"k\\ufffd\": \"v\"") && valid_utf8(t), "key: %s", t ? t : "(null)");
    pyr_json_free(&j);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/test_assemble_XXXXXX", PYR_BINARY_DIR);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    /* a regression of M3 would write until the disk is full: 64 MiB at most,
     * refused with EFBIG rather than ended by SIGXFSZ */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit fsize = {64 << 20, 64 << 20};
    setrlimit(RLIMIT_FSIZE, &fsize);
    test_bounds();
    test_syntax();
    test_confinement();
    test_names();
    test_report_strings();
    int rc = check_report();
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (rc == 0 && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return rc;
}
