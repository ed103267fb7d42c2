#ifndef FERRY_CGIO_SHIM_H
#define FERRY_CGIO_SHIM_H
#include <gio/gio.h>
#endif
