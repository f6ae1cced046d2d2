// System headers the Swift overlays do not expose: epoll on Linux.
#ifndef CSYNCNETWORK_H
#define CSYNCNETWORK_H

#ifdef __linux__
#include <sys/epoll.h>

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC: glibc declares it only with _GNU_SOURCE.
int csyncnetwork_accept_nonblocking_cloexec(int fd);
#endif

#endif
