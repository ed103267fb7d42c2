#define _GNU_SOURCE
#include "cdbusbench.h"
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <poll.h>
#include <sched.h>

#define BENCH_PATH "/org/ferry/Bench"
#define BENCH_IFACE "org.ferry.Bench1"

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static DBusConnection *open_connection(const char *address, int hello, int quiet) {
    DBusError err;
    dbus_error_init(&err);
    DBusConnection *c = dbus_connection_open_private(address, &err);
    if (!c) {
        if (!quiet) fprintf(stderr, "cdbusbench: %s\n", err.message);
        dbus_error_free(&err);
        return NULL;
    }
    dbus_connection_set_exit_on_disconnect(c, 0);
    if (hello && !dbus_bus_register(c, &err)) {
        fprintf(stderr, "cdbusbench: %s\n", err.message);
        dbus_error_free(&err);
        dbus_connection_close(c);
        dbus_connection_unref(c);
        return NULL;
    }
    return c;
}

static DBusConnection *open_bus(const char *address) { return open_connection(address, 1, 0); }

static void close_bus(DBusConnection *c) {
    dbus_connection_close(c);
    dbus_connection_unref(c);
}

static DBusMessage *reply_to(DBusMessage *call, DBusMessage **out, int *quit) {
    const char *member = dbus_message_get_member(call);
    DBusMessageIter it, out_it;
    DBusMessage *reply = NULL;
    if (!dbus_message_iter_init(call, &it)) it = (DBusMessageIter){0};
    if (member && strcmp(member, "Echo") == 0 && dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_ARRAY) {
        DBusMessageIter sub;
        const unsigned char *bytes = NULL;
        int n = 0;
        dbus_message_iter_recurse(&it, &sub);
        dbus_message_iter_get_fixed_array(&sub, &bytes, &n);
        reply = dbus_message_new_method_return(call);
        dbus_message_iter_init_append(reply, &out_it);
        DBusMessageIter arr;
        dbus_message_iter_open_container(&out_it, DBUS_TYPE_ARRAY, "y", &arr);
        dbus_message_iter_append_fixed_array(&arr, DBUS_TYPE_BYTE, &bytes, n);
        dbus_message_iter_close_container(&out_it, &arr);
    } else if (member && strcmp(member, "TakeFD") == 0 && dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_UNIX_FD) {
        int fd = -1;
        dbus_message_iter_get_basic(&it, &fd);
        dbus_uint64_t total = 0;
        char buf[65536];
        ssize_t r;
        while ((r = read(fd, buf, sizeof buf)) > 0) total += (dbus_uint64_t)r;
        close(fd);
        reply = dbus_message_new_method_return(call);
        dbus_message_iter_init_append(reply, &out_it);
        dbus_message_iter_append_basic(&out_it, DBUS_TYPE_UINT64, &total);
    } else if (member && strcmp(member, "Quit") == 0) {
        reply = dbus_message_new_method_return(call);
        *quit = 1;
    } else {
        reply = dbus_message_new_error(call, DBUS_ERROR_UNKNOWN_METHOD, "no such method");
    }
    *out = reply;
    return reply;
}

int cdb_serve(const char *address, const char *name) {
    DBusConnection *c = open_bus(address);
    if (!c) return -1;
    DBusError err;
    dbus_error_init(&err);
    if (dbus_bus_request_name(c, name, DBUS_NAME_FLAG_DO_NOT_QUEUE, &err) != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) {
        fprintf(stderr, "cdbusbench: cannot own %s\n", name);
        dbus_error_free(&err);
        close_bus(c);
        return -1;
    }
    int quit = 0;
    while (!quit && dbus_connection_read_write(c, -1)) {
        DBusMessage *m;
        while (!quit && (m = dbus_connection_pop_message(c)) != NULL) {
            if (dbus_message_get_type(m) == DBUS_MESSAGE_TYPE_METHOD_CALL &&
                dbus_message_has_path(m, BENCH_PATH) && dbus_message_has_interface(m, BENCH_IFACE)) {
                DBusMessage *reply = NULL;
                reply_to(m, &reply, &quit);
                if (reply) { dbus_connection_send(c, reply, NULL); dbus_message_unref(reply); }
            }
            dbus_message_unref(m);
        }
    }
    dbus_connection_flush(c);
    close_bus(c);
    return 0;
}

static DBusMessage *new_call(const char *name, const char *member) {
    return dbus_message_new_method_call(name, BENCH_PATH, BENCH_IFACE, member);
}

static int call_blocking(DBusConnection *c, DBusMessage *m) {
    DBusError err;
    dbus_error_init(&err);
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(c, m, 30000, &err);
    if (!reply) { fprintf(stderr, "cdbusbench: %s\n", err.message); dbus_error_free(&err); return -1; }
    dbus_message_unref(reply);
    return 0;
}

static int echo_over(DBusConnection *c, const char *name, size_t payload_bytes, int iterations, double *out_us);

int cdb_echo(const char *address, const char *name, size_t payload_bytes, int iterations, double *out_us) {
    DBusConnection *c = open_bus(address);
    if (!c) return -1;
    return echo_over(c, name, payload_bytes, iterations, out_us);
}

static int echo_over(DBusConnection *c, const char *name, size_t payload_bytes, int iterations, double *out_us) {
    unsigned char *payload = malloc(payload_bytes ? payload_bytes : 1);
    memset(payload, 0xA5, payload_bytes);
    int rc = 0;
    for (int i = 0; i < iterations && rc == 0; i++) {
        double t0 = now_us();
        DBusMessage *m = new_call(name, "Echo");
        DBusMessageIter it, arr;
        const unsigned char *p = payload;
        dbus_message_iter_init_append(m, &it);
        dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "y", &arr);
        dbus_message_iter_append_fixed_array(&arr, DBUS_TYPE_BYTE, &p, (int)payload_bytes);
        dbus_message_iter_close_container(&it, &arr);
        rc = call_blocking(c, m);
        dbus_message_unref(m);
        out_us[i] = now_us() - t0;
    }
    free(payload);
    close_bus(c);
    return rc;
}

