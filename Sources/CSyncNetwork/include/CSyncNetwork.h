// System headers the Swift overlays do not expose: epoll on Linux.
#ifndef CSYNCNETWORK_H
#define CSYNCNETWORK_H

#ifdef __linux__
#include <sys/epoll.h>
#endif

#endif
