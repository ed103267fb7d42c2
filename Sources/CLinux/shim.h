// Linux headers that Swift's Glibc module leaves out: <sys/vfs.h> for statfs(2), which tells a
// file system's type (PathWatch watches only local ones).
#include <sys/vfs.h>
