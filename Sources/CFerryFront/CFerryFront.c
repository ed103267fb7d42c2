#define _GNU_SOURCE 1
#include <fcntl.h>
#include "CFerryFront.h"

long cferryfront_splice(int fd_in, int fd_out, size_t length) {
    return (long)splice(fd_in, NULL, fd_out, NULL, length, SPLICE_F_MOVE);
}

#ifdef FERRY_STATIC_FRONT
/*
 * In release builds the front is one static executable with libdbus-1.a linked in (no dynamic
 * loader: about 1 ms less start-up, BENCHMARKS.md P6). libdbus-1.a refers to two libsystemd
 * functions, used only to listen on sockets passed by systemd (a server's "systemd:" address),
 * which a client never does; rather than link libsystemd and its six libraries, answer as
 * libsystemd does in a process started without passed sockets. Hidden: they serve the static
 * link only, and never stand in for the real ones in a dynamic executable that links this
 * target too (the release test binary, where libdbus-1.so has libsystemd).
 */
__attribute__((visibility("hidden")))
int sd_listen_fds(int unset_environment) {
    (void)unset_environment;
    return 0;
}

__attribute__((visibility("hidden")))
int sd_is_socket(int fd, int family, int type, int listening) {
    (void)fd; (void)family; (void)type; (void)listening;
    return 0;
}
#endif
