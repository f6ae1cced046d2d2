// Intentionally empty: the target exists for its header (see include/CSyncNetwork.h).
#include "CSyncNetwork.h"
