#ifndef FERRY_CDBUS_SHIM_H
#define FERRY_CDBUS_SHIM_H
/*
 * The only C the Ferry DBus module sees. Swift cannot import function-like or cast macros
 * (DBUS_TYPE_STRING is ((int) 's')), variadic functions, or a few glibc functions; this header
 * re-exports them as prefixed constants and static inline helpers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dbus/dbus.h>
#include <sys/syscall.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <errno.h>
#include <malloc.h>

/* Type codes. */
static const int CDBUS_TYPE_INVALID = DBUS_TYPE_INVALID;
static const int CDBUS_TYPE_BYTE = DBUS_TYPE_BYTE;
static const int CDBUS_TYPE_BOOLEAN = DBUS_TYPE_BOOLEAN;
static const int CDBUS_TYPE_INT16 = DBUS_TYPE_INT16;
static const int CDBUS_TYPE_UINT16 = DBUS_TYPE_UINT16;
static const int CDBUS_TYPE_INT32 = DBUS_TYPE_INT32;
static const int CDBUS_TYPE_UINT32 = DBUS_TYPE_UINT32;
static const int CDBUS_TYPE_INT64 = DBUS_TYPE_INT64;
static const int CDBUS_TYPE_UINT64 = DBUS_TYPE_UINT64;
static const int CDBUS_TYPE_DOUBLE = DBUS_TYPE_DOUBLE;
static const int CDBUS_TYPE_STRING = DBUS_TYPE_STRING;
static const int CDBUS_TYPE_OBJECT_PATH = DBUS_TYPE_OBJECT_PATH;
static const int CDBUS_TYPE_SIGNATURE = DBUS_TYPE_SIGNATURE;
static const int CDBUS_TYPE_UNIX_FD = DBUS_TYPE_UNIX_FD;
static const int CDBUS_TYPE_ARRAY = DBUS_TYPE_ARRAY;
static const int CDBUS_TYPE_VARIANT = DBUS_TYPE_VARIANT;
static const int CDBUS_TYPE_STRUCT = DBUS_TYPE_STRUCT;
static const int CDBUS_TYPE_DICT_ENTRY = DBUS_TYPE_DICT_ENTRY;
static const int CDBUS_STRUCT_BEGIN_CHAR = DBUS_STRUCT_BEGIN_CHAR;
static const int CDBUS_STRUCT_END_CHAR = DBUS_STRUCT_END_CHAR;
static const int CDBUS_DICT_ENTRY_BEGIN_CHAR = DBUS_DICT_ENTRY_BEGIN_CHAR;
static const int CDBUS_DICT_ENTRY_END_CHAR = DBUS_DICT_ENTRY_END_CHAR;

/* Message types. */
static const int CDBUS_MESSAGE_TYPE_INVALID = DBUS_MESSAGE_TYPE_INVALID;
static const int CDBUS_MESSAGE_TYPE_METHOD_CALL = DBUS_MESSAGE_TYPE_METHOD_CALL;
static const int CDBUS_MESSAGE_TYPE_METHOD_RETURN = DBUS_MESSAGE_TYPE_METHOD_RETURN;
static const int CDBUS_MESSAGE_TYPE_ERROR = DBUS_MESSAGE_TYPE_ERROR;
static const int CDBUS_MESSAGE_TYPE_SIGNAL = DBUS_MESSAGE_TYPE_SIGNAL;

