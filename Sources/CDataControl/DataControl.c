/* One C face over ext-data-control-v1 and zwlr-data-control-unstable-v1 (see CDataControl.h). */
#include "CDataControl.h"

#include <wayland-client.h>

#include "generated/ext-data-control-v1-client-protocol.h"
#include "generated/wlr-data-control-unstable-v1-client-protocol.h"

/* The listener structs are passed to libwayland as arrays of function pointers: both protocols
 * list the events of each interface in the same order, which the generated listeners confirm. */
_Static_assert(sizeof(struct ferry_dc_device_listener) == sizeof(struct ext_data_control_device_v1_listener), "device events");
_Static_assert(sizeof(struct ferry_dc_device_listener) == sizeof(struct zwlr_data_control_device_v1_listener), "device events");
_Static_assert(sizeof(struct ferry_dc_source_listener) == sizeof(struct ext_data_control_source_v1_listener), "source events");
_Static_assert(sizeof(struct ferry_dc_source_listener) == sizeof(struct zwlr_data_control_source_v1_listener), "source events");
_Static_assert(sizeof(struct ferry_dc_offer_listener) == sizeof(struct ext_data_control_offer_v1_listener), "offer events");
_Static_assert(sizeof(struct ferry_dc_offer_listener) == sizeof(struct zwlr_data_control_offer_v1_listener), "offer events");

#define EXT(type, p) ((struct ext_data_control_##type##_v1 *)(p))
#define WLR(type, p) ((struct zwlr_data_control_##type##_v1 *)(p))

const struct wl_interface *ferry_dc_manager_interface(ferry_dc_family family) {
    return family == FERRY_DC_EXT ? &ext_data_control_manager_v1_interface
                                  : &zwlr_data_control_manager_v1_interface;
}

const char *ferry_dc_manager_name(ferry_dc_family family) {
    return family == FERRY_DC_EXT ? ext_data_control_manager_v1_interface.name
                                  : zwlr_data_control_manager_v1_interface.name;
}

uint32_t ferry_dc_manager_max_version(ferry_dc_family family) {
    return family == FERRY_DC_EXT ? 1 : 2;
}

struct wl_proxy *ferry_dc_get_data_device(ferry_dc_family family, struct wl_proxy *manager,
                                          struct wl_proxy *seat) {
    if (family == FERRY_DC_EXT)
        return (struct wl_proxy *)ext_data_control_manager_v1_get_data_device(
            EXT(manager, manager), (struct wl_seat *)seat);
    return (struct wl_proxy *)zwlr_data_control_manager_v1_get_data_device(
        WLR(manager, manager), (struct wl_seat *)seat);
}

struct wl_proxy *ferry_dc_create_data_source(ferry_dc_family family, struct wl_proxy *manager) {
    if (family == FERRY_DC_EXT)
        return (struct wl_proxy *)ext_data_control_manager_v1_create_data_source(EXT(manager, manager));
    return (struct wl_proxy *)zwlr_data_control_manager_v1_create_data_source(WLR(manager, manager));
}

void ferry_dc_manager_destroy(ferry_dc_family family, struct wl_proxy *manager) {
    if (family == FERRY_DC_EXT) ext_data_control_manager_v1_destroy(EXT(manager, manager));
    else zwlr_data_control_manager_v1_destroy(WLR(manager, manager));
}

int ferry_dc_device_add_listener(struct wl_proxy *device,
                                 const struct ferry_dc_device_listener *listener, void *data) {
    return wl_proxy_add_listener(device, (void (**)(void))listener, data);
}

void ferry_dc_device_set_selection(ferry_dc_family family, struct wl_proxy *device,
                                   struct wl_proxy *source) {
    if (family == FERRY_DC_EXT)
        ext_data_control_device_v1_set_selection(EXT(device, device), EXT(source, source));
    else zwlr_data_control_device_v1_set_selection(WLR(device, device), WLR(source, source));
}

void ferry_dc_device_set_primary_selection(ferry_dc_family family, struct wl_proxy *device,
                                           struct wl_proxy *source) {
    if (family == FERRY_DC_EXT)
        ext_data_control_device_v1_set_primary_selection(EXT(device, device), EXT(source, source));
    else zwlr_data_control_device_v1_set_primary_selection(WLR(device, device), WLR(source, source));
}

void ferry_dc_device_destroy(ferry_dc_family family, struct wl_proxy *device) {
    if (family == FERRY_DC_EXT) ext_data_control_device_v1_destroy(EXT(device, device));
    else zwlr_data_control_device_v1_destroy(WLR(device, device));
}

int ferry_dc_source_add_listener(struct wl_proxy *source,
                                 const struct ferry_dc_source_listener *listener, void *data) {
    return wl_proxy_add_listener(source, (void (**)(void))listener, data);
}

void ferry_dc_source_offer(ferry_dc_family family, struct wl_proxy *source, const char *mime_type) {
    if (family == FERRY_DC_EXT) ext_data_control_source_v1_offer(EXT(source, source), mime_type);
    else zwlr_data_control_source_v1_offer(WLR(source, source), mime_type);
}

void ferry_dc_source_destroy(ferry_dc_family family, struct wl_proxy *source) {
    if (family == FERRY_DC_EXT) ext_data_control_source_v1_destroy(EXT(source, source));
    else zwlr_data_control_source_v1_destroy(WLR(source, source));
}

int ferry_dc_offer_add_listener(struct wl_proxy *offer,
                                const struct ferry_dc_offer_listener *listener, void *data) {
    return wl_proxy_add_listener(offer, (void (**)(void))listener, data);
}

void ferry_dc_offer_receive(ferry_dc_family family, struct wl_proxy *offer, const char *mime_type,
                            int32_t fd) {
    if (family == FERRY_DC_EXT) ext_data_control_offer_v1_receive(EXT(offer, offer), mime_type, fd);
    else zwlr_data_control_offer_v1_receive(WLR(offer, offer), mime_type, fd);
}

void ferry_dc_offer_destroy(ferry_dc_family family, struct wl_proxy *offer) {
    if (family == FERRY_DC_EXT) ext_data_control_offer_v1_destroy(EXT(offer, offer));
    else zwlr_data_control_offer_v1_destroy(WLR(offer, offer));
}
