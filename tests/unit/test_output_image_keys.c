/* The image keys of a problem file (issue 49, plots fit for a talk):
 * output.image_width, output.colormap (auto unless given) and
 * output.probes_png read, and their mistakes refused saying what works. */
#include <string.h>

#include "check.h"
#include "core/error.h"
#include "problem/config.h"
#include "pyrgrid_output.h"

static const char *maxwell = "[grid]\ndims = 2\nnx = 21\nny = 21\n[scheme]\nequation = maxwell\nsteps = 4\n[probe]\nprobe1 = Ez 10 10\n";

static pyr_status_t load(pyr_config_t *cfg, const char *text, const char *more)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s%s", text, more);
    pyr_config_default(cfg);
    pyr_status_t st = pyr_config_load_text(cfg, buf, strlen(buf), "talk.ini");
    if (st == PYR_OK) st = pyr_config_finish(cfg);
    return st;
}

int main(void)
{
    pyr_config_t cfg;
    CHECK_OK(load(&cfg, maxwell, ""));
    CHECK(cfg.colormap == PYR_COLORMAP_AUTO && cfg.image_width == 0 && !cfg.probes_png[0], "defaults: auto, width 0, no probes plot");
    CHECK_OK(load(&cfg, maxwell, "[output]\nimage_width = 1920\ncolormap = gray\nprobes_png = p.png\n"));
    CHECK(cfg.image_width == 1920 && cfg.colormap == PYR_COLORMAP_GRAY && !strcmp(cfg.probes_png, "p.png"), "the keys read: %d %d '%s'",
          cfg.image_width, cfg.colormap, cfg.probes_png);
    static const struct {
        const char *name;
        int map;
    } maps[] = {{"viridis", PYR_COLORMAP_VIRIDIS}, {"auto", PYR_COLORMAP_AUTO}, {"gray", PYR_COLORMAP_GRAY}, {"diverging", PYR_COLORMAP_DIVERGING}};
    for (int k = 0; k < 4; k++) {
        char line[64];
        snprintf(line, sizeof line, "[output]\ncolormap = %s\n", maps[k].name);
        CHECK_OK(load(&cfg, maxwell, line));
        CHECK(cfg.colormap == maps[k].map, "colormap = %s gives %d, want %d", maps[k].name, cfg.colormap, maps[k].map);
    }
    CHECK_OK(load(&cfg, maxwell, "[output]\nimage_width = 0\n"));
    CHECK_FAILS(load(&cfg, maxwell, "[output]\nimage_width = 120\n"), PYR_ERR_CONFIG, "use 300..8192");
    CHECK_FAILS(load(&cfg, maxwell, "[output]\nimage_width = 9000\n"), PYR_ERR_CONFIG, "use 300..8192");
    CHECK_FAILS(load(&cfg, maxwell, "[output]\nimage_width = wide\n"), PYR_ERR_CONFIG, "not an integer");
    CHECK_FAILS(load(&cfg, maxwell, "[output]\ncolormap = virdis\n"), PYR_ERR_CONFIG, "did you mean 'viridis'");
    CHECK_FAILS(load(&cfg, maxwell, "[output]\ncolormap = jet\n"), PYR_ERR_CONFIG, "viridis | auto | gray | diverging");
    CHECK_FAILS(load(&cfg, maxwell, "[output]\nimage_widht = 1920\n"), PYR_ERR_CONFIG, "image_width");
    /* a heat problem has no probes to plot */
    CHECK_FAILS(load(&cfg, "[grid]\ndims = 2\nnx = 9\nny = 9\n[scheme]\nsteps = 2\n", "[output]\nprobes_png = p.png\n"), PYR_ERR_CONFIG,
                "output.probes_png");
    /* the width and the colour map are any scheme's */
    CHECK_OK(load(&cfg, "[grid]\ndims = 2\nnx = 9\nny = 9\n[scheme]\nsteps = 2\n", "[output]\nimage_width = 640\ncolormap = diverging\n"));
    return check_report();
}