/* RequestName flags and replies. */
static const unsigned int CDBUS_NAME_FLAG_ALLOW_REPLACEMENT = DBUS_NAME_FLAG_ALLOW_REPLACEMENT;
static const unsigned int CDBUS_NAME_FLAG_REPLACE_EXISTING = DBUS_NAME_FLAG_REPLACE_EXISTING;
static const unsigned int CDBUS_NAME_FLAG_DO_NOT_QUEUE = DBUS_NAME_FLAG_DO_NOT_QUEUE;
static const int CDBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER = DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER;
static const int CDBUS_REQUEST_NAME_REPLY_IN_QUEUE = DBUS_REQUEST_NAME_REPLY_IN_QUEUE;
static const int CDBUS_REQUEST_NAME_REPLY_EXISTS = DBUS_REQUEST_NAME_REPLY_EXISTS;
static const int CDBUS_REQUEST_NAME_REPLY_ALREADY_OWNER = DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER;
static const int CDBUS_RELEASE_NAME_REPLY_RELEASED = DBUS_RELEASE_NAME_REPLY_RELEASED;
static const int CDBUS_RELEASE_NAME_REPLY_NON_EXISTENT = DBUS_RELEASE_NAME_REPLY_NON_EXISTENT;
static const int CDBUS_RELEASE_NAME_REPLY_NOT_OWNER = DBUS_RELEASE_NAME_REPLY_NOT_OWNER;

/* Watches, dispatch status, timeouts (as plain unsigned/int so Swift needs no .rawValue). */
static const unsigned int CDBUS_WATCH_READABLE = DBUS_WATCH_READABLE;
static const unsigned int CDBUS_WATCH_WRITABLE = DBUS_WATCH_WRITABLE;
static const unsigned int CDBUS_WATCH_ERROR = DBUS_WATCH_ERROR;
static const unsigned int CDBUS_WATCH_HANGUP = DBUS_WATCH_HANGUP;
static const int CDBUS_DISPATCH_DATA_REMAINS = DBUS_DISPATCH_DATA_REMAINS;
static const int CDBUS_DISPATCH_COMPLETE = DBUS_DISPATCH_COMPLETE;
static const int CDBUS_DISPATCH_NEED_MEMORY = DBUS_DISPATCH_NEED_MEMORY;
static const int CDBUS_TIMEOUT_USE_DEFAULT = DBUS_TIMEOUT_USE_DEFAULT;
static const int CDBUS_TIMEOUT_INFINITE = DBUS_TIMEOUT_INFINITE;
static const int CDBUS_HANDLER_RESULT_HANDLED = DBUS_HANDLER_RESULT_HANDLED;
static const int CDBUS_HANDLER_RESULT_NOT_YET_HANDLED = DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
static const int CDBUS_HANDLER_RESULT_NEED_MEMORY = DBUS_HANDLER_RESULT_NEED_MEMORY;

/* Limits. */
static const long CDBUS_MAXIMUM_NAME_LENGTH = DBUS_MAXIMUM_NAME_LENGTH;
static const long CDBUS_MAXIMUM_SIGNATURE_LENGTH = DBUS_MAXIMUM_SIGNATURE_LENGTH;
static const long CDBUS_MAXIMUM_ARRAY_LENGTH = DBUS_MAXIMUM_ARRAY_LENGTH;
static const long CDBUS_MAXIMUM_MESSAGE_LENGTH = DBUS_MAXIMUM_MESSAGE_LENGTH;
static const long CDBUS_MAXIMUM_MESSAGE_UNIX_FDS = DBUS_MAXIMUM_MESSAGE_UNIX_FDS;
static const long CDBUS_MAXIMUM_TYPE_RECURSION_DEPTH = DBUS_MAXIMUM_TYPE_RECURSION_DEPTH;

/* A DBusError ready for use (the DBUS_ERROR_INIT equivalent). */
static inline DBusError cdbus_error_init(void) {
    DBusError e;
    dbus_error_init(&e);
    return e;
}

