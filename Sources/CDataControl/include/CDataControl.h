/* Wayland data-control for Ferry: one C face over its two protocol families.
 *
 * ext-data-control-v1 (wayland-protocols staging) and zwlr-data-control-unstable-v1 have the same
 * four interfaces, requests and events under two names. Each function takes the family and calls
 * the wayland-scanner wrapper of that family (generated/, committed), so Swift has one
 * implementation for both. Every object is a `struct wl_proxy *` here; the listener structs have
 * the event order both protocols share. */
#ifndef FERRY_CDATACONTROL_H
#define FERRY_CDATACONTROL_H

#include <stdint.h>

struct wl_proxy;
struct wl_interface;

/* The two protocol families. */
typedef enum ferry_dc_family {
    FERRY_DC_EXT = 0, /* ext_data_control_*_v1, version 1: PRIMARY included */
    FERRY_DC_WLR = 1, /* zwlr_data_control_*_v1, version 2 has PRIMARY, version 1 has not */
} ferry_dc_family;

/* The manager's interface description (for wl_registry_bind), its global's name as the registry
 * announces it, and the highest version this code speaks. */
const struct wl_interface *ferry_dc_manager_interface(ferry_dc_family family);
const char *ferry_dc_manager_name(ferry_dc_family family);
uint32_t ferry_dc_manager_max_version(ferry_dc_family family);

/* Device events: data_offer (opcode 0), selection (1), finished (2), primary_selection (3). */
struct ferry_dc_device_listener {
    void (*data_offer)(void *data, struct wl_proxy *device, struct wl_proxy *offer);
    void (*selection)(void *data, struct wl_proxy *device, struct wl_proxy *offer);
    void (*finished)(void *data, struct wl_proxy *device);
    void (*primary_selection)(void *data, struct wl_proxy *device, struct wl_proxy *offer);
};

/* Source events: send (0), cancelled (1). */
struct ferry_dc_source_listener {
    void (*send)(void *data, struct wl_proxy *source, const char *mime_type, int32_t fd);
    void (*cancelled)(void *data, struct wl_proxy *source);
};

/* Offer events: offer (0). */
struct ferry_dc_offer_listener {
    void (*offer)(void *data, struct wl_proxy *offer, const char *mime_type);
};

/* Manager requests. */
struct wl_proxy *ferry_dc_get_data_device(ferry_dc_family family, struct wl_proxy *manager,
                                          struct wl_proxy *seat);
struct wl_proxy *ferry_dc_create_data_source(ferry_dc_family family, struct wl_proxy *manager);
void ferry_dc_manager_destroy(ferry_dc_family family, struct wl_proxy *manager);

/* Device requests; `source` may be NULL (clears the selection). */
int ferry_dc_device_add_listener(struct wl_proxy *device,
                                 const struct ferry_dc_device_listener *listener, void *data);
void ferry_dc_device_set_selection(ferry_dc_family family, struct wl_proxy *device,
                                   struct wl_proxy *source);
void ferry_dc_device_set_primary_selection(ferry_dc_family family, struct wl_proxy *device,
                                           struct wl_proxy *source);
void ferry_dc_device_destroy(ferry_dc_family family, struct wl_proxy *device);

/* Source requests. */
int ferry_dc_source_add_listener(struct wl_proxy *source,
                                 const struct ferry_dc_source_listener *listener, void *data);
void ferry_dc_source_offer(ferry_dc_family family, struct wl_proxy *source, const char *mime_type);
void ferry_dc_source_destroy(ferry_dc_family family, struct wl_proxy *source);

/* Offer requests. */
int ferry_dc_offer_add_listener(struct wl_proxy *offer,
                                const struct ferry_dc_offer_listener *listener, void *data);
void ferry_dc_offer_receive(ferry_dc_family family, struct wl_proxy *offer, const char *mime_type,
                            int32_t fd);
void ferry_dc_offer_destroy(ferry_dc_family family, struct wl_proxy *offer);

#endif
