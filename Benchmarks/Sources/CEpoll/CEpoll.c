// Header-only: see include/CEpoll.h.
#include "CEpoll.h"