/* glibc functions Swift's Glibc module does not show. Each returns -1 and sets errno on failure. */
static const unsigned int CDBUS_MFD_CLOEXEC = 0x0001U;
static const unsigned int CDBUS_MFD_ALLOW_SEALING = 0x0002U;
static const int CDBUS_F_ADD_SEALS = 1033;
static const int CDBUS_F_GET_SEALS = 1034;
static const int CDBUS_F_SEAL_SEAL = 0x0001;
static const int CDBUS_F_SEAL_SHRINK = 0x0002;
static const int CDBUS_F_SEAL_GROW = 0x0004;
static const int CDBUS_F_SEAL_WRITE = 0x0008;
static const int CDBUS_F_SETPIPE_SZ = 1031;
static const int CDBUS_F_GETPIPE_SZ = 1032;

/* memfd with MFD_CLOEXEC | MFD_ALLOW_SEALING. */
static inline int cdbus_memfd_create(const char *name) {
    return (int)syscall(SYS_memfd_create, name, CDBUS_MFD_CLOEXEC | CDBUS_MFD_ALLOW_SEALING);
}
static inline int cdbus_add_seals(int fd, int seals) { return fcntl(fd, CDBUS_F_ADD_SEALS, seals); }
static inline int cdbus_get_seals(int fd) { return fcntl(fd, CDBUS_F_GET_SEALS); }
/* pipe2(fds, O_CLOEXEC). */
static inline int cdbus_pipe_cloexec(int fds[2]) { return (int)syscall(SYS_pipe2, fds, O_CLOEXEC); }
/* eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK). */
static inline int cdbus_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
static inline int cdbus_set_pipe_size(int fd, int size) { return fcntl(fd, CDBUS_F_SETPIPE_SZ, size); }
static inline int cdbus_get_pipe_size(int fd) { return fcntl(fd, CDBUS_F_GETPIPE_SZ); }
/* ioctl(fd, FIONREAD): the bytes a pipe or socket holds unread; -1 on failure. ioctl is variadic. */
static inline int cdbus_bytes_unread(int fd) { int n = 0; return ioctl(fd, FIONREAD, &n) == 0 ? n : -1; }
/* fcntl(fd, F_DUPFD_CLOEXEC, 0): fcntl is variadic in Swift. */
static inline int cdbus_dup_cloexec(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 0); }
static inline int cdbus_errno(void) { return errno; }
/* The kernel's credentials of a unix socket's peer (SO_PEERCRED: uid and pid when it connected).
 * Linux's struct ucred, SOL_SOCKET and SO_PEERCRED are spelled out rather than taken from
 * <sys/socket.h>: under this header's _GNU_SOURCE that would define fd_set differently from
 * SwiftGlibc, and Clang refuses a module that sees both. getsockopt's declaration is glibc's. */
struct cdbus_ucred { int pid; unsigned int uid; unsigned int gid; };
extern int getsockopt(int fd, int level, int name, void *__restrict value, unsigned int *__restrict length);
static inline int cdbus_peer_credentials(int fd, unsigned int *uid, int *pid) {
    struct cdbus_ucred cred;
    unsigned int length = sizeof cred;
    if (getsockopt(fd, 1 /* SOL_SOCKET */, 17 /* SO_PEERCRED */, &cred, &length) != 0) return -1;
    *uid = cred.uid;
    *pid = cred.pid;
    return 0;
}

/* accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), which Swift's Glibc does not show. */
static inline int cdbus_accept_nonblocking(int fd) {
    return (int)syscall(SYS_accept4, fd, 0, 0, 02000000 /* SOCK_CLOEXEC */ | 04000 /* SOCK_NONBLOCK */);
}
/* Unix-socket I/O with fds (SCM_RIGHTS) for the peer-to-peer transport written in Swift. Linux's
 * struct msghdr and cmsghdr (64-bit layout) are spelled out, and sendmsg and recvmsg made through
 * syscall(), for the same reason as struct ucred above. */
