// The system zlib (Debian: zlib1g-dev), for DEFLATE and CRC-32: PNG's IDAT and chunk CRCs, the
// CRC of zip entries, dbus-peer's checksum of what it read.
#include <zlib.h>