int cdb_take_fd(const char *address, const char *name, size_t payload_bytes, int iterations, double *out_us) {
    DBusConnection *c = open_bus(address);
    if (!c) return -1;
    unsigned char *payload = malloc(payload_bytes ? payload_bytes : 1);
    memset(payload, 0x5A, payload_bytes);
    int rc = 0;
    for (int i = 0; i < iterations && rc == 0; i++) {
        double t0 = now_us();
        int fd = memfd_create("cdbusbench", MFD_CLOEXEC);
        if (fd < 0 || write(fd, payload, payload_bytes) != (ssize_t)payload_bytes || lseek(fd, 0, SEEK_SET) != 0) {
            perror("cdbusbench: memfd");
            rc = -1;
            if (fd >= 0) close(fd);
            break;
        }
        DBusMessage *m = new_call(name, "TakeFD");
        DBusMessageIter it;
        dbus_message_iter_init_append(m, &it);
        dbus_message_iter_append_basic(&it, DBUS_TYPE_UNIX_FD, &fd);
        close(fd);
        rc = call_blocking(c, m);
        dbus_message_unref(m);
        out_us[i] = now_us() - t0;
    }
    free(payload);
    close_bus(c);
    return rc;
}

int cdb_quit(const char *address, const char *name) {
    DBusConnection *c = open_bus(address);
    if (!c) return -1;
    DBusMessage *m = new_call(name, "Quit");
    int rc = call_blocking(c, m);
    dbus_message_unref(m);
    close_bus(c);
    return rc;
}

/* The peer-to-peer server: the listening socket's one watch, and the connection being served. */
static DBusWatch *peer_watch;
static DBusConnection *peer_conn;

static dbus_bool_t peer_add_watch(DBusWatch *w, void *data) { (void)data; peer_watch = w; return TRUE; }
static void peer_remove_watch(DBusWatch *w, void *data) { (void)data; if (peer_watch == w) peer_watch = NULL; }
static void peer_new_connection(DBusServer *server, DBusConnection *c, void *data) {
    (void)server; (void)data;
    if (peer_conn) return; /* one at a time: not referenced, this one is closed */
    peer_conn = dbus_connection_ref(c);
    dbus_connection_set_exit_on_disconnect(c, 0);
}

int cdb_serve_peer(const char *address) {
    DBusError err;
    dbus_error_init(&err);
    DBusServer *server = dbus_server_listen(address, &err);
    if (!server) { fprintf(stderr, "cdbusbench: %s\n", err.message); dbus_error_free(&err); return -1; }
    dbus_server_set_new_connection_function(server, peer_new_connection, NULL, NULL);
    dbus_server_set_watch_functions(server, peer_add_watch, peer_remove_watch, NULL, NULL, NULL);
    int quit = 0;
    while (!quit) {
        if (!peer_conn) {
            /* Accept: wait on the listening socket, let libdbus accept. */
            if (!peer_watch) { fprintf(stderr, "cdbusbench: no listening watch\n"); break; }
            struct pollfd pfd = { .fd = dbus_watch_get_unix_fd(peer_watch), .events = POLLIN };
            if (poll(&pfd, 1, -1) < 0) continue;
            dbus_watch_handle(peer_watch, DBUS_WATCH_READABLE);
            continue;
        }
        if (!dbus_connection_read_write(peer_conn, -1)) {
            dbus_connection_close(peer_conn);
            dbus_connection_unref(peer_conn);
            peer_conn = NULL;
            continue;
        }
        DBusMessage *m;
        while (!quit && (m = dbus_connection_pop_message(peer_conn)) != NULL) {
            if (dbus_message_get_type(m) == DBUS_MESSAGE_TYPE_METHOD_CALL &&
                dbus_message_has_path(m, BENCH_PATH) && dbus_message_has_interface(m, BENCH_IFACE)) {
                DBusMessage *reply = NULL;
                reply_to(m, &reply, &quit);
                if (reply) { dbus_connection_send(peer_conn, reply, NULL); dbus_message_unref(reply); }
            }
            dbus_message_unref(m);
        }
    }
    if (peer_conn) {
        dbus_connection_flush(peer_conn);
        dbus_connection_close(peer_conn);
        dbus_connection_unref(peer_conn);
        peer_conn = NULL;
    }
    dbus_server_disconnect(server);
    dbus_server_unref(server);
    return 0;
}

int cdb_echo_peer(const char *address, size_t payload_bytes, int iterations, double *out_us) {
    DBusConnection *c = open_connection(address, 0, 1);
    if (!c) return -1;
    return echo_over(c, NULL, payload_bytes, iterations, out_us);
}

int cdb_quit_peer(const char *address) {
    DBusConnection *c = open_connection(address, 0, 1);
    if (!c) return -1;
    DBusMessage *m = new_call(NULL, "Quit");
    int rc = call_blocking(c, m);
    dbus_message_unref(m);
    close_bus(c);
    return rc;
}

int cdb_available_cpus(int *out, int max) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    int count = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && count < max; cpu++) {
        if (CPU_ISSET(cpu, &set)) out[count++] = cpu;
    }
    return count;
}

int cdb_place_thread(int tid, const int *cpus, int count) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < count; i++) {
        if (cpus[i] >= 0 && cpus[i] < CPU_SETSIZE) CPU_SET(cpus[i], &set);
    }
    return sched_setaffinity(tid, sizeof set, &set);
}
