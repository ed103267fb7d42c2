/* The part of libwayland-client Ferry's Wayland backend uses, for Swift.
 *
 * The core protocol's `static inline` request wrappers (wl_display_get_registry,
 * wl_registry_bind, wl_display_sync, ...) import as they are. What Swift cannot reach directly
 * is below: interface descriptions are `const struct` globals whose address Swift 6 may not
 * take (it would point at a copy), so C returns them. */
#ifndef FERRY_CWAYLAND_SHIM_H
#define FERRY_CWAYLAND_SHIM_H

#include <wayland-client.h>
#include <errno.h>

/* The address of the wl_seat interface description, for wl_registry_bind. */
static inline const struct wl_interface *cwayland_seat_interface(void) { return &wl_seat_interface; }

/* errno, which Swift's Glibc overlay does not expose as a plain variable. */
static inline int cwayland_errno(void) { return errno; }

#endif
