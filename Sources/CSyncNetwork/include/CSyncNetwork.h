// System headers the Swift overlays do not expose: epoll on Linux.
#ifndef CSYNCNETWORK_H
#define CSYNCNETWORK_H

#ifdef __linux__
#include <sys/epoll.h>

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC: glibc declares it only with _GNU_SOURCE.
int csyncnetwork_accept_nonblocking_cloexec(int fd);

/// pipe2(2) with O_NONBLOCK | O_CLOEXEC, for the same reason: no child started meanwhile by another thread
/// inherits the pipe.
int csyncnetwork_pipe_nonblocking_cloexec(int ends[2]);
#endif

#endif
