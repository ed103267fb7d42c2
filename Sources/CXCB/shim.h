#ifndef FERRY_CXCB_SHIM_H
#define FERRY_CXCB_SHIM_H
/*
 * The only C the X11Clipboard module sees: libxcb and its XFixes extension, xcbext.h's socket
 * handover (a property's bytes sent from a file with sendfile), plus what Swift
 * cannot reach by itself. `xcb_xfixes_id` is a mutable C global (Swift 6 refuses its address),
 * xcb_send_event wants 32 bytes where the event structs are 24, and a few macros and glibc calls
 * are not imported.
 */
#include <xcb/xcb.h>
#include <xcb/xfixes.h>
#include <xcb/xcbext.h>
#include <sys/sendfile.h>
#include <fcntl.h>
#include <unistd.h>
#include <errno.h>
#include <sys/ioctl.h>

/* Event codes and values as plain integers (the enums import as wrapper structs). */
static const uint8_t CXCB_PROPERTY_NOTIFY = XCB_PROPERTY_NOTIFY;
static const uint8_t CXCB_SELECTION_CLEAR = XCB_SELECTION_CLEAR;
static const uint8_t CXCB_SELECTION_REQUEST = XCB_SELECTION_REQUEST;
static const uint8_t CXCB_SELECTION_NOTIFY = XCB_SELECTION_NOTIFY;
static const uint8_t CXCB_PROPERTY_NEW_VALUE = XCB_PROPERTY_NEW_VALUE;
static const uint8_t CXCB_PROPERTY_DELETE = XCB_PROPERTY_DELETE;
static const uint32_t CXCB_EVENT_MASK_PROPERTY_CHANGE = XCB_EVENT_MASK_PROPERTY_CHANGE;
static const uint32_t CXCB_EVENT_MASK_NO_EVENT = XCB_EVENT_MASK_NO_EVENT;
static const uint32_t CXCB_CW_EVENT_MASK = XCB_CW_EVENT_MASK;
static const uint16_t CXCB_WINDOW_CLASS_INPUT_ONLY = XCB_WINDOW_CLASS_INPUT_ONLY;
static const uint8_t CXCB_PROP_MODE_REPLACE = XCB_PROP_MODE_REPLACE;
static const uint8_t CXCB_PROP_MODE_APPEND = XCB_PROP_MODE_APPEND;
static const uint32_t CXCB_ATOM_NONE = XCB_ATOM_NONE;
static const uint32_t CXCB_ATOM_ANY = XCB_GET_PROPERTY_TYPE_ANY;
static const uint32_t CXCB_ATOM_ATOM = XCB_ATOM_ATOM;
static const uint32_t CXCB_ATOM_INTEGER = XCB_ATOM_INTEGER;
static const uint32_t CXCB_ATOM_PRIMARY = XCB_ATOM_PRIMARY;
static const uint32_t CXCB_CURRENT_TIME = XCB_CURRENT_TIME;
static const uint32_t CXCB_XFIXES_WATCH_MASK =
    XCB_XFIXES_SELECTION_EVENT_MASK_SET_SELECTION_OWNER |
    XCB_XFIXES_SELECTION_EVENT_MASK_SELECTION_WINDOW_DESTROY |
    XCB_XFIXES_SELECTION_EVENT_MASK_SELECTION_CLIENT_CLOSE;

/* The XFixes extension's data (present, first_event), or NULL. */
static inline const xcb_query_extension_reply_t *cxcb_xfixes_data(xcb_connection_t *c) {
    return xcb_get_extension_data(c, &xcb_xfixes_id);
}

/* Sends a SelectionNotify to `requestor` (property None refuses), padded to the 32 bytes
 * xcb_send_event copies. */
static inline void cxcb_send_selection_notify(xcb_connection_t *c, xcb_window_t requestor,
                                              xcb_atom_t selection, xcb_atom_t target,
                                              xcb_atom_t property, xcb_timestamp_t time) {
    union { xcb_selection_notify_event_t event; char bytes[32]; } e = {0};
    e.event.response_type = XCB_SELECTION_NOTIFY;
    e.event.time = time;
    e.event.requestor = requestor;
    e.event.selection = selection;
    e.event.target = target;
    e.event.property = property;
    xcb_send_event(c, 0, requestor, XCB_EVENT_MASK_NO_EVENT, e.bytes);
}

/* pipe2(fds, O_CLOEXEC) and the non-blocking flag: fcntl is variadic in Swift. pipe2 and
 * F_SETPIPE_SZ are GNU extensions; they are declared here rather than by defining _GNU_SOURCE,
 * which would change glibc's own declarations (fd_set) under Swift's Glibc module and break any
 * module that imports both. */
extern int pipe2(int fds[2], int flags);
#define CXCB_F_SETPIPE_SZ 1031
static inline int cxcb_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
static inline int cxcb_set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}
/* A larger pipe means fewer wake-ups per megabyte; failure (a limit) is harmless. */
static inline int cxcb_set_pipe_size(int fd, int size) { return fcntl(fd, CXCB_F_SETPIPE_SZ, size); }
static inline int cxcb_errno(void) { return errno; }
/* sendfile(2) under a name of its own, so that Swift never sees two declarations of it. */
static inline ssize_t cxcb_sendfile(int out, int in, off_t *offset, size_t count) {
    return sendfile(out, in, offset, count);
}
/* How many bytes wait unread in a pipe (FIONREAD; ioctl is variadic in Swift); -1 on failure. */
static inline int cxcb_bytes_waiting(int fd) {
    int n = 0;
    return ioctl(fd, FIONREAD, &n) == 0 ? n : -1;
}

#endif
