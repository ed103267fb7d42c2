#ifndef FERRY_CDBUSBENCH_H
#define FERRY_CDBUSBENCH_H
/* The anchor of dbus-bench: the same calls made by a plain C libdbus program.
 * The server answers on `org.ferry.Bench1` at /org/ferry/Bench:
 *   Echo(ay) -> ay      returns its argument
 *   TakeFD(h) -> t      reads the fd to its end, returns the number of bytes read
 */
#include <stddef.h>

/* Serves the bench interface on the bus at `address` under `name` until Quit() is called.
 * Returns 0 after Quit, -1 on error (message on stderr). */
int cdb_serve(const char *address, const char *name);

/* Makes `iterations` blocking Echo calls with a `payload_bytes` payload against `name`,
 * writing each round-trip time in microseconds to `out_us`. Returns 0, or -1 on error. */
int cdb_echo(const char *address, const char *name, size_t payload_bytes, int iterations, double *out_us);

/* Makes `iterations` TakeFD calls, each passing a new memfd holding `payload_bytes` bytes,
 * writing each round-trip time (creating the memfd included) to `out_us`. 0 or -1. */
int cdb_take_fd(const char *address, const char *name, size_t payload_bytes, int iterations, double *out_us);

/* Asks the server to quit. */
int cdb_quit(const char *address, const char *name);

/* The peer-to-peer anchor: the same Echo and Quit without a bus. Listens on `address`
 * (unix:path=...), serving one connection at a time, until Quit() is called.
 * Returns 0 after Quit, -1 on error. */
int cdb_serve_peer(const char *address);

/* `iterations` blocking Echo calls over a new peer-to-peer connection to `address` (no Hello).
 * Returns 0, or -1 on error (also when nobody listens yet). */
int cdb_echo_peer(const char *address, size_t payload_bytes, int iterations, double *out_us);

/* Asks the peer-to-peer server to quit. */
int cdb_quit_peer(const char *address);

/* Placement (sched_setaffinity, which the Swift Glibc module does not declare): the CPUs this
 * process may run on, at most `max` of them written to `out`; their count, or -1. */
int cdb_available_cpus(int *out, int max);

/* Puts thread `tid` on the `count` CPUs in `cpus`. 0, or -1 with errno set. */
int cdb_place_thread(int tid, const int *cpus, int count);

#endif
