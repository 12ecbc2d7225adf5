/* Piece layouts: the row pitch of piece buffers under a runtime's
 * alignment rules (backend/device.h). */
#include "backend/device.h"

pyr_piece_layout_t pyr_piece_layout(const pyr_device_ops_t *ops, const int64_t ext[3], size_t elem)
{
    pyr_piece_layout_t L;
    int64_t pa = ops->pitch_align_bytes / (int64_t)elem;
    int64_t row = ext[0];
    if (pa > 1) row = (row + pa - 1) / pa * pa;
    if (ops->pitch_skew_bytes > 0 && ext[1] > 1 && (row * (int64_t)elem) % 2048 == 0) row += ops->pitch_skew_bytes / (int64_t)elem;
    L.pitch = row;
    L.layer_bytes = (uint64_t)row * (uint64_t)ext[1] * (uint64_t)ext[2] * elem;
    return L;
}

pyr_piece_layout_t pyr_face_layout(const int64_t ext[3], size_t elem)
{
    pyr_piece_layout_t L;
    L.pitch = ext[0];
    L.layer_bytes = (uint64_t)ext[0] * (uint64_t)ext[1] * (uint64_t)ext[2] * elem;
    return L;
}
