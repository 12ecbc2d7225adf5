/* The wisdom reader.  The first byte picks a mode:
 *   even: the text as it is (first line, version, checksum, machine checks);
 *   odd:  "@MACHINE@" is replaced by this machine's name and the checksum
 *         line by the right checksum, so that the fuzzer reaches the record
 *         parsers.
 * What is accepted must survive a round trip: written back as text and read
 * again, it gives the same text. */
#include "fuzz_util.h"
#include "tune/wisdom.h"

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* The odd mode's rewrite; returns a new string. */
static char *fix_up(const char *in)
{
    static char machine[2 * PYR_WISDOM_KEY];
    if (!machine[0]) pyr_wisdom_machine(machine, sizeof machine);
    size_t cap = strlen(in) * (strlen(machine) + 1) + 64;
    char *out = malloc(cap), *o = out;
    if (!out) abort();
    for (const char *p = in; *p;) {
        if (!strncmp(p, "@MACHINE@", 9)) {
            o += sprintf(o, "%s", machine);
            p += 9;
        } else {
            *o++ = *p++;
        }
    }
    *o = 0;
    char *cs = NULL;
    for (char *p = out; (p = strstr(p, "checksum\t")) != NULL; p++)
        if (p == out || p[-1] == '\n') cs = p;
    if (cs) sprintf(cs, "checksum\t%016llx\n", (unsigned long long)fnv1a(out, (size_t)(cs - out)));
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1 << 16)) return 0;
    char *text = fuzz_text(data + 1, size - 1);
    if (data[0] & 1) {
        char *fixed = fix_up(text);
        free(text);
        text = fixed;
    }
    pyr_wisdom_t *w = malloc(sizeof *w), *again = malloc(sizeof *again);
    if (!w || !again) abort();
    if (pyr_wisdom_from_text(text, "fuzz", w) == PYR_OK) {
        char *out = NULL, *out2 = NULL;
        if (pyr_wisdom_to_text(w, &out) != PYR_OK) abort();
        if (pyr_wisdom_from_text(out, "round trip", again) != PYR_OK) {
            fprintf(stderr, "accepted wisdom does not read back: %s\n", pyr_last_error());
            abort();
        }
        if (pyr_wisdom_to_text(again, &out2) != PYR_OK || strcmp(out, out2)) abort();
        free(out);
        free(out2);
    } else if (w->nconstants || w->nchoices) {
        abort(); /* a rejected file must leave nothing */
    }
    /* the file reader on the same bytes */
    int found = 0;
    (void)pyr_wisdom_load(fuzz_file((const uint8_t *)text, strlen(text)), w, &found);
    free(w);
    free(again);
    free(text);
    return 0;
}
