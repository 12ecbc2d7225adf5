/* Helpers of the libFuzzer harnesses: the readers under test take file
 * names, so an input is handed to them as an anonymous in-memory file
 * (memfd), never touching the file system. */
#ifndef PYR_FUZZ_UTIL_H
#define PYR_FUZZ_UTIL_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Write data to a memfd and give its /proc path; the fd is reused across runs. */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("pyrgrid-fuzz", 0);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
    return path;
}

/* A NUL-terminated copy (the caller frees it). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *t = malloc(size + 1);
    if (!t) abort();
    memcpy(t, data, size);
    t[size] = 0;
    return t;
}

#endif
