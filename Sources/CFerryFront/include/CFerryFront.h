#ifndef FERRY_CFERRYFRONT_H
#define FERRY_CFERRYFRONT_H
/*
 * The C the `ferry` front (Sources/ferry-front) needs beyond Glibc and CDBus.
 */
#include <stddef.h>

/* splice(fd_in, NULL, fd_out, NULL, length, SPLICE_F_MOVE): Swift's Glibc module hides splice
 * behind _GNU_SOURCE, and the front is a static executable in release builds, where dlsym finds
 * nothing. -1 and errno on failure. */
long cferryfront_splice(int fd_in, int fd_out, size_t length);

#endif
