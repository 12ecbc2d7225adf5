/* Piece layouts: row pitch and leading pad of piece buffers under a
 * runtime's alignment rules (backend/device.h). */
#include "backend/device.h"

int64_t pyr_piece_xpad(const pyr_device_ops_t *ops, int64_t lo_x, size_t elem)
{
    int64_t a = ops->xpad_align_bytes / (int64_t)elem;
    if (a <= 1) return 0;
    /* column(x) = xpad + x - lo_x is a multiple of a when x = 1 (mod a). */
    int64_t xpad = (lo_x - 1) % a;
    return xpad < 0 ? xpad + a : xpad;
}

pyr_piece_layout_t pyr_piece_layout(const pyr_device_ops_t *ops, const int64_t ext[3], size_t elem)
{
    pyr_piece_layout_t L;
    int64_t a = ops->xpad_align_bytes / (int64_t)elem;
    int64_t pa = ops->pitch_align_bytes / (int64_t)elem;
    int64_t row = ext[0] + (a > 1 ? a - 1 : 0);
    if (pa > 1) row = (row + pa - 1) / pa * pa;
    if (ops->pitch_skew_bytes > 0 && ext[1] > 1 && (row * (int64_t)elem) % 2048 == 0) row += ops->pitch_skew_bytes / (int64_t)elem;
    L.pitch = row;
    L.xpad = 0;
    L.layer_bytes = (uint64_t)row * (uint64_t)ext[1] * (uint64_t)ext[2] * elem;
    return L;
}

pyr_piece_layout_t pyr_face_layout(const int64_t ext[3], size_t elem)
{
    pyr_piece_layout_t L;
    L.pitch = ext[0];
    L.xpad = 0;
    L.layer_bytes = (uint64_t)ext[0] * (uint64_t)ext[1] * (uint64_t)ext[2] * elem;
    return L;
}