struct cdbus_iovec { void *base; unsigned long length; };
struct cdbus_msghdr {
    void *name; unsigned int name_length; struct cdbus_iovec *iov; unsigned long iov_count;
    void *control; unsigned long control_length; int flags;
};
struct cdbus_cmsghdr { unsigned long length; int level; int type; };
/* The kernel passes at most this many fds in one message (SCM_MAX_FD). */
static const int CDBUS_MAXIMUM_PASSED_FDS = 253;
/* Sends `length` bytes and, when `count` > 0, the `count` fds with them; never blocks and never
 * raises SIGPIPE. Returns the bytes sent, or -1 and errno. */
static inline long cdbus_send_with_fds(int fd, const void *data, unsigned long length, const int *fds, int count) {
    struct cdbus_iovec iov = { (void *)data, length };
    union { struct cdbus_cmsghdr header; unsigned char bytes[16 + 4 * 253 + 8]; } control;
    struct cdbus_msghdr msg = { 0, 0, &iov, 1, 0, 0, 0 };
    if (count > 0) {
        if (count > CDBUS_MAXIMUM_PASSED_FDS) { errno = EINVAL; return -1; }
        control.header.length = 16 + 4 * (unsigned long)count;
        control.header.level = 1;  /* SOL_SOCKET */
        control.header.type = 1;   /* SCM_RIGHTS */
        for (int i = 0; i < count; i++) ((int *)(control.bytes + 16))[i] = fds[i];
        msg.control = control.bytes;
        msg.control_length = (control.header.length + 7) & ~7UL;
    }
    return syscall(SYS_sendmsg, fd, &msg, 0x40 /* MSG_DONTWAIT */ | 0x4000 /* MSG_NOSIGNAL */);
}
/* Receives up to `capacity` bytes without blocking, and the fds that came with them (made
 * close-on-exec) into `fds` (room for CDBUS_MAXIMUM_PASSED_FDS), their number in *received.
 * *truncated is set when the kernel had more fds than fit (they are closed, and lost). Returns
 * the bytes read (0 at end of stream), or -1 and errno. */
static inline long cdbus_receive_with_fds(int fd, void *data, unsigned long capacity, int *fds, int *received,
                                          int *truncated) {
    struct cdbus_iovec iov = { data, capacity };
    union { struct cdbus_cmsghdr header; unsigned char bytes[16 + 4 * 253 + 8]; } control;
    struct cdbus_msghdr msg = { 0, 0, &iov, 1, control.bytes, sizeof control.bytes, 0 };
    *received = 0;
    *truncated = 0;
    long n = syscall(SYS_recvmsg, fd, &msg, 0x40 /* MSG_DONTWAIT */ | 0x40000000 /* MSG_CMSG_CLOEXEC */);
    if (n < 0) return n;
    if (msg.flags & 0x8 /* MSG_CTRUNC */) *truncated = 1;
    unsigned long offset = 0;
    while (offset + 16 <= msg.control_length) {
        struct cdbus_cmsghdr *header = (struct cdbus_cmsghdr *)(control.bytes + offset);
        if (header->length < 16 || offset + header->length > msg.control_length) break;
        if (header->level == 1 && header->type == 1) {
            int count = (int)((header->length - 16) / 4);
            for (int i = 0; i < count; i++) {
                int passed = ((int *)((unsigned char *)header + 16))[i];
                if (*received < CDBUS_MAXIMUM_PASSED_FDS) fds[(*received)++] = passed;
                else { close(passed); *truncated = 1; }
            }
        }
        offset += (header->length + 7) & ~7UL;
    }
    return n;
}

/* Gives memory that malloc holds free back to the system (glibc keeps large freed buffers). */
static inline int cdbus_malloc_trim(void) { return malloc_trim(0); }
/* Makes every allocation of at least `bytes` a mapping of its own, returned to the system when
 * freed (glibc otherwise raises this threshold as large buffers are freed, and keeps them). */
static inline int cdbus_malloc_set_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }
/* Lets each heap keep up to `bytes` free at its top before giving them back to the system. */
static inline int cdbus_malloc_set_trim_threshold(int bytes) { return mallopt(M_TRIM_THRESHOLD, bytes); }

#endif
