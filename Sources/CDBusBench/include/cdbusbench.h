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

#endif
