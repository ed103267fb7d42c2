#ifndef FERRY_CNATS_SHIM_H
#define FERRY_CNATS_SHIM_H
/*
 * The only C the FerryContinuity module sees: Debian's libnats (nats.c 3.4.1). Status codes are
 * re-exported as plain ints so Swift compares them without the enum's raw values.
 */
#include <nats/nats.h>
#include <signal.h>

static const int CNATS_OK = NATS_OK;
static const int CNATS_TIMEOUT = NATS_TIMEOUT;
static const int CNATS_NO_RESPONDERS = NATS_NO_RESPONDERS;
static const int CNATS_NOT_FOUND = NATS_NOT_FOUND;
static const int CNATS_CONNECTION_CLOSED = NATS_CONNECTION_CLOSED;
static const int CNATS_NO_SERVER = NATS_NO_SERVER;
static const int CNATS_CONN_STATUS_CONNECTED = NATS_CONN_STATUS_CONNECTED;
static const int CNATS_KV_OP_PUT = kvOp_Put;

/* Ignores SIGPIPE: a remote paste writes into a pipe whose reader may leave. */
static inline void cnats_ignore_sigpipe(void) { signal(SIGPIPE, SIG_IGN); }

#endif
