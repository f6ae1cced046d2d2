// The target exists for its header (see include/CSyncNetwork.h) and for accept4, which glibc declares only
// with _GNU_SOURCE.
#ifdef __linux__
#define _GNU_SOURCE
#include <stddef.h>
#include <sys/socket.h>
#endif
#include "CSyncNetwork.h"

#ifdef __linux__
int csyncnetwork_accept_nonblocking_cloexec(int fd) {
    return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}
#endif
