/* Copies between pageable host memory and a runtime's pinned staging
 * buffers, split over a few threads: one thread's memcpy moves a fraction
 * of what a copy engine does, so a staged transfer is paced by the host
 * copy unless several threads share it. */
#ifndef PYR_BACKEND_HOST_COPY_H
#define PYR_BACKEND_HOST_COPY_H

#include <stddef.h>
#include <stdint.h>

/* `rows` rows of `bytes` each from src (rows `sp` bytes apart) to dst (rows
 * `dp` bytes apart), the bytes split evenly over up to `threads` threads
 * (0: the OpenMP default, at most 8: the memory system saturates before
 * that); small copies run on the calling thread. */
void pyr_host_copy_rows(void *dst, size_t dp, const void *src, size_t sp, size_t bytes, int64_t rows, int threads);

#endif
