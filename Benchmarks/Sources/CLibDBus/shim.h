#ifndef FERRY_BENCH_CLIBDBUS_SHIM_H
#define FERRY_BENCH_CLIBDBUS_SHIM_H
/* libdbus-1 for the C anchor (CDBusBench), which includes <dbus/dbus.h> itself. The root package
 * keeps its CDBus internal; this target gives the C anchor libdbus's include path and link flag. */
#include <dbus/dbus.h>
#endif
