/* Problem files of `pyrgrid run`: the INI reader, the keys, --set
 * overrides (the text after a NUL byte, one per line), validation and
 * planning on the CPU backend.  Sizes are capped so that planning stays
 * quick; nothing is executed and no file is read (initial.file is not
 * opened, the wisdom store is empty). */
#include "fuzz_util.h"
#include "problem/config.h"
#include "plan/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t ini_len = nul ? (size_t)(nul - data) : size;
    pyr_config_t *cfg = malloc(sizeof *cfg);
    if (!cfg) abort();
    pyr_config_default(cfg);
    if (pyr_config_load_text(cfg, (const char *)data, ini_len, "fuzz.ini") != PYR_OK) goto done;
    if (nul) {
        char *sets = fuzz_text(nul + 1, size - ini_len - 1);
        for (char *line = strtok(sets, "\n"); line; line = strtok(NULL, "\n"))
            if (pyr_config_set(cfg, line) != PYR_OK) break;
        free(sets);
    }
    pyr_config_finish(cfg);
    pyr_problem_t *p = &cfg->problem;
    if (pyr_problem_validate(p) != PYR_OK) goto done;
    /* keep planning cheap and off the file system */
    if (pyr_problem_nodes(p) > (1 << 20) || p->steps > 2000) goto done;
    if (p->init == PYR_INIT_FILE) p->init = PYR_INIT_SINE;
    pyr_options_t o = cfg->options;
    o.backend = PYR_BACKEND_CPU;
    o.plan_mode = PYR_PLAN_ESTIMATE; /* measure would execute */
    o.threads = 1;
    if (o.memory > (64u << 20)) o.memory = 64u << 20;
    pyr_plan_t *plan = NULL;
    if (pyr_plan_create(p, &o, &plan) == PYR_OK) {
        pyr_plan_info_t info;
        pyr_plan_get_info(plan, &info);
        if (info.device_bytes > info.budget_bytes) abort();
        /* the whole run of several parts gives height 0 where the parts' heights differ; each part has its own */
        const int parts = pyr_plan_part_count(plan);
        if (info.height < 1 && parts < 2) abort();
        for (int i = 0; i < parts && parts > 1; i++) {
            pyr_plan_info_t pi;
            if (pyr_plan_part_info(plan, i, &pi) != PYR_OK || pi.height < 1 || pi.device_bytes > pi.budget_bytes) abort();
        }
        FILE *devnull = fopen("/dev/null", "w");
        if (devnull) {
            pyr_plan_print(plan, devnull);
            fclose(devnull);
        }
    }
    pyr_plan_destroy(&plan);
done:
    free(cfg);
    return 0;
}
