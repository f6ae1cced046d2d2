// epoll for the side-by-side ping client (`network`): Glibc's Swift module does not include sys/epoll.h.
#ifdef __linux__
#include <sys/epoll.h>
#endif
