/* The XDMF sidecar of an HDF5 result (outputs/xdmf.h). */
#include "outputs/xdmf.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "io/atomic.h"

static void xml_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '&') fputs("&amp;", f);
        else if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

/* Dimensions, origin and spacing are written slowest axis first (z y x),
 * as XDMF's CoRectMesh readers (ParaView, VisIt) take them. */
pyr_status_t pyr_xdmf_write(const char *xmf_path, const pyr_xdmf_t *x)
{
    const pyr_problem_t *p = x->problem;
    const int rank = p->dims;
    pyr_atomic_file_t af;
    PYR_TRY(pyr_atomic_open(&af, xmf_path));
    FILE *f = af.fp;
    const char *base = strrchr(x->h5_path, '/');
    base = base ? base + 1 : x->h5_path;
    char dims[96] = "", origin[96] = "", spacing[160] = "";
    for (int i = 0; i < rank; i++) {
        int a = rank - 1 - i;
        size_t k = strlen(dims), o = strlen(origin), s = strlen(spacing);
        snprintf(dims + k, sizeof dims - k, "%s%lld", i ? " " : "", (long long)p->n[a]);
        snprintf(origin + o, sizeof origin - o, "%s0", i ? " " : "");
        snprintf(spacing + s, sizeof spacing - s, "%s%.17g", i ? " " : "", pyr_problem_h(p, a));
    }
    const int prec = p->precision == PYR_DOUBLE ? 8 : 4;
    fprintf(f, "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"2.0\">\n <Domain>\n");
    fprintf(f, "  <Grid Name=\"%s\" GridType=\"Collection\" CollectionType=\"Temporal\">\n", pyr_equation_name(p->equation));
    for (int e = 0; e < x->nsteps; e++) {
        const pyr_xdmf_step_t *en = &x->steps[e];
        /* Poisson has no time: its sweeps stand for it (Maxwell's is E's; H is half a step earlier) */
        double time = p->equation == PYR_EQ_POISSON ? (double)en->step : en->t;
        fprintf(f, "   <Grid Name=\"step %lld\" GridType=\"Uniform\">\n", (long long)en->step);
        fprintf(f, "    <Time Value=\"%.17g\"/>\n", time);
        fprintf(f, "    <Topology TopologyType=\"%dDCoRectMesh\" Dimensions=\"%s\"/>\n", rank, dims);
        fprintf(f, "    <Geometry GeometryType=\"%s\">\n", rank == 3 ? "ORIGIN_DXDYDZ" : "ORIGIN_DXDY");
        fprintf(f, "     <DataItem Name=\"Origin\" Dimensions=\"%d\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">%s</DataItem>\n", rank,
                origin);
        fprintf(f, "     <DataItem Name=\"Spacing\" Dimensions=\"%d\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">%s</DataItem>\n", rank,
                spacing);
        fprintf(f, "    </Geometry>\n");
        for (int i = 0; i < x->nfields; i++) {
            if (!x->updated[i] && !(x->inputs & (1u << i))) continue;
            fprintf(f, "    <Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"Node\">\n", x->name[i]);
            fprintf(f, "     <DataItem Dimensions=\"%s\" NumberType=\"Float\" Precision=\"%d\" Format=\"HDF\">", dims, prec);
            xml_escaped(f, base);
            if (x->updated[i] && en->group[0]) fprintf(f, ":/%s/%s</DataItem>\n", en->group, x->name[i]);
            else fprintf(f, ":/%s</DataItem>\n", x->name[i]);
            fprintf(f, "    </Attribute>\n");
        }
        fprintf(f, "   </Grid>\n");
    }
    fprintf(f, "  </Grid>\n </Domain>\n</Xdmf>\n");
    return pyr_atomic_commit(&af);
}
