/* The configuration of `pyrgrid frames` (frames_config.c): the [frames]
 * section read with the INI reader, then --set overrides (the text after a
 * NUL byte, one per line), then the options' validation.  Every input must
 * be taken or refused with a message; never a crash, a leak or a path that
 * overflows its field. */
#include "fuzz_util.h"
#include "core/error.h"
#include "pipelines/frames/frames_config.h"

static void check_paths(const fr_config_t *c)
{
    const char *p[] = {c->input, c->residual, c->shifts, c->candidates, c->snr_image, c->max_snr};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        if (memchr(p[i], 0, PYR_PATH_MAX) == NULL) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t ini_len = nul ? (size_t)(nul - data) : size;
    fr_config_t *cfg = malloc(sizeof *cfg);
    if (!cfg) abort();
    fr_config_default(cfg);
    pyr_clear_error();
    if (fr_config_load(cfg, fuzz_file(data, ini_len)) != PYR_OK) {
        if (!pyr_last_error()[0]) abort(); /* a refusal says why */
        goto done;
    }
    check_paths(cfg);
    if (nul) {
        char *sets = fuzz_text(nul + 1, size - ini_len - 1);
        for (char *line = strtok(sets, "\n"); line; line = strtok(NULL, "\n"))
            if (fr_config_set(cfg, line) != PYR_OK) break;
        free(sets);
        check_paths(cfg);
    }
    if (pyr_frames_options_validate(&cfg->o) == PYR_OK) {
        if (cfg->o.history < 1) abort(); /* validation lets no history of zero frames through */
    }
done:
    free(cfg);
    return 0;
}
