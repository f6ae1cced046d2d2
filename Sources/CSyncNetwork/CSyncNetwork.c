// The target exists for its header (see include/CSyncNetwork.h) and for accept4 and pipe2, which glibc
// declares only with _GNU_SOURCE.
#ifdef __linux__
#define _GNU_SOURCE
#include <stddef.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#endif
#include "CSyncNetwork.h"

#ifdef __linux__
int csyncnetwork_accept_nonblocking_cloexec(int fd) {
    return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int csyncnetwork_pipe_nonblocking_cloexec(int ends[2]) {
    return pipe2(ends, O_NONBLOCK | O_CLOEXEC);
}
#endif
