#include "plan/model.h"

pyr_model_constants_t pyr_model_default(pyr_backend_kind_t backend, int dims, pyr_precision_t precision)
{
    pyr_model_constants_t k;
    double elem = precision == PYR_DOUBLE ? 8.0 : 4.0;
    if (backend == PYR_BACKEND_CUDA) {
        /* PCIe Gen5 x16 at ~55 GB/s per direction (MEASURED.md); a stencil
         * step at ~400 Gcell/s in float (2D), less in 3D and double. */
        k.tau_c = elem / 55e9;
        k.tau_a = (dims == 3 ? 1.0 / 300e9 : 1.0 / 400e9) * (elem / 4.0);
    } else {
        /* CPU: "device" memory is a cache-sized buffer; a value copied in or
         * out costs about as much as two stencil updates out of cache. */
        k.tau_a = (elem / 8.0) * 0.5e-9;
        k.tau_c = 2.0 * k.tau_a;
    }
    return k;
}

double pyr_model_serial(const pyr_counters_t *c, const pyr_model_constants_t *k)
{
    return (double)(c->uploaded + c->downloaded) * k->tau_c + (double)c->computed * k->tau_a;
}
